"""Hook points: where adtrace patches autograd, why there, and the thin wrappers it puts there.

Every wrapper calls autograd's original with the same arguments and returns its result unchanged;
it only tells the recorders active *on the calling thread* what happened. With no recorder active
on a thread (another thread, or after the last ``record()`` on this one ended) a wrapper is a plain
pass-through. A recorder that fails inside a callback is switched off (``Recorder.fail``), never
the traced program.
"""

from dataclasses import dataclass
from typing import Callable

import autograd.core as core

from .forward_wrappers import wrap_jvp_initialize_root, wrap_jvp_node_init
from .reverse_wrappers import recorded_local_vjp, wrap_add_outgrads, wrap_backward_pass, wrap_toposort, wrap_trace, wrap_vjp_initialize_root, wrap_vjp_node_init
from .state import state

__all__ = ["HOOK_POINTS", "HookPoint", "install", "is_patched", "recorded_local_vjp", "state"]


@dataclass(frozen=True)
class HookPoint:
    owner: object
    attribute: str
    wrap: Callable
    reason: str

    @property
    def name(self):
        owner = getattr(self.owner, "__qualname__", None) or self.owner.__name__
        return f"{owner}.{self.attribute}"


HOOK_POINTS = (
    HookPoint(core, "add_outgrads", wrap_add_outgrads,
              "backward_pass and sum_outgrads read this global of autograd.core at call time"),
    HookPoint(core, "toposort", wrap_toposort,
              "backward_pass reads autograd.core.toposort; the definition in autograd.util is not seen"),
    HookPoint(core, "backward_pass", wrap_backward_pass,
              "make_vjp's vjp closure calls the global autograd.core.backward_pass"),
    HookPoint(core, "trace", wrap_trace,
              "make_vjp and make_jvp call autograd.core.trace: the input, the end node, or none"),
    HookPoint(core.VJPNode, "__init__", wrap_vjp_node_init,
              "wrapped in place: notrace_primitives is keyed by the exact node type, so no subclass"),
    HookPoint(core.VJPNode, "initialize_root", wrap_vjp_initialize_root,
              "Node.new_root builds the root without __init__"),
    HookPoint(core.JVPNode, "__init__", wrap_jvp_node_init,
              "forward mode: the node's tangent, and the sum_outgrads calls made while building it"),
    HookPoint(core.JVPNode, "initialize_root", wrap_jvp_initialize_root,
              "forward mode: JVPNode.new_root(g) seeds the input tangent without __init__"),
)


def install(patcher):
    """Patch every hook point (the patcher undoes them, newest first)."""
    for point in HOOK_POINTS:
        original = vars(point.owner)[point.attribute]
        patcher.setattr(point.owner, point.attribute, point.wrap(original))


def is_patched(point):
    return hasattr(vars(point.owner).get(point.attribute), "__wrapped__")

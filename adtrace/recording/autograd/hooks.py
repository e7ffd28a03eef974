"""Hook points: where adtrace patches autograd, why there, and what each one records.

One table, ``HOOK_POINTS``: the binding site (the owner and attribute autograd's own code reads at
call time), the wrapper put there, the reason, the event kinds the hook produces, and where the
hooked function is defined (what drift fingerprints). ``RELIED_ON`` lists the functions adtrace
does not patch but whose behaviour the recorder's bookkeeping assumes. The self-test's
expectations and drift's watched functions are read from these two tables.
"""

from contextvars import ContextVar
from dataclasses import dataclass
from typing import Callable

import autograd.core as core

from .forward_wrappers import wrap_jvp_initialize_root, wrap_jvp_node_init
from .reverse_wrappers import (recorded_local_vjp, wrap_add_outgrads, wrap_backward_pass, wrap_toposort,
                               wrap_trace, wrap_vjp_initialize_root, wrap_vjp_node_init)

__all__ = ["HOOK_POINTS", "RELIED_ON", "HookPoint", "install", "is_patched", "recorded_local_vjp", "original_of"]


@dataclass(frozen=True)
class HookPoint:
    owner: object
    attribute: str
    wrap: Callable
    reason: str
    events: tuple  # the event kinds this hook point alone produces
    defined: str  # "module:qualname" of the hooked function's definition (drift fingerprints it)

    @property
    def name(self):
        owner = getattr(self.owner, "__qualname__", None) or self.owner.__name__
        return f"{owner}.{self.attribute}"


HOOK_POINTS = (
    HookPoint(core, "add_outgrads", wrap_add_outgrads,
              "backward_pass and sum_outgrads read this global of autograd.core at call time",
              ("add_outgrads",), "autograd.core:add_outgrads"),
    HookPoint(core, "toposort", wrap_toposort,
              "backward_pass reads autograd.core.toposort; the definition in autograd.util is not seen",
              ("toposort",), "autograd.util:toposort"),
    HookPoint(core, "backward_pass", wrap_backward_pass,
              "make_vjp's vjp closure calls the global autograd.core.backward_pass",
              ("backward_start", "backward_end"), "autograd.core:backward_pass"),
    HookPoint(core, "trace", wrap_trace,
              "make_vjp and make_jvp call autograd.core.trace: the input, the end node, or none",
              ("trace",), "autograd.tracer:trace"),
    HookPoint(core.VJPNode, "__init__", wrap_vjp_node_init,
              "wrapped in place: notrace_primitives is keyed by the exact node type, so no subclass",
              ("node", "vjp"), "autograd.core:VJPNode.__init__"),
    HookPoint(core.VJPNode, "initialize_root", wrap_vjp_initialize_root,
              "Node.new_root builds the root without __init__",
              ("root",), "autograd.core:VJPNode.initialize_root"),
    HookPoint(core.JVPNode, "__init__", wrap_jvp_node_init,
              "forward mode: the node's tangent, and the sum_outgrads calls made while building it",
              ("jvp_node",), "autograd.core:JVPNode.__init__"),
    HookPoint(core.JVPNode, "initialize_root", wrap_jvp_initialize_root,
              "forward mode: JVPNode.new_root(g) seeds the input tangent without __init__",
              ("jvp_root",), "autograd.core:JVPNode.initialize_root"),
)

# (module:qualname, why): functions not patched whose behaviour the recorder relies on
RELIED_ON = (
    ("autograd.core:make_vjp", "calls trace and backward_pass through the hooked globals"),
    ("autograd.core:make_jvp", "calls trace through the hooked global"),
    ("autograd.core:sum_outgrads", "forward mode's add_outgrads calls, one per argument"),
    ("autograd.core:defvjp", "generator VJPs for three or more arguments"),
    ("autograd.core:defjvp", "its JVP maker returns sum_outgrads(...): a tangent is the last sum"),
    ("autograd.core:defjvp_argnum", "the same, for def_linear's primitives"),
)


def install(patcher):
    """Patch every hook point, all or none (the patcher undoes them, newest first), and return the
    context variable the new wrappers read: the session sets it, in each context that records, to
    what they call. Each installation has its own, so a stale wrapper of an earlier one (kept by
    someone, or put back by their undo, e.g. pytest's monkeypatch) never records again. A wrapper
    of ours found in place is not wrapped: the original behind it is, and is what undo restores."""
    active = ContextVar("adtrace_autograd_recorder", default=None)
    with patcher.transaction():
        for point in HOOK_POINTS:
            original = original_of(vars(point.owner)[point.attribute])
            wrapper = point.wrap(original, active)
            wrapper.__adtrace_hook__ = point.name
            patcher.setattr(point.owner, point.attribute, wrapper, restore=original)
    return active


def original_of(function):
    """``function`` with every adtrace wrapper around it taken off."""
    while hasattr(function, "__adtrace_hook__"):
        function = function.__wrapped__
    return function


def is_patched(point):
    """Whether an adtrace wrapper is installed at ``point`` now."""
    return hasattr(vars(point.owner).get(point.attribute), "__adtrace_hook__")

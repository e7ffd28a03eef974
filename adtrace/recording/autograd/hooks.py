"""Hook points: where adtrace patches autograd, why there, what each one records, and the
callbacks the wrappers make to the recorder.

One table, ``HOOK_POINTS``: the binding site (the owner and attribute autograd's own code reads at
call time), the wrapper put there (``wrappers.py``), the reason, the event kinds the hook produces,
and where the hooked function is defined (what drift fingerprints). ``RELIED_ON`` lists the
functions adtrace does not patch but whose behaviour the recorder's bookkeeping assumes. The
self-test's expectations and drift's watched functions are read from these two tables.
``Callbacks`` is the recorder's side of the hook points: ``Recorder`` implements it, and so does
the ``Fanout`` that serves several nested recordings.
"""

from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Callable, Protocol

import autograd.core as core

from ..fanout import fanout_for
from ..patching import original_of
from .wrappers import (recorded_vjp, wrap_add_outgrads, wrap_backward_pass, wrap_jvp_initialize_root,
                       wrap_jvp_node_init, wrap_toposort, wrap_trace, wrap_vjp_initialize_root, wrap_vjp_node_init)

__all__ = ["HOOK_POINTS", "RELIED_ON", "HookPoint", "Callbacks", "Fanout", "install", "is_patched", "remove_stale",
           "recorded_vjp", "original_of"]


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


# the engine's hook sites (``recording/engines.Engine``: ``ENGINE.pass_start`` ...), hooked by the table below
PASS_START = (core, "backward_pass")
LOCAL_BACKWARD = (core.VJPNode, "__init__")  # where a node's vjp is made (and called by backward_pass)
GRAD_WRITE = (core, "add_outgrads")

HOOK_POINTS = (
    HookPoint(*GRAD_WRITE, wrap_add_outgrads,
              "backward_pass and sum_outgrads read this global of autograd.core at call time",
              ("add_outgrads",), "autograd.core:add_outgrads"),
    HookPoint(core, "toposort", wrap_toposort,
              "backward_pass reads autograd.core.toposort; the definition in autograd.util is not seen",
              ("toposort",), "autograd.util:toposort"),
    HookPoint(*PASS_START, wrap_backward_pass,
              "make_vjp's vjp closure calls the global autograd.core.backward_pass",
              ("backward_start", "backward_end"), "autograd.core:backward_pass"),
    HookPoint(core, "trace", wrap_trace,
              "make_vjp and make_jvp call autograd.core.trace: the input, the end node, or none",
              ("trace",), "autograd.tracer:trace"),
    HookPoint(*LOCAL_BACKWARD, wrap_vjp_node_init,
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


# -------------------- the recorder's side --------------------


class Callbacks(Protocol):
    live: bool
    keeps_values: bool  # False under capture "structure": before_add_outgrads is not called

    # reverse mode: the trace, its nodes, and each backward_pass
    def on_vjp_root(self, node) -> None:
        """``VJPNode.new_root()`` built the input node ``node``."""

    def on_vjp_node(self, node, value, fun, args, kwargs, argnums, parents) -> None:
        """``VJPNode.__init__`` built ``node`` for the primitive call ``fun(*args, **kwargs)``."""

    def on_trace(self, start_node, x, end_value, end_node) -> None:
        """``trace`` returned (``end_node`` None: the output does not depend on the input)."""

    def begin_query(self, g, end_node) -> None:
        """``backward_pass(g, end_node)`` starts."""

    def on_toposort(self, node) -> None:
        """``toposort`` yielded ``node``: the pass visits it next."""

    def on_vjp_called(self, node_id, g, ingrads) -> None:
        """The local VJP of the node ``id(node) == node_id`` turned ``g`` into ``ingrads`` (a tuple)."""

    def before_add_outgrads(self, prev_g_flagged, g) -> Any:
        """``add_outgrads`` is about to add ``g`` into the entry ``prev_g_flagged`` (not None): a
        token for ``after_add_outgrads`` (what the entry held before autograd may write into it)."""

    def after_add_outgrads(self, prev_g_flagged, previous, g, result) -> None:
        """``add_outgrads`` returned ``result``; ``previous`` is before_add_outgrads' token or None."""

    def end_query(self, result, error) -> None:
        """``backward_pass`` returned ``result``, or raised ``error``."""

    # forward mode
    def on_jvp_root(self, node, g) -> None:
        """``JVPNode.new_root(g)`` built the input node with its tangent ``g``."""

    def begin_jvp_node(self, fun, argnums, parents) -> Any:
        """``JVPNode.__init__`` starts (its JVP rule's sum_outgrads runs inside): a frame token."""

    def end_jvp_node(self, frame, node, value, args) -> None:
        """``JVPNode.__init__`` built ``node`` (``frame``: begin_jvp_node's token)."""

    def abort_jvp_node(self, frame) -> None:
        """``JVPNode.__init__`` raised (``frame``: begin_jvp_node's token)."""


# the callbacks that take back a token, and the position of its argument
TOKENS = {"after_add_outgrads": 1, "end_jvp_node": 0, "abort_jvp_node": 0}

Fanout = fanout_for(Callbacks, TOKENS)


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


def remove_stale():
    """Put autograd's own function back at each hook point that holds a wrapper of an installation
    already undone (put back there by someone's undo of their own patch after the recording ended:
    pytest's monkeypatch teardown). Only while no installation is in place (the session's lock
    held: ``registry.remove_stale_hooks``). Returns the names of the points it cleared."""
    cleared = []
    for point in HOOK_POINTS:
        if is_patched(point):
            setattr(point.owner, point.attribute, original_of(vars(point.owner)[point.attribute]))
            cleared.append(point.name)
    return cleared


def is_patched(point):
    """Whether an adtrace wrapper is installed at ``point`` now."""
    return hasattr(vars(point.owner).get(point.attribute), "__adtrace_hook__")

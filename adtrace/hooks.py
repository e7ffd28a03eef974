"""Hook points: where adtrace patches autograd, why there, and the thin wrappers it puts there.

Every wrapper calls autograd's original with the same arguments and returns its result unchanged;
it only tells the recorders active *on the calling thread* what happened. With no recorder active
on a thread (another thread, or after the last ``record()`` on this one ended) a wrapper is a plain
pass-through. A recorder that fails inside a callback is switched off (``Recorder.fail``), never
the traced program.
"""

import functools
import threading
from dataclasses import dataclass
from typing import Callable

import autograd.core as core
from autograd.tracer import trace_stack


class _ThreadState(threading.local):
    def __init__(self):
        self.recorders = ()  # the recorders active on this thread, outermost first
        # autograd numbers traces with a global counter that an exception inside a trace leaves
        # raised (TraceStack.new_trace has no try/finally), so nesting is counted here instead:
        self.depth = 0  # traces open on this thread (seen through the trace hook)
        self.levels = {}  # autograd's trace number -> its nesting depth when it was opened


state = _ThreadState()


def _notify(recorders, method, *args):
    """Call ``method`` on each live recorder (not left, not failed); a recorder that raises is
    disabled, not the program."""
    results = []
    for r in recorders:
        out = None
        if r.live:
            try:
                out = getattr(r, method)(*args)
            except Exception as exc:  # a recorder bug must not break the traced program
                r.fail(exc)
        results.append(out)
    return results


# -------------------- reverse mode --------------------


def wrap_add_outgrads(original):
    @functools.wraps(original)
    def add_outgrads(prev_g_flagged, g):
        recorders = state.recorders
        if not recorders:
            return original(prev_g_flagged, g)
        # Before the call: autograd may be about to write in place into prev_g_flagged[0].
        previous = _notify(recorders, "before_add_outgrads", prev_g_flagged)
        result = original(prev_g_flagged, g)
        for r, prev in zip(recorders, previous):
            _notify((r,), "after_add_outgrads", prev, g, result)
        return result

    return add_outgrads


def wrap_toposort(original):
    @functools.wraps(original)
    def toposort(end_node, *args, **kwargs):
        nodes = original(end_node, *args, **kwargs)
        recorders = state.recorders
        return _yield_recorded(nodes, recorders) if recorders else nodes

    return toposort


def _yield_recorded(nodes, recorders):
    for node in nodes:
        _notify(recorders, "on_toposort", node)
        yield node


def wrap_backward_pass(original):
    @functools.wraps(original)
    def backward_pass(g, end_node):
        recorders = state.recorders
        if not recorders:
            return original(g, end_node)
        _notify(recorders, "begin_query", g, end_node)
        try:
            result = original(g, end_node)
        except BaseException as exc:  # an abandoned pass (KeyboardInterrupt too) ends its query
            _notify(recorders, "end_query", None, exc)
            raise
        _notify(recorders, "end_query", result, None)
        return result

    return backward_pass


def wrap_trace(original):
    @functools.wraps(original)
    def trace(start_node, fun, x):
        depth = state.depth
        state.levels[trace_stack.top + 1] = depth  # the number trace() is about to open
        state.depth = depth + 1
        try:
            end_value, end_node = original(start_node, fun, x)
        finally:
            state.depth = depth
        recorders = state.recorders
        if not recorders:
            return end_value, end_node
        _notify(recorders, "on_trace", start_node, x, end_value, end_node)
        return end_value, end_node

    return trace


def wrap_vjp_node_init(original):
    @functools.wraps(original)
    def __init__(self, value, fun, args, kwargs, parent_argnums, parents):
        recorders = state.recorders
        if not recorders:
            return original(self, value, fun, args, kwargs, parent_argnums, parents)
        labels = _notify(recorders, "begin_node", fun)
        original(self, value, fun, args, kwargs, parent_argnums, parents)
        for r, label in zip(recorders, labels):
            _notify((r,), "on_vjp_node", label, self, value, fun, args, kwargs, parent_argnums, parents)
        self.vjp = record_local_vjp(id(self), self.vjp)

    return __init__


def wrap_vjp_initialize_root(original):
    @functools.wraps(original)
    def initialize_root(self, *args, **kwargs):
        original(self, *args, **kwargs)
        recorders = state.recorders
        if recorders:
            _notify(recorders, "on_vjp_root", self)
            self.vjp = record_local_vjp(id(self), self.vjp)

    return initialize_root


def record_local_vjp(node_id, vjp):
    """The node's local VJP, recorded when called while a recorder is active on the thread.

    A rule with three or more boxed arguments returns a generator; it is materialised into a tuple
    before recording (``backward_pass`` zips over it, so the values it sees are the same).
    The node's id stays valid as long as the node, which owns this closure, is alive.
    """

    def vjp_recorded(g):
        recorders = state.recorders
        if not recorders:
            return vjp(g)
        ingrads = vjp(g)
        if type(ingrads) is not tuple:
            ingrads = tuple(ingrads)
        _notify(recorders, "on_local_vjp", node_id, g, ingrads)
        return ingrads

    return vjp_recorded


# -------------------- forward mode --------------------


def wrap_jvp_node_init(original):
    @functools.wraps(original)
    def __init__(self, value, fun, args, kwargs, parent_argnums, parents):
        recorders = state.recorders
        if not recorders:
            return original(self, value, fun, args, kwargs, parent_argnums, parents)
        # Open a frame first: the JVP rule's sum_outgrads calls add_outgrads during __init__.
        frames = _notify(recorders, "begin_jvp_node", fun, parent_argnums, parents)
        try:
            original(self, value, fun, args, kwargs, parent_argnums, parents)
        except BaseException:
            for r, frame in zip(recorders, frames):
                _notify((r,), "abort_jvp_node", frame)
            raise
        for r, frame in zip(recorders, frames):
            _notify((r,), "end_jvp_node", frame, self, value, args)

    return __init__


def wrap_jvp_initialize_root(original):
    @functools.wraps(original)
    def initialize_root(self, g):
        original(self, g)
        recorders = state.recorders
        if recorders:
            _notify(recorders, "on_jvp_root", self, g)

    return initialize_root


# -------------------- the table --------------------


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

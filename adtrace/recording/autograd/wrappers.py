"""The wrappers put at autograd's binding sites (``hooks.HOOK_POINTS``).

Each calls autograd's original with the same arguments and returns its result unchanged; around
it, it tells whatever is active in the calling context (``active``, the context variable of the
installation that made the wrapper: nothing, a recorder, or a fan-out of several) what happened,
through the callbacks of ``hooks.Callbacks``, which are guarded: a recorder that fails is switched
off, never the traced program. Forward mode's ``add_outgrads`` calls (``sum_outgrads``, while a
``JVPNode`` is built) go through the same ``add_outgrads`` wrapper; the recorder tells them apart
by the frame it has open.
"""

import functools
import threading
from types import MethodType

from autograd.tracer import trace_stack

from .. import compiled
from .state import state

_twin = compiled.twin("adtrace.recording.autograd._wrappers")
# The compiled twins of the per-node paths (``_wrappers.c``), when built, read when the hooks are installed:
# recorded_vjp bound to (id(node), vjp, active) in one object (64 B, no frame per call), VJPNode.__init__'s,
# JVPNode.__init__'s and add_outgrads' wrappers, and _visits. The pure-Python code stays the reference; each set
# to None, it is used (tests).
RecordedVJP = None if _twin is None else _twin.RecordedVJP
NodeInit = None if _twin is None else _twin.NodeInit
AddOutgrads = None if _twin is None else _twin.AddOutgrads
Visits = None if _twin is None else _twin.Visits
JVPNodeInit = None if _twin is None else _twin.JVPNodeInit  # (JVPNode.__init__'s, forward mode)


def wrap_add_outgrads(original, active):
    if AddOutgrads is not None:
        return functools.wraps(original)(AddOutgrads(original, active))

    @functools.wraps(original)
    def add_outgrads(prev_g_flagged, g):
        recorder = active.get()
        if recorder is None:
            return original(prev_g_flagged, g)
        # what the entry holds, taken before autograd may write into it (mut_add)
        previous = recorder.before_add_outgrads(prev_g_flagged, g) if prev_g_flagged and recorder.keeps_values else None
        result = original(prev_g_flagged, g)
        recorder.after_add_outgrads(prev_g_flagged, previous, g, result)
        return result

    return add_outgrads


def wrap_toposort(original, active):
    visits = _visits if Visits is None else Visits

    @functools.wraps(original)
    def toposort(end_node, *args, **kwargs):
        nodes = original(end_node, *args, **kwargs)
        recorder = active.get()
        return nodes if recorder is None else visits(nodes, recorder.on_toposort)

    return toposort


def _visits(nodes, on_toposort):
    for node in nodes:
        on_toposort(node)
        yield node


def wrap_backward_pass(original, active):
    @functools.wraps(original)
    def backward_pass(g, end_node):
        recorder = active.get()
        if recorder is None:
            return original(g, end_node)
        if recorder.thread != threading.get_ident():
            return _unrecorded(recorder, active, backward_pass, g, end_node)
        recorder.begin_query(g, end_node)
        try:
            result = original(g, end_node)
        except BaseException as exc:  # an abandoned pass (KeyboardInterrupt too) ends its query
            recorder.end_query(None, exc)
            raise
        recorder.end_query(result, None)
        return result

    return backward_pass


def wrap_trace(original, active):
    @functools.wraps(original)
    def trace(start_node, fun, x):
        recorder = active.get()
        if recorder is not None and recorder.thread != threading.get_ident():
            return _unrecorded(recorder, active, trace, start_node, fun, x)
        depth = state.depth
        state.levels[trace_stack.top + 1] = depth  # the number trace() is about to open
        state.depth = depth + 1
        try:
            end_value, end_node = original(start_node, fun, x)
        finally:
            state.depth = depth
        recorder = active.get()
        if recorder is not None:
            recorder.on_trace(start_node, x, end_value, end_node)
        return end_value, end_node

    return trace


def _unrecorded(recorder, active, wrapper, *args):
    """``wrapper(*args)`` again on a thread that runs in a copy of the context of a ``record()`` entered
    on another thread (``asyncio.to_thread``, ``copy_context().run``): its nodes, visits and
    accumulations would mix into the recording thread's passes, so none of them reaches that
    recorder (the context's ``active`` holds only this thread's own recorders meanwhile, if it
    entered any), and that recorder says so once."""
    token = active.set(recorder.elsewhere())
    try:
        return wrapper(*args)
    finally:
        active.reset(token)


def wrap_vjp_node_init(original, active):
    bound = RecordedVJP  # (the compiled binding, or None: read when the hooks are installed)

    @functools.wraps(original)
    def __init__(self, value, fun, args, kwargs, parent_argnums, parents):
        original(self, value, fun, args, kwargs, parent_argnums, parents)
        recorder = active.get()
        if recorder is not None:
            recorder.on_vjp_node(self, value, fun, args, kwargs, parent_argnums, parents)
            if bound is None:
                self.vjp = MethodType(recorded_vjp, (id(self), self.vjp, active))  # (see recorded_vjp)
            else:
                self.vjp = bound(id(self), self.vjp, active)

    if NodeInit is not None and bound is not None:  # (the same, in C: the Python one for a call by keywords)
        return functools.wraps(original)(NodeInit(original, active, __init__))
    return __init__


def wrap_vjp_initialize_root(original, active):
    bound = RecordedVJP

    @functools.wraps(original)
    def initialize_root(self, *args, **kwargs):
        original(self, *args, **kwargs)
        recorder = active.get()
        if recorder is not None and recorder.thread != threading.get_ident():
            recorder = recorder.elsewhere()  # (make_vjp's root, made before its trace)
        if recorder is not None:
            recorder.on_vjp_root(self)
            if bound is None:
                self.vjp = MethodType(recorded_vjp, (id(self), self.vjp, active))  # (see recorded_vjp)
            else:
                self.vjp = bound(id(self), self.vjp, active)

    return initialize_root


def recorded_vjp(node_vjp, g):
    """A node's local VJP, recorded when called while a recorder is active; bound to
    ``node_vjp = (id(node), vjp, active)`` (a method bound to a tuple: cheaper per node than a
    closure; ``active``: the context variable of the hooks' installation that made the node). Its compiled
    twin, ``RecordedVJP(id(node), vjp, active)``, is one object doing the same (``_wrappers.c``).

    A rule with three or more boxed arguments returns a generator; it is materialised into a tuple
    before recording (``backward_pass`` zips over it, so the values it sees are the same). The
    node's id stays valid as long as the node, which owns the bound method, is alive.
    """
    node_id, vjp, active = node_vjp
    recorder = active.get()
    if recorder is None:
        return vjp(g)
    ingrads = vjp(g)
    if type(ingrads) is not tuple:
        ingrads = tuple(ingrads)
    recorder.on_vjp_called(node_id, g, ingrads)
    return ingrads


# -------------------- forward mode --------------------


def wrap_jvp_node_init(original, active):
    @functools.wraps(original)
    def __init__(self, value, fun, args, kwargs, parent_argnums, parents):
        recorder = active.get()
        if recorder is None:
            return original(self, value, fun, args, kwargs, parent_argnums, parents)
        # a frame first: the JVP rule's sum_outgrads calls add_outgrads while the node is built
        frame = recorder.begin_jvp_node(fun, parent_argnums, parents)
        try:
            original(self, value, fun, args, kwargs, parent_argnums, parents)
        except BaseException:
            recorder.abort_jvp_node(frame)
            raise
        recorder.end_jvp_node(frame, self, value, args)

    if JVPNodeInit is not None:  # (the same, in C: the Python one for a call by keywords)
        return functools.wraps(original)(JVPNodeInit(original, active, __init__))
    return __init__


def wrap_jvp_initialize_root(original, active):
    @functools.wraps(original)
    def initialize_root(self, g):
        original(self, g)
        recorder = active.get()
        if recorder is not None and recorder.thread != threading.get_ident():
            recorder = recorder.elsewhere()
        if recorder is not None:
            recorder.on_jvp_root(self, g)

    return initialize_root

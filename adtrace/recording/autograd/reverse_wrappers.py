"""The wrappers at reverse mode's binding sites: add_outgrads, toposort, backward_pass, trace,
VJPNode.__init__ / initialize_root, and each recorded node's local vjp.

Each wrapper calls its recorders in a plain loop, every call guarded: a recorder that raises is
switched off (Recorder.fail), the traced program goes on. The loops are written out, not shared
through a helper, because they run once per autograd operation.
"""

import functools
from types import MethodType as _bound

from autograd.tracer import trace_stack

from .state import state


def wrap_add_outgrads(original):
    @functools.wraps(original)
    def add_outgrads(prev_g_flagged, g):
        recorders = state.recorders
        if not recorders:
            return original(prev_g_flagged, g)
        if len(recorders) > 1:
            return _add_outgrads_each(recorders, original, prev_g_flagged, g)
        r = recorders[0]  # the common case, written out
        previous = None  # a snapshot taken before autograd may write into prev_g_flagged[0]
        if prev_g_flagged and r.keeps_values and r.live:
            try:
                previous = r.before_add_outgrads(prev_g_flagged, g)
            except Exception as exc:
                r.fail(exc)
        result = original(prev_g_flagged, g)
        if r.live:
            try:
                r.after_add_outgrads(prev_g_flagged, previous, g, result)
            except Exception as exc:
                r.fail(exc)
        return result

    return add_outgrads


def _add_outgrads_each(recorders, original, prev_g_flagged, g):
    previous = []
    for r in recorders:
        snapshot = None
        if prev_g_flagged and r.keeps_values and r.live:
            try:
                snapshot = r.before_add_outgrads(prev_g_flagged, g)
            except Exception as exc:
                r.fail(exc)
        previous.append(snapshot)
    result = original(prev_g_flagged, g)
    for r, snapshot in zip(recorders, previous):
        if r.live:
            try:
                r.after_add_outgrads(prev_g_flagged, snapshot, g, result)
            except Exception as exc:
                r.fail(exc)
    return result


def wrap_toposort(original):
    @functools.wraps(original)
    def toposort(end_node, *args, **kwargs):
        nodes = original(end_node, *args, **kwargs)
        recorders = state.recorders
        if not recorders:
            return nodes
        return _yield_recorded(nodes, recorders[0]) if len(recorders) == 1 else _yield_each(nodes, recorders)

    return toposort


def _yield_recorded(nodes, r):
    on_toposort = r.on_toposort
    for node in nodes:
        if r.live:
            try:
                on_toposort(node)
            except Exception as exc:
                r.fail(exc)
        yield node


def _yield_each(nodes, recorders):
    for node in nodes:
        for r in recorders:
            if r.live:
                try:
                    r.on_toposort(node)
                except Exception as exc:
                    r.fail(exc)
        yield node


def wrap_backward_pass(original):
    @functools.wraps(original)
    def backward_pass(g, end_node):
        recorders = state.recorders
        if not recorders:
            return original(g, end_node)
        for r in recorders:
            if r.live:
                try:
                    r.begin_query(g, end_node)
                except Exception as exc:
                    r.fail(exc)
        try:
            result = original(g, end_node)
        except BaseException as exc:  # an abandoned pass (KeyboardInterrupt too) ends its query
            _end_queries(recorders, None, exc)
            raise
        _end_queries(recorders, result, None)
        return result

    return backward_pass


def _end_queries(recorders, result, error):
    for r in recorders:
        if r.live:
            try:
                r.end_query(result, error)
            except Exception as exc:
                r.fail(exc)


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
        for r in state.recorders:
            if r.live:
                try:
                    r.on_trace(start_node, x, end_value, end_node)
                except Exception as exc:
                    r.fail(exc)
        return end_value, end_node

    return trace


def wrap_vjp_node_init(original):
    @functools.wraps(original)
    def __init__(self, value, fun, args, kwargs, parent_argnums, parents):
        recorders = state.recorders
        if not recorders:
            return original(self, value, fun, args, kwargs, parent_argnums, parents)
        original(self, value, fun, args, kwargs, parent_argnums, parents)
        for r in recorders:
            if r.live:
                try:
                    r.on_vjp_node(self, value, fun, args, kwargs, parent_argnums, parents)
                except Exception as exc:
                    r.fail(exc)
        self.vjp = _bound(recorded_local_vjp, (id(self), self.vjp))  # (see recorded_local_vjp)

    return __init__


def wrap_vjp_initialize_root(original):
    @functools.wraps(original)
    def initialize_root(self, *args, **kwargs):
        original(self, *args, **kwargs)
        recorders = state.recorders
        if recorders:
            for r in recorders:
                if r.live:
                    try:
                        r.on_vjp_root(self)
                    except Exception as exc:
                        r.fail(exc)
            self.vjp = _bound(recorded_local_vjp, (id(self), self.vjp))  # (see recorded_local_vjp)

    return initialize_root


def recorded_local_vjp(node_vjp, g):
    """A node's local VJP, recorded when called while a recorder is active on the thread; bound
    to ``node_vjp = (id(node), vjp)``.

    A rule with three or more boxed arguments returns a generator; it is materialised into a tuple
    before recording (``backward_pass`` zips over it, so the values it sees are the same). The
    node's id stays valid as long as the node, which owns the bound method, is alive.

    A method bound to a tuple rather than a closure (four objects for the garbage collector) or a
    callable tuple subclass (called through its type's ``__call__`` slot): 1.1k fewer
    instructions per node on the scalar chain (``benchmarks/instructions.py``). Bound once per
    primitive call, inline in the VJPNode wrappers.
    """
    node_id, vjp = node_vjp
    recorders = state.recorders
    if not recorders:
        return vjp(g)
    ingrads = vjp(g)
    if type(ingrads) is not tuple:
        ingrads = tuple(ingrads)
    for r in recorders:
        if r.live:
            try:
                r.on_local_vjp(node_id, g, ingrads)
            except Exception as exc:
                r.fail(exc)
    return ingrads


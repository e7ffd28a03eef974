"""The recorder: turns hooked autograd calls into events (it never formats anything).

One ``Recorder`` per ``record()`` block, fed by the wrappers in ``adtrace.hooks`` on its own thread.
It names nodes (``adtrace.labels``) in a table keyed by ``id(node)``: ``VJPNode`` has
``__slots__`` and no weak references, so nothing can be attached to a node. An entry is written
when the node is created, so an id that Python reuses after a node died is simply overwritten.

Values are kept true by ``adtrace.history.CopyOnWrite``: autograd's in-place accumulation is
watched (``add_outgrads`` results flagged mutable, and the accumulator nodes of an inner backward
pass) and copied into the events just before autograd writes.
"""

import warnings

import autograd.core as core

from . import hooks
from .events import (AddOutgrads, BackwardEnd, BackwardStart, JVPNodeCreated, JVPRoot,
                     LocalVJP, NodeCreated, RootCreated, ToposortYield, TraceReturned)
from .labels import ROOT_NAME, node_label, primitive_name
from .history import CopyOnWrite
from .values import holds_reference

# Primitives whose output is an outgrads accumulator under higher-order differentiation: the inner
# backward pass's vs.add / vs.mut_add / sparse_add are recorded as nodes of the outer trace, and
# their output array is the one the next mut_add writes into.
_ACCUMULATORS = frozenset({core.VSpace.add, core.VSpace.mut_add, core.sparse_add})


class RecorderWarning(UserWarning):
    """The recorder stopped recording after an internal error; the program ran on unaffected."""


class _Query:
    """The state of one backward_pass run: which node's contributions are arriving."""

    __slots__ = ("number", "level", "end", "start", "visited", "node", "label", "argnums", "position")

    def __init__(self, number, level, end, start):
        self.number, self.level, self.end, self.start = number, level, end, start
        self.visited, self.node, self.label, self.argnums, self.position = 0, None, None, (), 0


class _JVPFrame:
    """A JVPNode under construction: its sum_outgrads calls are forward-mode add_outgrads events."""

    __slots__ = ("label", "name", "level", "argnums", "parents", "position")

    def __init__(self, label, name, level, argnums, parents):
        self.label, self.name, self.level, self.argnums, self.parents = label, name, level, argnums, parents
        self.position = 0


class Recorder:
    def __init__(self, recording, capture):
        self.recording = recording
        self.capture = capture
        capture.trace_levels = hooks.state.levels  # this thread's: Boxed levels as nesting depths
        self.failure = None
        self._events = recording.events
        self._nodes = {}  # id(node) -> (label, level, argnums)
        self._count = 0
        self._unrecorded = 0
        self._frames = []  # open _Query and _JVPFrame objects, innermost last
        self._queries = 0
        self._history = CopyOnWrite(recording.events, capture)

    def fail(self, exc):
        self.failure = exc
        self.recording.failure = f"{type(exc).__name__}: {exc}"
        warnings.warn(RecorderWarning(f"adtrace stopped recording after an internal error: {exc!r}; "
                                      "the traced program is unaffected"), stacklevel=3)

    # -------------------- nodes --------------------

    def begin_node(self, fun):
        label = node_label(self._count, primitive_name(fun))
        self._count += 1
        return label

    def on_vjp_node(self, label, node, value, fun, argnums, parents):
        parent_labels, level = self._parents(parents)
        self._nodes[id(node)] = (label, level, argnums)
        snapshot = self.capture(value)
        index = self._append(NodeCreated("rev", level, self._query_number(), label,
                                         primitive_name(fun), argnums, parent_labels, snapshot))
        if fun in _ACCUMULATORS and holds_reference(snapshot):
            self._history.watch(value, index, "value")

    def on_vjp_root(self, node):
        label, level = self._new_root(node)
        self._append(RootCreated("rev", level, self._query_number(), label))

    def on_jvp_root(self, node, g):
        label, level = self._new_root(node)
        self._append(JVPRoot("fwd", level, self._query_number(), label, self.capture(g)))

    def on_trace(self, start_node, x, end_value, end_node):
        mode = "fwd" if isinstance(start_node, core.JVPNode) else "rev"
        root, level = self._lookup(start_node)[:2]
        end = None if end_node is None else self._lookup(end_node)[0]
        self._append(TraceReturned(mode, level, self._query_number(), root, end, self.capture(x, copy=True),
                                   self.capture(end_value, copy=True), end_node is None))

    def _new_root(self, node):
        label = node_label(self._count, ROOT_NAME)
        self._count += 1
        level = hooks.state.depth  # make_vjp / make_jvp create the root just before trace() opens
        self._nodes[id(node)] = (label, level, ())
        return label, level

    def _lookup(self, node):
        entry = self._nodes.get(id(node))
        if entry is None:  # created before this recording started: named, level unknown
            entry = (f"u{self._unrecorded}_unrecorded", self._current_level(), ())
            self._unrecorded += 1
            self._nodes[id(node)] = entry
        return entry

    def _parents(self, parents):
        entries = [self._lookup(p) for p in parents]
        level = entries[0][1] if entries else self._current_level()
        return tuple(e[0] for e in entries), level

    # -------------------- backward queries --------------------

    def begin_query(self, g, end_node):
        self._queries += 1
        end, level = self._lookup(end_node)[:2]
        self._frames.append(_Query(self._queries, level, end, len(self._events)))
        self._append(BackwardStart("rev", level, self._queries, end, self.capture(g)))

    def end_query(self, result, error):
        query = self._innermost(_Query)
        if query is None:
            return
        self._frames.remove(query)
        snapshot = None if error is not None else self.capture(result)
        error_name = None if error is None else type(error).__name__
        self._append(BackwardEnd("rev", query.level, query.number, query.end, snapshot, error_name))
        if error is None and holds_reference(snapshot):
            self._history.detach(query.start, result)

    def on_toposort(self, node):
        query = self._innermost(_Query)
        if query is None:  # autograd.core.toposort called outside backward_pass: not a visit
            return
        query.node = node
        query.label, _, query.argnums = self._lookup(node)
        query.position = 0
        self._append(ToposortYield("rev", query.level, query.number, query.label, query.visited))
        query.visited += 1

    def on_local_vjp(self, node_id, g, ingrads):
        query = self._innermost(_Query)
        entry = self._nodes.get(node_id)
        label, level = (entry[0], entry[1]) if entry else (query.label if query else None, self._current_level())
        ingrad_snapshots = tuple(self.capture(i) for i in ingrads)  # Nones under "structure"
        number = query.number if query else None  # None: a vjp called by hand, outside backward_pass
        self._append(LocalVJP("rev", level, number, label, self.capture(g), ingrad_snapshots))

    # -------------------- add_outgrads --------------------

    def before_add_outgrads(self, prev_g_flagged):
        if not prev_g_flagged:
            return None
        value, mutable = prev_g_flagged
        if not mutable or not self.capture.keeps_values:
            return (self.capture(value), mutable)
        snapshot = self.capture(value, copy=True)  # autograd writes into `value` next
        self._history.freeze(value, snapshot)
        return (snapshot, mutable)

    def after_add_outgrads(self, previous, g, result):
        frame = self._frames[-1] if self._frames else None
        if isinstance(frame, _Query):
            mode, level, query, node = "rev", frame.level, frame.number, frame.label
            parents = getattr(frame.node, "parents", ())
            parent = self._lookup(parents[frame.position])[0] if frame.position < len(parents) else None
        else:  # forward mode: one step of sum_outgrads while a JVPNode is built
            mode, query = "fwd", self._query_number()
            level, node = (frame.level, frame.label) if frame else (self._current_level(), None)
            parents = frame.parents if frame else ()
            parent = parents[frame.position] if frame and frame.position < len(parents) else None
        position = frame.position if frame else 0
        argnums = frame.argnums if frame else ()
        argnum = argnums[position] if position < len(argnums) else None
        if frame:
            frame.position += 1
        value, mutable = result
        snapshot = self.capture(value)
        index = self._append(AddOutgrads(mode, level, query, node, position, parent, argnum, previous,
                                         self.capture(g), (snapshot, mutable)))
        if mutable and holds_reference(snapshot):
            self._history.watch(value, index, "result")

    # -------------------- forward-mode nodes --------------------

    def begin_jvp_node(self, fun, argnums, parents):
        parent_labels, level = self._parents(parents)
        frame = _JVPFrame(self.begin_node(fun), primitive_name(fun), level, argnums, parent_labels)
        self._frames.append(frame)
        return frame

    def abort_jvp_node(self, frame):
        if frame in self._frames:
            self._frames.remove(frame)

    def end_jvp_node(self, frame, node, value):
        self.abort_jvp_node(frame)
        self._nodes[id(node)] = (frame.label, frame.level, frame.argnums)
        self._append(JVPNodeCreated("fwd", frame.level, self._query_number(), frame.label, frame.name,
                                    frame.argnums, frame.parents, self.capture(value), self.capture(node.g)))

    # -------------------- helpers --------------------

    def _append(self, event):
        self._events.append(event)
        if event.kind in ("root", "node", "jvp_root", "jvp_node"):
            self.recording.nodes[event.label] = event
        return len(self._events) - 1

    def _innermost(self, frame_type):
        for frame in reversed(self._frames):
            if type(frame) is frame_type:
                return frame
        return None

    def _query_number(self):
        query = self._innermost(_Query)
        return query.number if query else None

    def _current_level(self):
        return self._frames[-1].level if self._frames else max(hooks.state.depth - 1, 0)

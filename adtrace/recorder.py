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
from dataclasses import dataclass
from typing import Callable, Optional

import autograd.core as core

from . import hooks
from .events import (AddOutgrads, BackwardEnd, BackwardStart, JVPNodeCreated, JVPRoot,
                     LocalVJP, NodeCreated, RootCreated, ToposortYield, TraceReturned)
from .labels import ROOT_NAME, node_label, primitive_name
from .callsite import user_call_site
from .history import CopyOnWrite
from .values import holds_reference

# Primitives whose output is an outgrads accumulator under higher-order differentiation: the inner
# backward pass's vs.add / vs.mut_add / sparse_add are recorded as nodes of the outer trace, and
# their output array is the one the next mut_add writes into.
_ACCUMULATORS = frozenset({core.VSpace.add, core.VSpace.mut_add, core.sparse_add})


@dataclass(frozen=True)
class NodeCall:
    """A node's primitive call, kept by ``record(calls=True)`` for per-node checks: the live
    function and arguments (``args`` with this level's boxes unboxed) and the user's call site."""

    fun: Callable
    args: tuple
    kwargs: dict
    argnums: tuple
    site: Optional[str]


class RecorderWarning(UserWarning):
    """The recorder stopped recording after an internal error; the program ran on unaffected."""


class _Query:
    """The state of one backward_pass run: which node's contributions are arriving, and the
    snapshot of each ``outgrads`` entry (so a value seen again is not captured twice)."""

    __slots__ = ("number", "level", "end", "start", "visited", "node", "label", "argnums", "position",
                 "entries", "popped", "ingrads")

    def __init__(self, number, level, end, start):
        self.number, self.level, self.end, self.start = number, level, end, start
        self.visited, self.node, self.label, self.argnums, self.position = 0, None, None, (), 0
        self.entries = {}  # parent label -> (live value, snapshot): outgrads[parent][0] as recorded
        self.popped = None  # (live value, snapshot) of the entry the current node popped
        self.ingrads = ()  # (live value, snapshot) per position, from the current node's vjp


class _JVPFrame:
    """A JVPNode under construction: its sum_outgrads calls are forward-mode add_outgrads events."""

    __slots__ = ("label", "name", "level", "argnums", "parents", "position")

    def __init__(self, label, name, level, argnums, parents):
        self.label, self.name, self.level, self.argnums, self.parents = label, name, level, argnums, parents
        self.position = 0


class Recorder:
    def __init__(self, recording, capture, keep_calls=False, root=None):
        self.recording = recording
        self.keep_calls, self.root = keep_calls, root
        self.capture = capture
        capture.box_level = self._box_level
        self.live = True  # False once closed or failed: the wrappers skip it
        self.closed = False  # left (its record() block ended, or it was closed out of order)
        self.failure = None
        self._nodes = {}  # id(node) -> (label, level, argnums)
        self._count = 0
        self._unrecorded = 0
        self._frames = []  # open _Query and _JVPFrame objects, innermost last
        self._queries = 0
        self._history = CopyOnWrite(recording, capture)

    def fail(self, exc):
        self.live = False
        self.failure = exc
        self.recording.failure = f"{type(exc).__name__}: {exc}"
        self._history.freeze_all()  # autograd goes on writing into arrays the events still hold
        warnings.warn(RecorderWarning(f"adtrace stopped recording after an internal error: {exc!r}; "
                                      "the traced program is unaffected"), stacklevel=3)

    def close(self):
        self.live, self.closed = False, True

    # -------------------- nodes --------------------

    def begin_node(self, fun):
        label = node_label(self._count, primitive_name(fun))
        self._count += 1
        return label

    def on_vjp_node(self, label, node, value, fun, args, kwargs, argnums, parents):
        parent_labels, level = self._parents(parents)
        self._nodes[id(node)] = (label, level, argnums)
        if self.keep_calls:
            self.recording.calls[label] = NodeCall(fun, args, kwargs, argnums, user_call_site(self.root))
        # Copy at once a value that is one of the call's own arguments (np.atleast_1d(x) is x: the
        # caller may change it) or the zeros vs.mut_add(None, prev) made, which sparse_add fills
        # in place within the same add_outgrads call.
        fresh_accumulator = fun is core.VSpace.mut_add and args[1] is None
        snapshot = self.capture(value, copy=fresh_accumulator or any(value is a for a in args))
        index = self._append(NodeCreated("rev", level, self._query_number(), label,
                                         primitive_name(fun), argnums, parent_labels, snapshot))
        if fun in _ACCUMULATORS and holds_reference(snapshot):
            self._history.watch(value, index, "value")

    def on_vjp_root(self, node):
        label, level = self._new_root(node)
        self._append(RootCreated("rev", level, self._query_number(), label))

    def on_jvp_root(self, node, g):
        label, level = self._new_root(node)
        self._append(JVPRoot("fwd", level, self._query_number(), label, self.capture(g, copy=True)))

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

    def _box_level(self, box):
        """A box's level is its node's (autograd's own trace numbers are global across threads)."""
        entry = self._nodes.get(id(box._node))
        return entry[1] if entry else hooks.state.levels.get(box._trace, box._trace)

    # -------------------- backward queries --------------------

    def begin_query(self, g, end_node):
        self._queries += 1
        end, level = self._lookup(end_node)[:2]
        query = _Query(self._queries, level, end, len(self.recording.events))
        seed = self.capture(g, copy=True)  # the caller's array: they may change it afterwards
        query.entries[end] = (g, seed)
        self._frames.append(query)
        self._append(BackwardStart("rev", level, query.number, end, seed))

    def end_query(self, result, error):
        query = self._innermost(_Query)
        if query is None:
            return
        self._frames.remove(query)
        snapshot = None if error is not None else self._snapshot(query.popped, result)
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
        query.position, query.ingrads = 0, ()
        query.popped = query.entries.pop(query.label, None)  # outgrad = outgrads.pop(node)
        self._append(ToposortYield("rev", query.level, query.number, query.label, query.visited))
        query.visited += 1

    def on_local_vjp(self, node_id, g, ingrads):
        query = self._innermost(_Query)
        entry = self._nodes.get(node_id)
        label, level = (entry[0], entry[1]) if entry else (query.label if query else None, self._current_level())
        pairs = tuple((i, self.capture(i)) for i in ingrads)  # Nones under "structure"
        outgrad = self._snapshot(query.popped if query else None, g)
        if query is not None:
            query.ingrads = pairs
        number = query.number if query else None  # None: a vjp called by hand, outside backward_pass
        self._append(LocalVJP("rev", level, number, label, outgrad, tuple(s for _, s in pairs)))

    # -------------------- add_outgrads --------------------

    def before_add_outgrads(self, prev_g_flagged):
        """Snapshot ``outgrads.get(parent)`` before autograd may write into it."""
        frame = self._frames[-1] if self._frames else None
        parent = self._parent_label(frame)
        if not prev_g_flagged:
            return parent, None
        value, mutable = prev_g_flagged
        if mutable and self.capture.keeps_values:
            snapshot = self.capture(value, copy=True)  # autograd writes into `value` next
            self._history.freeze(value, snapshot)
        else:
            entry = frame.entries.get(parent) if type(frame) is _Query else None
            snapshot = self._snapshot(entry, value)
        return parent, (snapshot, mutable)

    def after_add_outgrads(self, token, g, result):
        parent, previous = token
        frame = self._frames[-1] if self._frames else None
        in_query = type(frame) is _Query
        position = frame.position if frame else 0
        argnums = frame.argnums if frame else ()
        argnum = argnums[position] if position < len(argnums) else None
        if frame:
            frame.position += 1
        ingrad = frame.ingrads[position] if in_query and position < len(frame.ingrads) else None
        contribution = self._snapshot(ingrad, g)
        value, mutable = result
        snapshot = contribution if value is g else self.capture(value)
        # Forward mode only inside a JVPNode's construction (sum_outgrads); otherwise a backward
        # pass, possibly one that began before this recording (no query frame then).
        mode = "fwd" if type(frame) is _JVPFrame else "rev"
        query = frame.number if in_query else (None if mode == "rev" else self._query_number())
        level = frame.level if frame else self._current_level()
        node = frame.label if frame else None
        index = self._append(AddOutgrads(mode, level, query, node, position, parent, argnum, previous,
                                         contribution, (snapshot, mutable)))
        if in_query and parent is not None:
            frame.entries[parent] = (value, snapshot)
        if mutable and holds_reference(snapshot):
            self._history.watch(value, index, "result")

    def _parent_label(self, frame):
        """The label of the parent the next add_outgrads call adds into (zip's position)."""
        if type(frame) is _Query:
            parents = getattr(frame.node, "parents", ())
            return self._lookup(parents[frame.position])[0] if frame.position < len(parents) else None
        if type(frame) is _JVPFrame and frame.position < len(frame.parents):
            return frame.parents[frame.position]
        return None

    # -------------------- forward-mode nodes --------------------

    def begin_jvp_node(self, fun, argnums, parents):
        parent_labels, level = self._parents(parents)
        frame = _JVPFrame(self.begin_node(fun), primitive_name(fun), level, argnums, parent_labels)
        self._frames.append(frame)
        return frame

    def abort_jvp_node(self, frame):
        if frame in self._frames:
            self._frames.remove(frame)

    def end_jvp_node(self, frame, node, value, args):
        self.abort_jvp_node(frame)
        self._nodes[id(node)] = (frame.label, frame.level, frame.argnums)
        copy = any(value is a for a in args)
        self._append(JVPNodeCreated("fwd", frame.level, self._query_number(), frame.label, frame.name,
                                    frame.argnums, frame.parents, self.capture(value, copy=copy),
                                    self.capture(node.g, copy=copy or any(node.g is a for a in args))))

    # -------------------- helpers --------------------

    def _append(self, event):
        return self.recording.append(event)

    def _snapshot(self, seen, value):
        """The snapshot already taken of ``value`` (``seen``: a ``(live value, snapshot)`` pair
        from this query, never written into since), or a new one."""
        if seen is not None and seen[0] is value:
            return seen[1]
        return self.capture(value)

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

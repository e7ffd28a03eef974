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
import numpy as np

from . import hooks
from .events import (AddOutgrads, BackwardEnd, BackwardStart, EVENT_TYPES, JVPNodeCreated, JVPRoot,
                     LocalVJP, NodeCreated, RootCreated, ToposortYield, TraceReturned)
from .callsite import user_call_site
from .history import CopyOnWrite
from .labels import ROOT_NAME, node_label, primitive_name
from .values import holds_reference, written_leaves

# Primitives whose output is an outgrads accumulator under higher-order differentiation: the inner
# backward pass's vs.add / vs.mut_add / sparse_add are recorded as nodes of the outer trace, and
# their output array is the one the next mut_add writes into.
_ACCUMULATORS = frozenset({core.VSpace.add, core.VSpace.mut_add, core.sparse_add})

# Events are written flat into the Recording's EventLog, led by their type's index in EVENT_TYPES.
_NO_PREVIOUS = (None, None)  # add_outgrads's previous (value, flag) when outgrads.get(parent) was None
_NONES = [(None,) * n for n in range(64)]  # ingrads under capture "structure", without a new tuple


def _nones(n):
    return _NONES[n] if n < len(_NONES) else (None,) * n
(_ROOTCREATED, _NODECREATED, _TRACERETURNED, _BACKWARDSTART, _TOPOSORTYIELD, _LOCALVJP, _ADDOUTGRADS,
 _BACKWARDEND, _JVPROOT, _JVPNODECREATED) = (EVENT_TYPES.index(c) for c in (
    RootCreated, NodeCreated, TraceReturned, BackwardStart, ToposortYield, LocalVJP, AddOutgrads,
    BackwardEnd, JVPRoot, JVPNodeCreated))


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

    __slots__ = ("number", "level", "end", "visited", "node", "parents", "label", "argnums",
                 "position", "entries", "popped", "ingrads", "vjp_event")

    def __init__(self, number, level, end):
        self.number, self.level, self.end = number, level, end
        self.visited, self.node, self.parents, self.label, self.argnums, self.position = 0, None, (), None, (), 0
        # parent label -> (live value, snapshot, indices of the events holding the value): outgrads[parent]
        self.entries = {}
        self.popped = None  # the entry the current node popped
        self.vjp_event = None  # index of the current node's vjp event
        self.ingrads = ()  # (live value, snapshot) per position, from the current node's vjp


class _JVPFrame:
    """A JVPNode under construction: its sum_outgrads calls are forward-mode add_outgrads events."""

    __slots__ = ("label", "name", "level", "argnums", "parents", "position")

    def __init__(self, label, name, level, argnums, parents):
        self.label, self.name, self.level, self.argnums, self.parents = label, name, level, argnums, parents
        self.position = 0


class Recorder:
    """Hot path: one method call per hooked call, each appending one plain tuple to
    ``Recording.raw``; node identities through one dict lookup each."""

    def __init__(self, recording, capture, keep_calls=False, root=None):
        self.recording = recording
        self.capture = capture
        capture.box_level = self._box_level
        self.keep_calls, self.root = keep_calls, root
        self.live = True  # False once closed or failed: the wrappers skip it
        self.closed = False  # left (its record() block ended, or it was closed out of order)
        self.failure = None
        self._values, self._starts = recording.log.values, recording.log.starts
        # id(node) -> label, level, argnums: three dicts, no tuple per node for the garbage collector
        self._labels, self._levels, self._argnums = {}, {}, {}
        self._names = {}  # primitive -> (name, label suffix)
        self._count = 0
        self._unrecorded = 0
        self._frames = []  # open _Query and _JVPFrame objects, innermost last
        self._query = None  # the innermost open _Query
        self._queries = 0
        self._history = CopyOnWrite()
        recording.before_read = self._history.freeze_all  # events read mid-recording stay true

    def fail(self, exc):
        self.live = False
        self.failure = exc
        self.recording.failure = f"{type(exc).__name__}: {exc}"
        self._history.freeze_all()  # autograd goes on writing into arrays the events still hold
        self.recording.before_read = None
        warnings.warn(RecorderWarning(f"adtrace stopped recording after an internal error: {exc!r}; "
                                      "the traced program is unaffected"), stacklevel=3)

    def close(self):
        self.live, self.closed = False, True
        self._history.freeze_all()  # the arrays are autograd's (or the user's) from now on
        self.recording.before_read = None

    # -------------------- nodes --------------------

    def begin_node(self):
        """The next node number (creation order)."""
        self._count += 1
        return self._count - 1

    def on_vjp_node(self, node, value, fun, args, kwargs, argnums, parents):
        # Numbered once built: a rule maker that computes on an outer trace's boxes (higher order)
        # creates those outer nodes first; the order within each level is creation order either way.
        name, label = self._label(self.begin_node(), fun)
        labels = self._labels
        parent_labels = []
        for parent in parents:
            parent_labels.append(labels.get(id(parent)) or self._unrecorded_node(parent))
        level = self._levels[id(parents[0])] if parents else self._current_level()
        key = id(node)
        labels[key], self._levels[key], self._argnums[key] = label, level, argnums
        if self.keep_calls:
            self.recording.calls[label] = NodeCall(fun, args, kwargs, argnums, user_call_site(self.root))
        snapshot = None
        if self.capture.keeps_values:
            # Copy at once a value that is one of the call's own arguments (np.atleast_1d(x) is x:
            # the caller may change it) or the zeros vs.mut_add(None, prev) made, which sparse_add
            # fills in place within the same add_outgrads call.
            copy = type(value) is np.ndarray and (_is_one_of(value, args) or
                                                  (fun is core.VSpace.mut_add and args[1] is None))
            snapshot = self.capture(value, copy)
        query = self._query
        self._emit((_NODECREATED, "rev", level, query and query.number, label, name, argnums,
                    ",".join(parent_labels), snapshot))  # parents as one string: see eventlog
        if fun in _ACCUMULATORS and holds_reference(snapshot):
            self._values[-1] = self._history.share(snapshot, value)

    def on_vjp_root(self, node):
        label, level = self._new_root(node)
        self._emit((_ROOTCREATED, "rev", level, self._query and self._query.number, label))

    def on_jvp_root(self, node, g):
        label, level = self._new_root(node)
        self._emit((_JVPROOT, "fwd", level, self._query and self._query.number, label,
                          self.capture(g, copy=True)))

    def on_trace(self, start_node, x, end_value, end_node):
        mode = "fwd" if isinstance(start_node, core.JVPNode) else "rev"
        root, level = self._lookup(start_node), self._levels[id(start_node)]
        end = None if end_node is None else self._lookup(end_node)
        self._emit((_TRACERETURNED, mode, level, self._query and self._query.number, root, end,
                          self.capture(x, copy=True), self.capture(end_value, copy=True), end_node is None))

    def _label(self, index, fun):
        names = self._names.get(fun)
        if names is None:
            name = primitive_name(fun)
            names = self._names[fun] = (name, node_label(0, name)[3:])  # the suffix after "v0_"
        return names[0], f"v{index}_{names[1]}"

    def _new_root(self, node):
        label = node_label(self.begin_node(), ROOT_NAME)
        level = hooks.state.depth  # make_vjp / make_jvp create the root just before trace() opens
        self._register(id(node), label, level, ())
        return label, level

    def _register(self, key, label, level, argnums):
        self._labels[key], self._levels[key], self._argnums[key] = label, level, argnums

    def _lookup(self, node):
        """A node's label."""
        return self._labels.get(id(node)) or self._unrecorded_node(node)

    def _unrecorded_node(self, node):
        """A node created before this recording started: named, its level unknown."""
        label = f"u{self._unrecorded}_unrecorded"
        self._unrecorded += 1
        self._register(id(node), label, self._current_level(), ())
        return label

    def _box_level(self, box):
        """A box's level is its node's (autograd's own trace numbers are global across threads)."""
        level = self._levels.get(id(box._node))
        return level if level is not None else hooks.state.levels.get(box._trace, box._trace)

    # -------------------- backward queries --------------------

    def begin_query(self, g, end_node):
        self._queries += 1
        end = self._lookup(end_node)
        level = self._levels[id(end_node)]
        query = _Query(self._queries, level, end)
        seed = self.capture(g, copy=True)  # the caller's array: they may change it afterwards
        query.entries[end] = (g, seed, ())
        self._push(query)
        self._emit((_BACKWARDSTART, "rev", level, query.number, end, seed))

    def end_query(self, result, error):
        query = self._query
        if query is None:
            return
        self._pop(query)
        snapshot = None if error is not None else self._snapshot(query.popped, result)
        error_name = None if error is None else type(error).__name__
        self._emit((_BACKWARDEND, "rev", query.level, query.number, query.end, snapshot, error_name))
        if error is None and holds_reference(snapshot):
            # the events that hold the returned array: those that stored the final entry, the last
            # node's vjp (its outgrad) and backward_end
            held = query.popped[2] if query.popped is not None and query.popped[0] is result else ()
            self._history.detach(self.recording, (*held, query.vjp_event, len(self._starts) - 1), result)

    def on_toposort(self, node):
        query = self._query
        if query is None:  # autograd.core.toposort called outside backward_pass: not a visit
            return
        query.node, query.parents = node, node.parents
        label = self._lookup(node)
        query.argnums = self._argnums[id(node)]
        query.label = label
        query.position, query.ingrads = 0, ()
        query.popped = query.entries.pop(label, None)  # outgrad = outgrads.pop(node)
        self._emit((_TOPOSORTYIELD, "rev", query.level, query.number, label, query.visited))
        query.visited += 1

    def on_local_vjp(self, node_id, g, ingrads):
        query = self._query
        known = self._labels.get(node_id)
        if query is None:  # a vjp called by hand, outside backward_pass
            label, level, number, outgrad = known, self._current_level(), None, self.capture(g)
        else:
            label, level, number = known or query.label, query.level, query.number
            popped = query.popped
            outgrad = popped[1] if popped is not None and popped[0] is g else self.capture(g)
        capture = self.capture
        snapshots = tuple([capture(i) for i in ingrads]) if capture.keeps_values else _nones(len(ingrads))
        if query is not None:
            query.ingrads = (ingrads, snapshots)
            query.vjp_event = len(self._starts)
        self._emit((_LOCALVJP, "rev", level, number, label, outgrad, len(snapshots), *snapshots))

    # -------------------- add_outgrads --------------------

    def before_add_outgrads(self, prev_g_flagged, g):
        """Snapshot ``outgrads.get(parent)`` before autograd may write into it."""
        if not prev_g_flagged:
            return None
        value, mutable = prev_g_flagged
        if mutable and self.capture.keeps_values:  # autograd writes into (part of) `value` next
            snapshot = self._history.share(self.capture(value), value)
            self._history.before_writing(written_leaves(value, g))
            return snapshot, mutable
        query = self._query
        if query is not None and self._frames[-1] is query:
            seen = query.entries.get(self._parent_label(query))
            if seen is not None and seen[0] is value:
                return seen[1], mutable
        return self.capture(value), mutable

    def after_add_outgrads(self, previous, g, result):
        frame = self._frames[-1] if self._frames else None
        value, mutable = result
        if frame is not None and frame is self._query:  # the common case: a backward pass
            parent = self._parent_label(frame)
            position = frame.position
            frame.position = position + 1
            ingrads, snapshots = frame.ingrads or ((), ())
            contribution = snapshots[position] if position < len(ingrads) and ingrads[position] is g \
                else self.capture(g)
            snapshot = contribution if value is g else self.capture(value)
            if mutable and holds_reference(snapshot):  # autograd may write into it later
                snapshot = self._history.share(snapshot, value)
            argnums = frame.argnums
            self._emit((_ADDOUTGRADS, "rev", frame.level, frame.number, frame.label, position, parent,
                        argnums[position] if position < len(argnums) else None, *(previous or _NO_PREVIOUS),
                        contribution, snapshot, mutable))
            if parent is not None:  # the events that hold value: this one, and the vjp that made it
                held = (len(self._starts) - 1, frame.vjp_event) if value is g else (len(self._starts) - 1,)
                frame.entries[parent] = (value, snapshot, held)
        else:
            self._add_outside_a_pass(frame, previous, g, value, mutable)


    def _add_outside_a_pass(self, frame, previous, g, value, mutable):
        """Forward mode (one step of sum_outgrads while a JVPNode is built), or a backward pass
        that began before this recording (no query frame: reverse, query unknown)."""
        forward = type(frame) is _JVPFrame
        position = frame.position if frame is not None else 0
        if frame is not None:
            frame.position = position + 1
        parent = frame.parents[position] if forward and position < len(frame.parents) else None
        argnums = frame.argnums if frame is not None else ()
        contribution = self.capture(g)
        snapshot = contribution if value is g else self.capture(value)
        if mutable and holds_reference(snapshot):
            snapshot = self._history.share(snapshot, value)
        self._emit((_ADDOUTGRADS, "fwd" if forward else "rev",
                          frame.level if frame is not None else self._current_level(),
                          self._query.number if forward and self._query else None,
                          frame.label if frame is not None else None, position, parent,
                          argnums[position] if position < len(argnums) else None, *(previous or _NO_PREVIOUS),
                          contribution, snapshot, mutable))

    def _parent_label(self, query):
        """The label of the parent the next add_outgrads call adds into (zip's position)."""
        parents = query.parents
        if query.position < len(parents):
            parent = parents[query.position]
            return self._labels.get(id(parent)) or self._unrecorded_node(parent)
        return None

    # -------------------- forward-mode nodes --------------------

    def begin_jvp_node(self, fun, argnums, parents):
        labels = tuple(self._lookup(p) for p in parents)
        level = self._levels[id(parents[0])] if parents else self._current_level()
        name, label = self._label(self.begin_node(), fun)
        frame = _JVPFrame(label, name, level, argnums, labels)
        self._push(frame)
        return frame

    def abort_jvp_node(self, frame):
        self._pop(frame)

    def end_jvp_node(self, frame, node, value, args):
        self._pop(frame)
        self._register(id(node), frame.label, frame.level, frame.argnums)
        copy = type(value) is np.ndarray and _is_one_of(value, args)
        tangent_copy = copy or (type(node.g) is np.ndarray and _is_one_of(node.g, args))
        self._emit((_JVPNODECREATED, "fwd", frame.level, self._query and self._query.number, frame.label,
                          frame.name, frame.argnums, ",".join(frame.parents), self.capture(value, copy),
                          self.capture(node.g, tangent_copy)))

    # -------------------- helpers --------------------

    def _push(self, frame):
        self._frames.append(frame)
        if type(frame) is _Query:
            self._query = frame

    def _pop(self, frame):
        if frame in self._frames:
            self._frames.remove(frame)
        if frame is self._query:
            self._query = next((f for f in reversed(self._frames) if type(f) is _Query), None)

    def _emit(self, fields):
        """Append one event: its type index and fields, flat (``adtrace.eventlog``)."""
        self._starts.append(len(self._values))
        self._values.extend(fields)

    def _snapshot(self, seen, value):
        """The snapshot already taken of ``value`` (``seen``: a ``(live value, snapshot)`` pair
        from this query, never written into since), or a new one."""
        if seen is not None and seen[0] is value:
            return seen[1]
        return self.capture(value)

    def _current_level(self):
        return self._frames[-1].level if self._frames else max(hooks.state.depth - 1, 0)


def _is_one_of(value, args):
    for arg in args:
        if arg is value:
            return True
    return False

"""One backward query (``backward_pass`` run): its visits, local VJPs and accumulations.

A query replays ``outgrads`` as far as the recorder needs it: which node's contributions are
arriving (zip's position gives the parent) and the snapshot of each entry, so a value seen again
(the popped outgrad, an unflagged previous) is not captured twice.
"""

from ..history import written_leaves
from ..values import holds_reference
from .kinds import ADDOUTGRADS, BACKWARDEND, BACKWARDSTART, LOCALVJP, TOPOSORTYIELD

_NO_PREVIOUS = (None, None)  # add_outgrads's previous (value, flag) when outgrads.get(parent) was None
_NONES = [(None,) * n for n in range(64)]  # ingrads under capture "structure", without a new tuple


def _nones(n):
    return _NONES[n] if n < len(_NONES) else (None,) * n


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



class BackwardQueries:
    """The Recorder's backward-pass events (a mixin of ``Recorder``)."""

    def begin_query(self, g, end_node):
        self._queries += 1
        end = self._lookup(end_node)
        level = self._levels[id(end_node)]
        query = _Query(self._queries, level, end)
        seed = self.capture(g, copy=True)  # the caller's array: they may change it afterwards
        query.entries[end] = (g, seed, ())
        self._push(query)
        self._emit((BACKWARDSTART, "rev", level, query.number, end, seed))

    def end_query(self, result, error):
        query = self._query
        if query is None:
            return
        self._pop(query)
        snapshot = None if error is not None else self._snapshot(query.popped, result)
        error_name = None if error is None else type(error).__name__
        self._emit((BACKWARDEND, "rev", query.level, query.number, query.end, snapshot, error_name))
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
        self._emit((TOPOSORTYIELD, "rev", query.level, query.number, label, query.visited))
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
        self._emit((LOCALVJP, "rev", level, number, label, outgrad, len(snapshots), *snapshots))

    def before_add_outgrads(self, prev_g_flagged, g):
        """Snapshot ``outgrads.get(parent)`` before autograd may write into it."""
        if not prev_g_flagged:
            return None
        value, mutable = prev_g_flagged
        query, snapshot = self._query, None
        if query is not None and self._frames[-1] is query:  # the snapshot the last result got
            seen = query.entries.get(self._parent_label(query))
            if seen is not None and seen[0] is value:
                snapshot = seen[1]  # a mutable entry's arrays are held through Versions: still true
        if snapshot is None:
            snapshot = self.capture(value)
            if mutable and holds_reference(snapshot):
                snapshot = self._history.share(snapshot, value)
        if mutable and self.capture.keeps_values:  # autograd writes into (part of) `value` next
            self._history.before_writing(written_leaves(value, g))
        return snapshot, mutable

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
            self._emit((ADDOUTGRADS, "rev", frame.level, frame.number, frame.label, position, parent,
                        argnums[position] if position < len(argnums) else None, *(previous or _NO_PREVIOUS),
                        contribution, snapshot, mutable))
            if parent is not None:  # the events that hold value: this one, and the vjp that made it
                held = (len(self._starts) - 1, frame.vjp_event) if value is g else (len(self._starts) - 1,)
                frame.entries[parent] = (value, snapshot, held)
        else:
            self._add_outside_a_pass(frame, previous, g, value, mutable)


    def _parent_label(self, query):
        """The label of the parent the next add_outgrads call adds into (zip's position)."""
        parents = query.parents
        if query.position < len(parents):
            parent = parents[query.position]
            return self._labels.get(id(parent)) or self._unrecorded_node(parent)
        return None

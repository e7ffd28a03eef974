"""Where the recorder writes events: one flat list of plain values, decoded into events on read.

The hot path appends each event's fields (``values.extend``) after its type's index, and nothing
else: where each event starts is found on read, from the number of values each type stores. It
creates no lasting container per event: every object the garbage collector tracks that a
recording keeps alive makes Python's collections come sooner, and on a scalar workload those
collections were most of the recorder's cost. ``(value, mutable)`` pairs are stored as two
values, a node's parent labels as one comma-separated string (labels have no commas), a vjp's
ingrads as their count followed by them; all rebuilt when the event is built.
"""

from bisect import bisect_left
from dataclasses import fields

from .events import EVENT_TYPES, AddOutgrads, JVPNodeCreated, LocalVJP, NodeCreated
from .copy_on_write import resolve
from .values import NO_REFERENCE

ADD_OUTGRADS, LOCAL_VJP = EVENT_TYPES.index(AddOutgrads), EVENT_TYPES.index(LocalVJP)
NODES = (EVENT_TYPES.index(NodeCreated), EVENT_TYPES.index(JVPNodeCreated))
NO_PREVIOUS = None  # stored in the previous-flag slot when add_outgrads got outgrads.get(parent) None

# values stored per event type, its index included: one per field, previous and result of
# add_outgrads two each; a vjp stores its ingrads' count in place of them, then the ingrads
_SIZES = [1 + len(fields(t)) + (2 if t is AddOutgrads else 0) for t in EVENT_TYPES]
_COUNT = 6  # where a vjp's ingrads count is, from its type index


class EventLog:
    __slots__ = ("values", "_starts")

    def __init__(self):
        self.values = []  # [type index, field, field, ..., type index, field, ...]
        self._starts = []  # where each event's type index is in values, as far as found

    @property
    def starts(self):
        """Where each event's type index is in ``values`` (found on read, not by the hot path)."""
        starts, values = self._starts, self.values
        position = starts[-1] + self._size(starts[-1]) if starts else 0
        while position < len(values):
            starts.append(position)
            position += self._size(position)
        return starts

    def _size(self, position):
        kind = self.values[position]
        return _SIZES[kind] + (self.values[position + _COUNT] if kind == LOCAL_VJP else 0)

    def __len__(self):
        return len(self.starts)

    def index_at(self, position):
        """The index of the event whose type index is at ``position`` in ``values``."""
        return bisect_left(self.starts, position)

    def event(self, index):
        """Event ``index``, built from its stored values."""
        start, end = self._span(index)
        kind, fields = self.values[start], [resolve(f) for f in self.values[start + 1:end]]
        if kind == ADD_OUTGRADS:
            *head, previous, previous_flag, contribution, result, result_flag = fields
            previous = None if previous_flag is NO_PREVIOUS else (previous, previous_flag)
            return AddOutgrads(*head, previous, contribution, (result, result_flag))
        if kind == LOCAL_VJP:
            *head, outgrad, count = fields[:6]
            return LocalVJP(*head, outgrad, tuple(fields[6:6 + count]))
        if kind in NODES:
            position = 6  # mode, level, query, label, primitive, argnums, then the parents string
            parents = fields[position]
            fields[position] = tuple(parents.split(",")) if parents else ()
        return EVENT_TYPES[kind](*fields)

    def update(self, start, change):
        """Replace each stored field of the event starting at ``start`` that may hold an array by
        ``change(field)`` (copy-on-write)."""
        values = self.values
        for position in range(start + 1, start + self._size(start)):
            stored = values[position]
            if type(stored) not in NO_REFERENCE:  # labels, levels, flags, summaries: nothing to change
                values[position] = change(stored)

    def _span(self, index):
        starts = self.starts
        return starts[index], starts[index + 1] if index + 1 < len(starts) else len(self.values)

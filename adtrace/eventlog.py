"""Where the recorder writes events: one flat list of plain values, decoded into events on read.

The hot path appends each event's fields (``values.extend``) after its type's index, and notes
where it starts. It creates no lasting container per event: every object the garbage collector
tracks that a recording keeps alive makes Python's collections come sooner, and on a scalar
workload those collections were most of the recorder's cost. ``(value, mutable)`` pairs are
stored as two values, a node's parent labels as one comma-separated string (labels have no
commas), a vjp's ingrads as their count followed by them; all rebuilt when the event is built.
"""

from .history import resolve
from .events import EVENT_TYPES, AddOutgrads, JVPNodeCreated, LocalVJP, NodeCreated

ADD_OUTGRADS, LOCAL_VJP = EVENT_TYPES.index(AddOutgrads), EVENT_TYPES.index(LocalVJP)
NODES = (EVENT_TYPES.index(NodeCreated), EVENT_TYPES.index(JVPNodeCreated))
NO_PREVIOUS = None  # stored in the previous-flag slot when add_outgrads got outgrads.get(parent) None


class EventLog:
    __slots__ = ("values", "starts")

    def __init__(self):
        self.values = []  # [type index, field, field, ..., type index, field, ...]
        self.starts = []  # where each event's type index is in values

    def __len__(self):
        return len(self.starts)

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

    def update(self, index, change):
        """Replace each stored field of event ``index`` by ``change(field)`` (copy-on-write)."""
        start, end = self._span(index)
        values = self.values
        for position in range(start + 1, end):
            values[position] = change(values[position])

    def _span(self, index):
        starts = self.starts
        return starts[index], starts[index + 1] if index + 1 < len(starts) else len(self.values)

"""Where the recorder writes events: one flat list of plain values, decoded into events on read.

The hot path appends each event's head and its fields (``values.extend``), laid out as its
class declares (``events.layout``), and nothing else: where each event starts is found on read,
from the number of slots each type stores. The head is one tuple, ``(type tag, mode, level, query)``
(the fields stored ``HEAD``), kept once in ``HEADS`` and shared by every event alike: those fields
take one slot of the log, not four (a scalar program's log was most of what its recording kept).
It creates no lasting container per event (a head is shared): every object the garbage collector
tracks that a recording keeps alive makes Python's collections come sooner, and on a scalar
workload those collections were most of the recorder's cost.
"""

import contextlib
import gc
from bisect import bisect_left

from . import events
from .events import FORM_STEP, HEAD, LABELS, NO_PREVIOUS, ONE, ONE_ITEM, PAIR, TAIL, Is, Same, layout, parameters
from .values import NO_REFERENCE, resolve

class _Heads(dict):
    """Every head written: ``(type tag, mode, level, query)`` -> itself, one tuple per distinct head, looked up
    as ``HEADS[key]`` (the packers' code: the lookup is the dict's own, a new head added by ``__missing__``).
    Queries are numbered per recording: as many as the largest recording's passes times its kinds and levels."""

    def __missing__(self, key):
        self[key] = key
        return key


HEADS = _Heads()
HEADS_NAME = "__adtrace_heads__"  # the name the packers' code reads it by (in the namespace of a method inlined)


class _Layout:
    """One stored form of an event type (``form``: 0 whole, k its ``forms[k - 1]``): ``size`` slots (its head
    and a tail's count included) and, for a form with a counted tail, where the count is."""

    __slots__ = ("type", "form", "stored", "size", "count_at", "build")

    def __init__(self, event_type, form=0):
        self.type, self.form = event_type, form
        short = event_type.forms[form - 1] if form else {}
        heads = sum(how == HEAD for _, how in layout(event_type))
        # (parameter, how stored): ONE, ONE_ITEM or TAIL, for each parameter the form stores, in order
        self.stored = tuple((name, TAIL if name == _tail(event_type) else ONE) if name not in short
                            else (name, short[name]) for name in parameters(event_type)[heads:]
                            if name not in short or short[name] is ONE_ITEM)
        self.size = 1 + len(self.stored)
        self.count_at = self.size - 1 if self.stored and self.stored[-1][1] == TAIL else None
        self.build = _builder(event_type, short, self.stored)


def _tail(event_type):
    """The name of ``event_type``'s counted tail, or None."""
    name, how = layout(event_type)[-1]
    return name if how == TAIL else None


def _builder(event_type, short, stored):
    """``build(head, slots)``: the event from its head and its stored slots (the head left out, copy-on-write
    resolved), compiled for its stored form (a loop over the layout per event was a third of the time of
    building add_outgrads events)."""
    given, constants = {}, []  # parameter -> its expression over the slots s and the form's constants C
    for i, (name, how) in enumerate(stored):
        given[name] = f"(s[{i}],)" if how is ONE_ITEM else f"tuple(s[{i + 1}:{i + 1} + s[{i}]])" if how == TAIL \
            else f"s[{i}]"
    for name, how in short.items():
        if type(how) is Is:
            given[name] = f"C[{len(constants)}]"
            constants.append(how.value)
    for name, how in short.items():
        if type(how) is Same:
            given[name] = given[how.name]
    fields = []
    for name, how in layout(event_type):
        if how == PAIR:  # (value, flag); NO_PREVIOUS in the flag slot: None
            flag = given[f"{name}_flag"]
            fields.append(f"(None if {flag} is NO_PREVIOUS else ({given[name]}, {flag}))")
        elif how == LABELS:
            fields.append(f"(tuple({given[name]}.split(',')) if {given[name]} else ())")
        elif how != HEAD:
            fields.append(given[name])
    namespace = {"event_type": event_type, "NO_PREVIOUS": NO_PREVIOUS, "C": tuple(constants)}
    exec(f"def build(h, s):\n    return event_type(*h[1:], {', '.join(fields)})", namespace)
    return namespace["build"]


class _Layouts(dict):
    """type tag (or a form's tag) -> ``_Layout``, made when a tag is first read: a type declared after import (a
    test's throwaway kind, tests/recording/test_events.py) is read like the others."""

    def __missing__(self, tag):
        found = self[tag] = _Layout(events.EVENT_TYPES[tag % FORM_STEP], tag // FORM_STEP)
        return found


LAYOUTS = _Layouts()  # by type tag


class EventLog:
    __slots__ = ("values", "_starts")

    def __init__(self):
        self.values = []  # [head, slot, slot, ..., head, slot, ...]
        self._starts = []  # where each event's head is in values, as far as found

    @property
    def starts(self):
        """Where each event's head is in ``values`` (found on read, not by the hot path)."""
        starts, values = self._starts, self.values
        position = starts[-1] + self._size(starts[-1]) if starts else 0
        while position < len(values):
            starts.append(position)
            position += self._size(position)
        return starts

    def _size(self, position):
        stored = LAYOUTS[self.values[position][0]]
        if stored.count_at is None:
            return stored.size
        return stored.size + self.values[position + stored.count_at]

    def __len__(self):
        return len(self.starts)

    def index_at(self, position):
        """The index of the event whose head is at ``position`` in ``values``."""
        return bisect_left(self.starts, position)

    def event(self, index):
        """Event ``index``, built from its stored values."""
        start, end = self._span(index)
        head = self.values[start]
        return LAYOUTS[head[0]].build(head, [resolve(f) for f in self.values[start + 1:end]])

    def events_from(self, index):
        """Events ``index`` onwards, built in one walk over ``values`` (a recording read whole: each event's
        span found as it goes, not looked up per event)."""
        values, starts = self.values, self.starts
        built, end = [], len(values)
        with collector_paused():  # (each full collection would walk every event built so far: quadratic)
            for i in range(index, len(starts)):
                start = starts[i]
                stop = starts[i + 1] if i + 1 < len(starts) else end
                head = values[start]
                built.append(LAYOUTS[head[0]].build(head, [f if type(f) in NO_REFERENCE else resolve(f)
                                                           for f in values[start + 1:stop]]))
        return built

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


@contextlib.contextmanager
def collector_paused():
    """Python's cyclic garbage collector off inside, as ``timeit`` does: a large recording is millions of
    objects (autograd's, the events', the reference engine's), each full collection walks all of them
    (most of the time of tracing, reading or diffing a large scalar program). Back on after, if it was."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()

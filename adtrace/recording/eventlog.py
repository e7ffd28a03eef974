"""Where the recorder writes events: one flat list of plain values, decoded into events on read.

The hot path appends each event's head and its fields (``values.extend``), laid out as its
class declares (``events.layout``), and nothing else: where each event starts is found on read,
from the number of slots each type stores. The head is one tuple, ``(type tag, mode, level, query)``
(the fields stored ``HEAD``), kept once in ``HEADS`` and shared by every event alike: those fields
take one slot of the log, not four (a scalar program's log was most of what its recording kept).
An event that fits one of its type's shorter stored forms (``events.Is``: its common case, a scalar
node's) is stored in that form under the form's own tag, and read back into the same event; a visit's
position given as ``VISITS`` is counted on read (``events_from`` carries the counts from one walk to the next).
It creates no lasting container per event (a head is shared): every object the garbage collector
tracks that a recording keeps alive makes Python's collections come sooner, and on a scalar
workload those collections were most of the recorder's cost.
"""

import contextlib
import gc
from bisect import bisect_left

from . import events
from .events import (FORM_STEP, HEAD, LABELS, NO_PREVIOUS, ONE, ONE_ITEM, PAIR, TAIL, VISITS, Is, Same, layout,
                     parameters)
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

    __slots__ = ("type", "form", "stored", "size", "count_at", "build", "visit", "counted")

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
        self.visit = event_type is events.ToposortYielded  # (counted per query: a position given as VISITS)
        # (its position counted on read: given to build as a slot more)
        self.counted = any(type(how) is Is and how.value is VISITS for how in short.values())


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
        if type(how) is Is and how.value is VISITS:  # (counted on read: given after the stored slots)
            given[name] = f"s[{len(stored)}]"
        elif type(how) is Is:
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
    __slots__ = ("values", "_starts", "_visits")

    def __init__(self):
        self.values = []  # [head, slot, slot, ..., head, slot, ...]
        self._starts = []  # where each event's head is in values, as far as found
        self._visits = (0, {})  # (events built by events_from, query -> its ToposortYielded events among them)

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
        stored = LAYOUTS[head[0]]
        slots = [resolve(f) for f in self.values[start + 1:end]]
        if stored.counted:
            slots.append(self._visits_before(index).get(head[3], 0))
        return stored.build(head, slots)

    def _visits_before(self, index):
        """query -> how many ToposortYielded events of it come before event ``index`` (a position given as VISITS:
        the recorder counted them so)."""
        values, visits = self.values, {}
        for start in self.starts[:index]:
            head = values[start]
            if LAYOUTS[head[0]].visit:
                visits[head[3]] = visits.get(head[3], 0) + 1
        return visits

    def events_from(self, index):
        """Events ``index`` onwards, built in one walk over ``values`` (a recording read whole: each event's
        span found as it goes, not looked up per event)."""
        values, starts = self.values, self.starts
        built, end = [], len(values)
        counted, visits = self._visits
        if counted != index:  # (not where the last walk stopped)
            visits = self._visits_before(index)
        with collector_paused():  # (each full collection would walk every event built so far: quadratic)
            for i in range(index, len(starts)):
                start = starts[i]
                stop = starts[i + 1] if i + 1 < len(starts) else end
                head = values[start]
                stored = LAYOUTS[head[0]]
                slots = [f if type(f) in NO_REFERENCE else resolve(f) for f in values[start + 1:stop]]
                if stored.visit:
                    visited = visits.get(head[3], 0)
                    visits[head[3]] = visited + 1
                    if stored.counted:
                        slots.append(visited)
                built.append(stored.build(head, slots))
        self._visits = (len(starts), visits)
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

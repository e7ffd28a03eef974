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
from types import MemberDescriptorType

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

    __slots__ = ("type", "form", "stored", "size", "count_at", "build", "read", "visit", "counted")

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
        self.read = _reader(event_type, short, self.stored)
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
    slot = [f"tuple(s[{i + 1}:{i + 1} + s[{i}]])" if how == TAIL else f"s[{i}]" for i, (_, how) in enumerate(stored)]
    fields = _fields(event_type, _given(short, stored, slot + [f"s[{len(stored)}]"]))
    namespace = {"event_type": event_type, "NO_PREVIOUS": NO_PREVIOUS, "C": _constants(short)}
    exec(f"def build(h, s):\n    return event_type(*h[1:], {', '.join(fields)})", namespace)
    return namespace["build"]


def _given(short, stored, slot):
    """parameter -> its expression, ``slot[i]`` the expression of stored slot i (``slot[len(stored)]``: the position
    counted on read) and ``C`` the form's constants (``_constants``)."""
    given, constants = {}, 0
    for i, (name, how) in enumerate(stored):
        given[name] = f"({slot[i]},)" if how is ONE_ITEM else slot[i]
    for name, how in short.items():
        if type(how) is Is and how.value is VISITS:  # (counted on read: given after the stored slots)
            given[name] = slot[len(stored)]
        elif type(how) is Is:
            given[name] = f"C[{constants}]"
            constants += 1
    for name, how in short.items():
        if type(how) is Same:
            given[name] = given[how.name]
    return given


def _constants(short):
    return tuple(how.value for how in short.values() if type(how) is Is and how.value is not VISITS)


def _fields(event_type, given):
    """The expression of each field of ``event_type``'s but its head's, in order."""
    fields = []
    for name, how in layout(event_type):
        if how == PAIR:  # (value, flag); NO_PREVIOUS in the flag slot: None
            flag = given[f"{name}_flag"]
            fields.append(f"(None if {flag} is NO_PREVIOUS else ({given[name]}, {flag}))")
        elif how == LABELS:
            fields.append(f"(tuple({given[name]}.split(',')) if {given[name]} else ())")
        elif how != HEAD:
            fields.append(given[name])
    return fields


def _reader(event_type, short, stored):
    """``read(values, p, h, visited)``: the event whose head ``h`` is at ``values[p]`` (``visited``: its position
    counted on read), built straight from the log: each stored slot read and resolved in place (no list of slots
    made) and, for an event class with slots and no ``__post_init__``, each field set through its slot as the
    frozen dataclass's ``__init__`` does (``object.__setattr__``), without that call's per-field lookups: a
    scalar program's report builds four events per node, a million nodes' four million."""
    lines, slot = [], []
    for i, (name, how) in enumerate(stored):
        if how == TAIL:  # (the last slot: its count, then its items)
            lines.append(f"t = p + {i + 2}")
            lines.append(f"s{i} = tuple([f if type(f) in NR else R(f) for f in values[t:t + values[t - 1]]])")
        else:
            lines += [f"s{i} = values[p + {i + 1}]", f"if type(s{i}) not in NR: s{i} = R(s{i})"]
        slot.append(f"s{i}")
    slot.append("visited")
    fields = _fields(event_type, _given(short, stored, slot))
    setters = _slot_setters(event_type)
    namespace = {"T": event_type, "NO_PREVIOUS": NO_PREVIOUS, "C": _constants(short), "NR": NO_REFERENCE,
                 "R": _resolved, "new": object.__new__}
    if setters is None:
        lines.append(f"return T(*h[1:], {', '.join(fields)})")
    else:
        namespace.update({f"S{k}": setter for k, setter in enumerate(setters)})
        heads = sum(how == HEAD for _, how in layout(event_type))  # (first, as the builder's call has them)
        lines.append("e = new(T)")
        lines += [f"S{k}(e, {f'h[{k + 1}]' if k < heads else fields[k - heads]})" for k in range(len(setters))]
        lines.append("return e")
    exec("def read(values, p, h, visited):\n    " + "\n    ".join(lines), namespace)
    return namespace["read"]


def _slot_setters(event_type):
    """The ``__set__`` of each field's slot, in field order; None where a field has no slot or the class
    would run more than setting its fields (a ``__post_init__``)."""
    if hasattr(event_type, "__post_init__"):
        return None
    setters = []
    for name, _ in layout(event_type):
        owner = next((k for k in event_type.__mro__ if name in vars(k)), None)
        member = vars(owner).get(name) if owner is not None else None
        if type(member) is not MemberDescriptorType:
            return None
        setters.append(member.__set__)
    return setters


def _resolved(stored):
    """``resolve(stored)``; a tuple of plain scalars (a node's argnums) given back as it is, without the walk."""
    if type(stored) is tuple and stored and type(stored[0]) is not str:  # (a str first: maybe a stored form)
        for item in stored:
            if type(item) not in NO_REFERENCE:
                return resolve(stored)
        return stored
    return resolve(stored)


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
        position, end, append = starts[-1] + self._size(starts[-1]) if starts else 0, len(values), starts.append
        while position < end:
            append(position)
            stored = LAYOUTS[values[position][0]]  # (_size's, inline: this loop reads every event)
            count_at = stored.count_at
            position += stored.size if count_at is None else stored.size + values[position + count_at]
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
        span found as it goes, not looked up per event, and where each starts noted as it is read: ``starts``
        not walked first)."""
        values, starts = self.values, self._starts
        if index > len(starts):
            starts = self.starts
        built = []
        counted, visits = self._visits
        if counted != index:  # (not where the last walk stopped)
            visits = self._visits_before(index)
        # One loop: the starts found already from ``index`` on are found again as it walks (the same positions).
        position = starts[index] if index < len(starts) else starts[-1] + self._size(starts[-1]) if starts else 0
        del starts[index:]
        with collector_paused():  # (each full collection would walk every event built so far: quadratic)
            append, layouts, end, found = built.append, LAYOUTS, len(values), starts.append
            while position < end:
                found(position)
                head = values[position]
                stored = layouts[head[0]]
                if stored.visit:
                    visited = visits.get(head[3], 0)
                    visits[head[3]] = visited + 1
                    append(stored.read(values, position, head, visited))
                else:
                    append(stored.read(values, position, head, None))
                count_at = stored.count_at
                position += stored.size if count_at is None else stored.size + values[position + count_at]
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

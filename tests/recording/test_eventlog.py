"""The event log: flat fields written by the recorder, built into events on read, corrected in place."""

import dataclasses
from typing import ClassVar

import autograd.numpy as anp
import numpy as np
import pytest
from autograd import grad
from autograd.extend import defvjp, primitive

import adtrace
from adtrace.recording.events import AddOutgrads, NodeCreated, VJPCalled
from adtrace.recording.recording import RecordingWriter


def recorded(f, x, capture="full"):
    with adtrace.record(capture=capture) as rec:
        grad(f)(x)
    return rec


def test_packed_fields_are_rebuilt():
    """(value, flag) pairs, ingrads as count + values and parents as one string come back as tuples."""
    rec = recorded(lambda x: anp.sin(x) * x, 0.5)
    mul = next(e for e in rec.of_kind("node") if e.primitive == "multiply")
    assert type(mul) is NodeCreated and mul.parents == ("v1_sin", "v0_root")
    vjp = next(e for e in rec.of_kind("vjp") if e.node == mul.label)
    assert type(vjp) is VJPCalled and vjp.ingrads == (0.5, np.sin(0.5))
    first, second = [e for e in rec.of_kind("add_outgrads") if e.parent == "v0_root"]
    assert type(first) is AddOutgrads and first.previous is None and first.result == (np.sin(0.5), False)
    assert second.previous == (np.sin(0.5), False) and second.result[1] is True


def test_update_changes_stored_fields_and_rebuilds_a_built_event():
    rec = recorded(lambda x: anp.sum(x * 2.0), np.array([1.0, 2.0]))
    index = next(i for i, e in enumerate(rec.events) if e.kind == "backward_end")
    before = rec.events[index].result
    replacement = np.array([-1.0, -1.0])
    writer = RecordingWriter(rec)
    writer.update(writer.log.starts[index], lambda stored: replacement if stored is before else stored)
    assert rec.events[index].result is replacement  # the built event was rebuilt
    assert writer.log.event(index).result is replacement  # and the stored field changed
    assert rec.events[index].end == "v2_sum"  # the other fields are untouched


def test_every_event_type_is_found_where_it_starts():
    """Starts are found on read from each type's size: a size that disagrees with what the recorder
    writes would misread every later event."""
    from autograd import make_jvp
    from adtrace.recording.eventlog import LAYOUTS
    from adtrace.recording.events import EVENT_TYPES

    with adtrace.record() as rec:
        grad(grad(lambda x: anp.sin(x) * x))(0.3)
        make_jvp(lambda x: anp.sum(x * x))(np.array([1.0, 2.0]))(np.ones(2))
        with pytest.warns(UserWarning, match="Output seems independent of input"):
            grad(lambda x: 3.0)(1.0)
        with np.errstate(all="ignore"):
            try:
                grad(lambda x: anp.log(x) * _raises(x))(1.0)  # a pass that ends with an error
            except ZeroDivisionError:
                pass
    assert {type(e) for e in rec.events} == set(EVENT_TYPES)
    log = RecordingWriter(rec).log
    starts, values = log.starts, log.values
    assert len(starts) == len(rec.events) and starts[0] == 0
    assert all(LAYOUTS[values[start][0]].type is type(e) for start, e in zip(starts, rec.events))
    assert {LAYOUTS[values[start][0]].form for start in starts} > {0}  # some events in a shorter stored form
    assert starts[-1] + LAYOUTS[values[starts[-1]][0]].size == len(values)  # the last event: backward_end


@primitive
def _raises(x):
    return x


defvjp(_raises, lambda ans, x: lambda g: 1 / 0)


# -------------------- every stored event matches its declared layout --------------------

from typing import Any, Union, get_args, get_origin, get_type_hints  # noqa: E402

from corpus import CASES, run  # noqa: E402

from adtrace.recording.eventlog import HEADS  # noqa: E402
from adtrace.recording.eventlog import LAYOUTS  # noqa: E402
from adtrace.recording.events import ToposortYielded  # noqa: E402
from adtrace.recording.events import (EVENT_TYPES, FORM_STEP, HEAD, LABELS, NO_PREVIOUS, ONE, ONE_ITEM, PAIR,  # noqa: E402
                                     TAIL, layout)


def _accepts(hint, value):
    """Whether a stored slot holding ``value`` fits the field's annotation (Any: anything)."""
    if hint is Any:
        return True
    if get_origin(hint) is Union:
        return any(_accepts(h, value) for h in get_args(hint))
    if hint is type(None):
        return value is None
    if hint is int:
        return type(value) is int
    return isinstance(value, hint)


def _check_layout(values):
    """Walk the flat log as the layouts (and their shorter stored forms) say; each slot must fit its field.
    Returns the count."""
    position, count = 0, 0
    while position < len(values):
        head = values[position]
        assert type(head) is tuple and HEADS.get(head) is head, f"no head kept once at {position}: {head!r}"
        tag = head[0]
        assert type(tag) is int and 0 <= tag % FORM_STEP < len(EVENT_TYPES), f"no type tag at {position}: {tag!r}"
        event_type = EVENT_TYPES[tag % FORM_STEP]
        form = event_type.forms[tag // FORM_STEP - 1] if tag // FORM_STEP else {}
        hints = get_type_hints(event_type)
        position += 1
        in_head = iter(head[1:])
        for name, how in layout(event_type):
            hint = hints[name]
            if how == HEAD:
                field = next(in_head)
                assert _accepts(hint, field), (event_type.kind, name, field)
            elif name in form or f"{name}_flag" in form:  # (left out, or a tail of one item stored alone)
                position += form.get(name) is ONE_ITEM
            elif how == ONE:
                assert _accepts(hint, values[position]), (event_type.kind, name, values[position])
                position += 1
            elif how == PAIR:
                flag = values[position + 1]
                no_previous = flag is NO_PREVIOUS and get_origin(hint) is Union
                assert type(flag) is bool or no_previous, (event_type.kind, name)
                position += 2
            elif how == LABELS:
                labels = values[position]
                assert type(labels) is str and (labels == "" or all(labels.split(","))), (event_type.kind, labels)
                position += 1
            else:
                assert how == TAIL and type(values[position]) is int, (event_type.kind, name)
                position += 1 + values[position]
        assert next(in_head, None) is None, (event_type.kind, head)
        count += 1
    assert position == len(values)
    return count


@pytest.mark.parametrize("capture", ["auto", "full", "structure"])
def test_every_tuple_the_recorder_writes_matches_its_declared_layout(capture):
    with pytest.warns(UserWarning), np.errstate(all="ignore"), adtrace.record(capture=capture) as rec:
        for case in CASES:
            run(case)
        grad(lambda x: 3.0)(1.0)  # independent output: a trace and no pass
    assert {type(e) for e in rec.events} == set(EVENT_TYPES)  # every kind written
    assert _check_layout(RecordingWriter(rec).log.values) == len(rec.events) > 1000


def test_the_layout_check_catches_a_slot_too_many():
    with adtrace.record() as rec:
        grad(lambda x: x * x)(3.0)
    values = list(RecordingWriter(rec).log.values)
    add = next(i for i, v in enumerate(values) if type(v) is tuple and v[0] == AddOutgrads.index)
    with pytest.raises(AssertionError):
        _check_layout(values[:add + 5] + ["extra"] + values[add + 5:])


def test_a_visit_s_position_is_counted_on_read_wherever_reading_starts():
    """autograd's recorder leaves a visit's position out (events.VISITS): read whole, read per event, or read
    while recording, each query's visits are numbered from 0."""
    with adtrace.record(capture="structure") as rec:
        grad(grad(lambda x: anp.sin(x) * x))(0.3)
        first = len(rec.events)  # (read mid-recording: the next walk starts here)
        grad(lambda x: anp.cos(x) * x * x)(0.5)
    log = RecordingWriter(rec).log
    visits = {}
    for e in rec.events:
        if type(e) is ToposortYielded:
            visits.setdefault(e.query, []).append(e.position)
    assert len(visits) == 3 and all(p == list(range(len(p))) for p in visits.values()), visits
    assert [log.event(i) for i in range(len(log))] == rec.events == log.events_from(0)
    assert log.events_from(first) == rec.events[first:]
    assert {LAYOUTS[log.values[s][0]].counted for s in log.starts} == {False, True}


# -------------------- a recording read whole: the same events as one read per event --------------------


def _same(a, b):
    """The same field value: the same object, or equal values of the same type (arrays element by element)."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if type(a) in (tuple, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)
    if dataclasses.is_dataclass(a):
        return all(_same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    return a == b or (a != a and b != b)


def _same_event(a, b):
    return type(a) is type(b) and all(_same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))


@pytest.mark.parametrize("capture", ["auto", "full", "structure"])
def test_a_log_read_whole_gives_the_events_read_one_by_one(capture):
    """``events_from`` builds each event straight from the log (``_Layout.read``: slots read in place, fields set
    through the class's slots); ``event(i)`` through the class's constructor: every field the same, in every stored
    form the corpus writes, sites kept or not."""
    with pytest.warns(UserWarning), np.errstate(all="ignore"), adtrace.record(capture=capture, sites=True) as rec:
        for case in CASES:
            run(case)
        grad(lambda x: 3.0)(1.0)
        grad(lambda x: anp.sin(x) * 1.5)(0.3)  # (a scalar chain's short forms)
    log = RecordingWriter(rec).log
    whole = log.events_from(0)
    assert len(whole) == len(log) > 1000
    assert {LAYOUTS[log.values[s][0]].form for s in log.starts} > {0}
    different = [i for i, e in enumerate(whole) if not _same_event(e, log.event(i))]
    assert different == [], (different[:3], [(whole[i], log.event(i)) for i in different[:1]])


def test_a_class_with_a_post_init_is_read_through_its_constructor():
    """An event class that runs more than setting its fields (``__post_init__``) is built by calling it."""
    from adtrace.recording import eventlog, events, packers
    from adtrace.recording.packers import write

    before = events.EVENT_TYPES
    made = []

    @events.event
    class Counted(events.Event):
        kind: ClassVar[str] = "test_counted"
        node: str

        def __post_init__(self):
            made.append(self.node)

    try:
        values = []
        write(values, Counted, mode="rev", level=0, query=None, node="v1_sin")
        log = eventlog.EventLog()
        log.values = values
        assert log.events_from(0) == [Counted("rev", 0, None, "v1_sin")]
        assert made == ["v1_sin", "v1_sin"]  # (read, then the one compared with)
    finally:
        events.EVENT_TYPES = before
        eventlog.LAYOUTS.pop(Counted.index, None)
        packers.PACKERS.pop(Counted.index, None)


def test_resolved_keeps_a_tuple_of_scalars_and_resolves_anything_else():
    from adtrace.recording.eventlog import _resolved
    from adtrace.recording.values import ARRAY_SUMMARY, ArraySummary, Version

    argnums = (0, 1)
    assert _resolved(argnums) is argnums and _resolved(()) == ()
    array = np.ones(2)
    assert _resolved((0, Version(array)))[1] is array  # a Version inside: resolved
    summary = _resolved((ARRAY_SUMMARY, (2,), "float64", 1.0, 1.0, 1.0))  # a stored form: its dataclass
    assert type(summary) is ArraySummary

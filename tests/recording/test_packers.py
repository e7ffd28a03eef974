"""Events written by name: every packer writes the layout the event log reads back, and a write with a
field missing, misnamed or out of order fails loudly (inlined writes at import)."""

import importlib.util
import textwrap

import pytest

from adtrace.recording.eventlog import EventLog
from adtrace.recording.events import (EVENT_TYPES, LABELS, NO_PREVIOUS, PAIR, TAIL, AddOutgrads, ToposortYielded,
                                      VJPCalled, layout)
from adtrace.recording.packers import parameters, write


def sample(event_type, salt=""):
    """An event of ``event_type`` whose every field has a value of its own."""
    fields = {}
    for name, how in layout(event_type):
        if how == PAIR:
            fields[name] = (f"{name}{salt}", name == "result")
        elif how == LABELS:
            fields[name] = (f"v1_{name}{salt}", f"v2_{name}{salt}")
        elif how == TAIL:
            fields[name] = (f"{name}{salt}-0", f"{name}{salt}-1", f"{name}{salt}-2")
        else:
            fields[name] = f"{name}{salt}"
    return event_type(**fields)


def by_name(event):
    """The keywords a recorder writes ``event`` with: a pair as value and flag, labels joined."""
    fields = {}
    for name, how in layout(type(event)):
        value = getattr(event, name)
        if how == PAIR:
            fields[name], fields[f"{name}_flag"] = (None, NO_PREVIOUS) if value is None else value
        elif how == LABELS:
            fields[name] = ",".join(value)
        else:
            fields[name] = value
    return fields


def test_every_packer_writes_what_the_event_log_reads_back():
    events = [sample(t, salt) for salt in ("", "-again") for t in EVENT_TYPES]  # each read where the last ends
    log = EventLog()
    for event in events:
        write(log.values, type(event), **by_name(event))
    assert [log.event(i) for i in range(len(log))] == events


def test_a_first_contribution_has_no_previous_pair():
    event = sample(AddOutgrads)
    first = AddOutgrads(**{**{name: getattr(event, name) for name, _ in layout(AddOutgrads)}, "previous": None})
    log = EventLog()
    write(log.values, AddOutgrads, **by_name(first))
    assert log.event(0).previous is None and log.event(0) == first


def test_an_empty_tail_and_empty_labels():
    vjp = VJPCalled(mode="rev", level=0, query=1, node="v0_root", outgrad=1.0, ingrads=())
    log = EventLog()
    write(log.values, VJPCalled, **by_name(vjp))
    write(log.values, VJPCalled, **by_name(vjp))
    assert len(log) == 2 and log.event(1) == vjp


@pytest.mark.parametrize("change", ["missing", "misnamed", "unknown"])
def test_a_write_with_a_field_missing_or_misnamed_fails(change):
    fields = by_name(sample(AddOutgrads))
    if change == "missing":
        del fields["parent"]
    elif change == "misnamed":
        fields["parents"] = fields.pop("parent")
    else:
        fields["kept"] = None
    values = []
    with pytest.raises(TypeError):
        write(values, AddOutgrads, **fields)
    assert values == []


def load(tmp_path, body, name="writers"):
    """A module whose class ``Writer`` is compiled by ``inline_writes`` (it needs its source in a file)."""
    path = tmp_path / f"{name}.py"
    path.write_text("from adtrace.recording.events import *\n"
                    "from adtrace.recording.packers import inline_writes, write\n\n"
                    "@inline_writes\nclass Writer:\n" + textwrap.indent(textwrap.dedent(body), "    "))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Writer


def test_inlined_writes_are_the_packers_own_statements(tmp_path):
    """One method per event type, each write compiled inline: no call left, the same slots written."""
    methods = "".join(
        f"def write_{t.__name__}(self, values, {', '.join(parameters(t))}):\n"
        f"    write(values, {t.__name__}, {', '.join(f'{p}={p}' for p in parameters(t))})\n"
        for t in EVENT_TYPES)
    writer = load(tmp_path, methods)
    for event_type in EVENT_TYPES:
        method = getattr(writer, f"write_{event_type.__name__}")
        assert "write" not in method.__code__.co_names
        fields = by_name(sample(event_type))
        inlined, called = [], []
        method(writer(), inlined, **fields)
        write(called, event_type, **fields)
        assert inlined == called


def test_inlined_writes_evaluate_their_fields_once_in_order(tmp_path):
    writer = load(tmp_path, """
        def go(self, values, seen):
            write(values, ToposortYielded, mode=seen("mode"), level=seen("level"), query=seen("query"),
                  node=seen("node"), position=seen("position"))
    """)
    seen, values = [], []
    writer().go(values, lambda name: seen.append(name) or name)
    assert seen == ["mode", "level", "query", "node", "position"]
    assert values == [ToposortYielded.index, *seen]


@pytest.mark.parametrize("keywords, complaint", [
    ("mode=1, level=2, query=3, position=5", "takes mode, level, query, node, position"),  # missing
    ("mode=1, level=2, query=3, nod=4, position=5", "got mode, level, query, nod, position"),  # misnamed
    ("mode=1, level=2, query=3, position=5, node=4", "in this order"),  # out of order
])
def test_an_inlined_write_that_does_not_match_its_declaration_fails_at_import(tmp_path, keywords, complaint):
    with pytest.raises(TypeError, match=complaint):
        load(tmp_path, f"""
            def go(self, values):
                write(values, ToposortYielded, {keywords})
        """)


def test_an_inlined_tail_must_be_a_name(tmp_path):
    """The tail is read twice (its count, then its items): an expression would run twice."""
    with pytest.raises(TypeError, match="give it as a name"):
        load(tmp_path, """
            def go(self, values, ingrads):
                write(values, VJPCalled, mode=1, level=2, query=3, node=4, outgrad=5, ingrads=tuple(ingrads))
        """)

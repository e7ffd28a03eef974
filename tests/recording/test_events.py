"""An event kind is declared once (``events.py``) and every consumer follows from the class: a
throwaway kind, declared in this file, runs through the event log, the JSON export, the report's
sections, the snapshots and the page's data; each shows it or says it does not, and no count or
cap goes wrong."""

import dataclasses
import json
import re
from collections import Counter
from typing import ClassVar

import pytest

import adtrace
from adtrace.recording import eventlog, events, packers, snapshots
from adtrace.recording.events import Event, event
from adtrace.recording.packers import write
from adtrace.recording.recording import Recording, RecordingWriter
from adtrace.report import ReportOptions, render_recording
from adtrace.report.export import events_json
from adtrace.view.data import page_data
from readme import readme
from seed import record_square


@pytest.fixture
def noted():
    """A kind no consumer was written for: a note on the node being visited, inside a backward pass.
    Declared for this test only: afterwards the event types, the event log's layouts and the packers are as before."""
    before = events.EVENT_TYPES

    @event
    class Noted(Event):
        kind: ClassVar[str] = "test_noted"
        statement: ClassVar[str] = "note(node, text)"
        in_backward_pass: ClassVar[bool] = True
        node: str
        text: str

    yield Noted
    events.EVENT_TYPES = before
    eventlog.LAYOUTS.pop(Noted.index, None)
    packers.PACKERS.pop(Noted.index, None)


def with_notes(recording, noted):
    """A copy of ``recording`` whose event log has a ``Noted`` after each visit (``toposort``)."""
    copy = Recording(recording.capture, engine=recording.engine, code=recording.code)
    built = recording.events  # (first: a value class's calls may be told to its recorder when read)
    log, written = RecordingWriter(recording).log, RecordingWriter(copy).values
    values, starts = log.values, log.starts
    for start, end, e in zip(starts, list(starts[1:]) + [len(values)], built):
        written.extend(values[start:end])
        if e.kind == "toposort":
            write(written, noted, mode=e.mode, level=e.level, query=e.query, node=e.node, text=f"seen {e.node}")
    return copy


@pytest.mark.parametrize("engine", ["autograd", "micrograd"])
def test_a_new_event_kind_runs_through_every_consumer(noted, engine):
    plain = record_square(engine)
    rec = with_notes(plain, noted)
    notes = rec.of_kind("test_noted")

    # the event log: written as declared, read back as the class, the other events untouched
    assert [(n.node, n.text) for n in notes] == [(v, f"seen {v}") for v in plain.visit_order(1)]
    assert rec.of_kind(noted) == notes and len(rec.events) == len(plain.events) + len(notes)
    assert [e for e in rec.events if not isinstance(e, noted)] == plain.events
    assert rec.query_events(1) == [e for e in rec.events if e.query == 1]  # a step of the backward pass

    # the JSON export: every event, the new one with its kind and fields
    exported = json.loads(events_json(rec))["events"]
    assert len(exported) == len(rec.events)
    assert [(e["node"], e["text"]) for e in exported if e["kind"] == "test_noted"] == [(n.node, n.text) for n in notes]

    # snapshots: a kind that declares no replay makes no row (and no count says it does)
    assert [(r.statement, r.node, r.outgrads) for r in rec.snapshots(1)] == [
        (r.statement, r.node, r.outgrads) for r in plain.snapshots(1)]
    assert rec.tally(rec.query_events(1)).rows == len(plain.snapshots(1))

    # the report: the call sequence shows the note's statement and fields; the snapshot table is the
    # one without notes, says it leaves them out, and has no "more rows" line
    report = render_recording(rec, ReportOptions())
    call_rows = [line for line in report.splitlines() if "note(node, text)" in line]
    assert len(call_rows) == len(notes)
    assert all(n.node in row and n.text in row for n, row in zip(notes, call_rows))
    assert "- | - | - |" not in "".join(call_rows)
    assert "more rows" not in report
    snapshots, plain_snapshots = (section(r, "## State snapshot") for r in (report, render_recording(plain)))
    assert table_lines(snapshots) == table_lines(plain_snapshots)
    assert f"_Not in this table: {len(notes)} `test_noted` events" in snapshots
    assert "Not in this table" not in plain_snapshots

    # the page: its steps are the snapshot rows; a note is no step, and the page says so
    page, plain_page = page_data(rec), page_data(plain)
    (page_pass,), (plain_pass,) = page["passes"], plain_page["passes"]
    assert page_pass["steps"] == plain_pass["steps"]
    assert len(page_pass["steps"]["statement"]) == len(rec.snapshots(1))
    assert [n for n in page["notes"] if n not in plain_page["notes"]] == [
        f"Not on this page: {len(notes)} test_noted events (a kind the page has no step for; the report's call "
        "sequence and the JSON export show them)."]


def section(report, title):
    return report.split(title)[1].split("\n## ")[0]


def table_lines(text):
    return [line for line in text.splitlines() if line.startswith("|")]


def test_of_kind_takes_kind_strings_and_classes():
    rec = record_square("autograd")
    assert rec.of_kind("node") == rec.of_kind(events.NodeCreated) == [e for e in rec.events if e.kind == "node"]
    assert rec.of_kind("root", "node") == [e for e in rec.events if e.is_node]
    assert rec.of_kind("no such kind") == []


def test_the_kind_constants_are_read_from_the_classes(noted):
    assert adtrace.events.NODE_KINDS == ("root", "node", "jvp_root", "jvp_node")
    assert adtrace.events.BACKWARD_PASS_KINDS == (
        "backward_start", "toposort", "vjp", "add_outgrads", "backward_end", "test_noted")
    from adtrace.events import BACKWARD_PASS_KINDS
    assert BACKWARD_PASS_KINDS[-1] == "test_noted"


def test_each_statement_of_backward_pass_is_a_step_of_one_kind():
    """A kind that stands for a statement (its ``steps``) takes it from the kind that had it (a new
    ``pop`` kind takes ``POP`` from ``toposort``): two kinds declaring one statement would make two
    snapshot rows for one run of it. (``NO_PARENTS`` is a row of ``vjp``'s, made when ``ingrads`` is ``()``.)"""
    declared = Counter(statement for t in events.EVENT_TYPES for statement in t.steps)
    assert [statement for statement, kinds in declared.items() if kinds > 1] == []
    assert set(declared) | {snapshots.NO_PARENTS} == set(snapshots.STATEMENTS)


def readme_event_table():
    """The README's event table: ``{kind: [its fields]}`` in its order (the names in backquotes
    outside parentheses: what follows a field in parentheses describes it)."""
    table = readme().split("| kind | emitted by | fields |\n", 1)[1].split("\n\n", 1)[0]
    rows = [line.split(" | ") for line in table.splitlines()[1:]]
    fields = {}
    for kind, _, cell in rows:
        while re.search(r"\([^()]*\)", cell):
            cell = re.sub(r"\([^()]*\)", "", cell)
        fields[kind.strip("| `")] = re.findall(r"`(\w+)`", cell)
    return fields


def test_the_readme_lists_every_event_kind_with_its_fields():
    """Every declared kind, in declaration order, with its fields; the fields every event has are
    said once above the table."""
    common = [f.name for f in dataclasses.fields(Event)]
    assert re.search(r"Every event has `kind`, " + r" .*?, ".join(f"`{name}`" for name in common[:-1])
                     + rf" .*? and `{common[-1]}`", " ".join(readme().split()))
    declared = {t.kind: [f.name for f in dataclasses.fields(t)][len(common):] for t in events.EVENT_TYPES}
    assert list(readme_event_table().items()) == list(declared.items())

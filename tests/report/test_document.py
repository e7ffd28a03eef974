"""The report's sections: declared once, in the order CONTRIBUTING gives, and shown in that order."""

import importlib
import inspect
import re
from pathlib import Path

import autograd.numpy as anp
import pytest
from autograd import make_jvp

import adtrace.report
from adtrace.checker import check_call
from adtrace.compare.traced_call import trace_call
from adtrace.report import ReportOptions, render, render_recording
from adtrace.report.document import SECTIONS, Inputs, _reference_counts
from adtrace.report.nesting import Nesting
from seed import record_square

CONTRIBUTING = Path(__file__).resolve().parents[2] / "CONTRIBUTING.md"


def test_every_section_function_of_the_report_stage_is_declared():
    folder = Path(adtrace.report.__file__).parent
    defined = set()
    for path in folder.glob("*.py"):
        module = importlib.import_module(f"adtrace.report.{path.stem}")
        defined |= {f for name, f in vars(module).items()
                    if name.endswith("_section") and inspect.isfunction(f) and f.__module__ == module.__name__}
    assert defined and defined == {s.render for s in SECTIONS}


def test_the_declared_order_is_the_one_contributing_gives():
    order = re.search(r"Today's order: ([^.]*)\.", " ".join(CONTRIBUTING.read_text().split())).group(1)
    assert order.split(", ") == [s.name for s in SECTIONS]


def f(x):
    inner = make_jvp(lambda y: y * y)(x)(1.0)[1]  # forward mode inside: the recording's own jvp events
    return x * x + anp.sin(x) * inner


def test_a_report_shows_every_section_it_has_in_the_declared_order():
    call = trace_call(f, (0.7,), mode="both")
    check_call(call, f)
    options = ReportOptions()
    inputs = Inputs(call.recording, Nesting(call.recording), options, call=call,
                    reference_counts=_reference_counts(call.reference))
    text, position, shown = render(call, options), 0, []
    for section in SECTIONS:
        arguments = section.reads(inputs)
        part = arguments and section.render(*arguments)
        if part:
            found = text.find(part, position)
            assert found >= position, f"{section.name} is not where the declaration puts it"
            position, shown = found + len(part), shown + [section.name]
    # (the order is the positions above: a section declared anywhere needs no change here)
    assert {"summary", "work", "graph", "side by side", "forward run", "node checks"} <= set(shown)


@pytest.mark.parametrize("engine", ["autograd", "micrograd"])
def test_no_section_shows_a_nameless_cell(engine):
    """A section reads what every engine records, not only autograd's: a micrograd leaf's primitive is
    ``''`` (``profile.primitive_of`` names it ``(leaf)``), a root has none. No table cell of a report
    is empty or an empty code span (what a section written against autograd alone prints)."""
    report = render_recording(record_square(engine), ReportOptions())
    rows = [line for line in report.splitlines() if line.startswith("| ") and not line.startswith("|--")]
    cells = [cell.strip() for row in rows for cell in row.strip("|").split(" | ")]
    assert len(rows) > 10
    assert [cell for cell in cells if cell in ("", "``", "\\`\\`")] == []


def test_a_report_is_written_with_the_cyclic_collector_paused_and_restored_as_it_was(monkeypatch):
    import gc

    from adtrace.report import document

    seen = []

    def nesting(recording):  # (read first by each report, before any section)
        seen.append(gc.isenabled())
        return Nesting(recording)

    monkeypatch.setattr(document, "Nesting", nesting)
    call = trace_call(lambda x: anp.sin(x) * x, (0.5,))
    for enabled in (True, False):
        (gc.enable if enabled else gc.disable)()
        try:
            assert render(call) and render_recording(call.recording)
            assert gc.isenabled() is enabled
        finally:
            gc.enable()
    assert len(seen) == 4 and not any(seen)

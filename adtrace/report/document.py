"""Whole reports assembled from sections, declared once, in order (``SECTIONS``): both kinds of
report (a ``Recording``'s, a ``TracedCall``'s) are that list, each section called with what it reads
or left out where its report has no such input."""

from dataclasses import dataclass
from operator import attrgetter
from typing import Any, Callable, Optional

from ..recording.eventlog import collector_paused
from ..recording.events import FWD, REV
from ..recording.recording import RENDERERS
from .options import ReportOptions
from .abbreviate import clip
from .fit import LINE_WIDTH
from .format import text
from .compared import forward_comparison_section, side_by_side_section, summary_section
from .graph import graph_section
from .left_out import left_out_section
from .nested import nested_section
from .nesting import Nesting
from .node_checks import node_checks_section
from .profile import work_section
from .lecture import lecture_mapping_section
from .recorded import (call_sequence_section, forward_section, levels_section, never_computed_line,
                       pass_findings_lines, snapshot_section)


@dataclass(frozen=True)
class Inputs:
    """What a section may read. ``recording``: the call's reverse-mode recording, else its forward one
    (``reverse`` says which); ``call`` None in a recording's report."""

    recording: Any
    nesting: Nesting
    options: ReportOptions
    reverse: bool = True
    call: Any = None
    reference_counts: Optional[list] = None  # the reference engine's count per lecture line (a call's)

    @property
    def mode(self):
        return REV if self.reverse else FWD


@dataclass(frozen=True)
class Section:
    name: str  # what the tests and CONTRIBUTING call it
    render: Callable  # the section function: Markdown, "" when it has nothing to show
    reads: Callable  # Inputs -> its arguments, or None where this report has no such section


def explanations_section(recording):
    """Why a gradient is zero or not finite (``explain/``, a later stage: its renderer is declared in
    ``adtrace/__init__.py``); "" when none is, or adtrace is used without its explain stage."""
    render = RENDERERS.get("explanations")
    return render(recording) if render is not None else ""


# The report's order, in one place (CONTRIBUTING's recipe names it; tests/report/test_document.py holds
# it): the result and the checks, where the work went, the picture; then the backward pass in detail
# (levels, every call, the state after each statement, the lecture's lines), the two engines side by
# side right after it, then forward mode; the per-node checks; the appendix of nested passes and what
# the report left out close it.
SECTIONS = (
    Section("summary", summary_section, lambda i: i.call and (i.call,)),
    Section("explanations", explanations_section, lambda i: i.reverse and (i.recording,)),
    Section("work", work_section, lambda i: (i.recording, i.nesting, i.mode)),
    Section("graph", graph_section, lambda i: (i.recording, i.nesting, i.options, i.mode)),
    Section("levels", levels_section, lambda i: i.reverse and (i.recording, i.nesting)),
    Section("call sequence", call_sequence_section, lambda i: i.reverse and (i.recording, i.nesting, i.options)),
    Section("snapshots", snapshot_section, lambda i: i.reverse and (i.recording, i.nesting, i.options)),
    Section("lecture mapping", lecture_mapping_section,
            lambda i: i.reverse and (i.recording, i.nesting, i.reference_counts)),
    Section("side by side", side_by_side_section, lambda i: i.call and i.reverse and (i.call, i.options)),
    Section("forward mode", forward_section, lambda i: i.reverse and (i.recording, i.options)),  # (jvps inside)
    Section("forward run", forward_section,
            lambda i: i.call and i.call.forward_recording is not None and (i.call.forward_recording, i.options)),
    Section("forward comparison", forward_comparison_section,
            lambda i: i.call and i.call.forward_recording is not None and (i.call, i.options)),
    Section("node checks", node_checks_section,
            lambda i: i.call and i.call.node_checks is not None and (i.call.node_checks, i.options)),
    Section("nested passes", nested_section, lambda i: (i.recording, i.nesting, i.options)),
    Section("left out", left_out_section,
            lambda i: (i.recording, i.nesting, i.options, *((i.call.alignment,) if i.call else ()))),
)


def render_recording(recording, options=None, title="adtrace recording", intro=None):
    """A report of a ``Recording`` alone (what ``Recording._repr_markdown_`` shows); ``title`` is
    plain text (escaped here), ``intro`` the caller's own Markdown."""
    header = f"# {text(title)}\n\n" + (f"{intro.strip()}\n\n" if intro else "")
    header += (f"Capture level: `{recording.capture}`. {len(recording.events)} events, "
               f"{len(recording.nodes)} nodes, {len(recording.queries)} backward queries.")
    if recording.failure:
        header += f"\n\n**The recorder stopped early:** {text(clip(recording.failure, LINE_WIDTH // 2))}."
    never = never_computed_line(recording)
    if never:
        header += f"\n\n{never}"
    for line in pass_findings_lines(recording):
        header += f"\n\n{line}"
    with collector_paused():  # (a large recording's millions of objects: each collection would walk them again)
        return _document(header, Inputs(recording, Nesting(recording), options or ReportOptions()))


def render(call, options=None, title=None, intro=None):
    """The report of one ``TracedCall`` (``compare/traced_call.py``). ``title`` is plain text (escaped
    here), ``intro`` the caller's own Markdown."""
    header = f"# {text(title or 'adtrace report: ' + call.name)}"
    if intro:
        header += f"\n\n{intro.strip()}"
    recording = call.recording if call.recording is not None else call.forward_recording
    with collector_paused():  # (a large call's millions of objects: each collection would walk them again)
        return _document(header, Inputs(recording, Nesting(recording), options or ReportOptions(),
                                        reverse=call.recording is not None, call=call,
                                        reference_counts=_reference_counts(call.reference)))


def _document(header, inputs):
    sections = [header]
    for section in SECTIONS:
        arguments = section.reads(inputs)
        if arguments:
            sections.append(section.render(*arguments))
    return "\n\n".join(s for s in sections if s) + "\n"


def _reference_counts(run):
    """How often each lecture line ran in the reference engine (same rows as ``LECTURE``)."""
    if run is None:
        return None
    if not run.steps:  # the output did not depend on the input: the lecture's loop never ran
        return [0] * 7
    visits = len(run.steps)
    appended = sum(map(len, map(attrgetter("contributions"), run.steps)))  # (in C: a step per node)
    return [1, visits, visits, appended, appended, appended, 1]

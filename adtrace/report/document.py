"""Whole reports assembled from sections, in the order a reader needs them: the result and the
checks, where the work went, the picture, then the detail sections; the appendix of nested passes
and what the report left out close it."""

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
from .recorded import call_sequence_section, forward_section, levels_section, snapshot_section


def render_recording(recording, options=None, title="adtrace recording"):
    """A report of a ``Recording`` alone (what ``Recording._repr_markdown_`` shows); ``title`` is
    plain text (escaped here)."""
    options = options or ReportOptions()
    header = (f"# {text(title)}\n\nCapture level: `{recording.capture}`. {len(recording.events)} events, "
              f"{len(recording.nodes)} nodes, {len(recording.queries)} backward queries.")
    if recording.failure:
        header += f"\n\n**The recorder stopped early:** {text(clip(recording.failure, LINE_WIDTH // 2))}."
    nesting = Nesting(recording)
    return _join([header, *_recorded_sections(recording, nesting, options, None), forward_section(recording, options),
                  nested_section(recording, nesting, options), left_out_section(recording, nesting, options)])


def render(call, options=None, title=None, intro=None):
    """The report of one ``TracedCall`` (``compare/traced_call.py``). ``title`` is plain text (escaped
    here), ``intro`` the caller's own Markdown."""
    options = options or ReportOptions()
    header = f"# {text(title or 'adtrace report: ' + call.name)}"
    if intro:
        header += f"\n\n{intro.strip()}"
    sections = [header, summary_section(call)]
    recording = call.recording if call.recording is not None else call.forward_recording
    nesting = Nesting(recording)
    if call.recording is not None:
        sections += [*_recorded_sections(call.recording, nesting, options, _reference_counts(call.reference)),
                     side_by_side_section(call, options), forward_section(call.recording, options)]
    else:
        sections += [work_section(recording, nesting, "fwd"), graph_section(recording, nesting, options, "fwd")]
    if call.forward_recording is not None:
        sections += [forward_section(call.forward_recording, options), forward_comparison_section(call, options)]
    if call.node_checks is not None:
        sections.append(node_checks_section(call.node_checks, options))
    sections += [nested_section(recording, nesting, options),
                 left_out_section(recording, nesting, options, call.alignment)]
    return _join(sections)


def _recorded_sections(recording, nesting, options, reference_counts):
    """The sections read from a recording's backward passes, in order (both kinds of report)."""
    return [work_section(recording, nesting), graph_section(recording, nesting, options),
            levels_section(recording, nesting), call_sequence_section(recording, nesting, options),
            snapshot_section(recording, nesting, options),
            lecture_mapping_section(recording, nesting, reference_counts)]


def _reference_counts(run):
    """How often each lecture line ran in the reference engine (same rows as ``LECTURE``)."""
    if run is None:
        return None
    if not run.steps:  # the output did not depend on the input: the lecture's loop never ran
        return [0] * 7
    visits = len(run.steps)
    appended = sum(len(step.contributions) for step in run.steps)
    return [1, visits, visits, appended, appended, appended, 1]


def _join(sections):
    return "\n\n".join(s for s in sections if s) + "\n"

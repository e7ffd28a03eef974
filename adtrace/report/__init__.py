"""Markdown reports: pure functions from recorded (and reference) data to text.

``render_recording(recording)`` needs only a ``Recording``; ``render(call)`` adds the summary,
the checks and the side-by-side comparison of a ``TracedCall`` (``adtrace.traced_call``).
Tables go through tabulate, graphs are Mermaid; output is deterministic (no addresses,
timestamps or absolute paths), so a report is a golden file.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class ReportOptions:
    max_rows: int = 200  # per table; the JSON export has every event
    max_graph_nodes: int = 60  # above this the flowchart is left out, the node table stays
    max_queries: int = 10  # state-snapshot tables shown


from .document import render, render_recording  # noqa: E402
from ..recording.recording import RENDERERS  # noqa: E402

RENDERERS["markdown"] = render_recording

__all__ = ["ReportOptions", "render", "render_recording"]

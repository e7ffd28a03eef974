"""Markdown reports: pure functions from recorded (and reference) data to text.

``render_recording(recording)`` needs only a ``Recording``; ``render(call)`` adds the summary,
the checks and the side-by-side comparison of a ``TracedCall`` (``adtrace.traced_call``).
Tables go through tabulate, graphs are Mermaid; output is deterministic (no addresses,
timestamps or absolute paths), so a report is a golden file. A report stays readable at any
size: long values abbreviated, tables capped, a large graph grouped by source line, the work run
inside a node's VJP folded into an appendix; the JSON export (``export.py``) keeps everything.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class ReportOptions:
    max_rows: int = 200  # per table; the JSON export has every event
    collapse_above: int = 60  # graphs with more nodes are grouped by the user's source line
    max_groups: int = 40  # boxes of a collapsed graph (the smallest groups share one past this)
    max_queries: int = 10  # state-snapshot tables shown


from .document import render, render_recording  # noqa: E402
from ..recording.recording import RENDERERS  # noqa: E402

RENDERERS["markdown"] = render_recording

__all__ = ["ReportOptions", "render", "render_recording"]

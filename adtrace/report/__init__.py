"""Markdown reports: pure functions from recorded (and reference) data to text.

``render_recording(recording)`` needs only a ``Recording``; ``render(call)`` adds the summary,
the checks and the side-by-side comparison of a ``TracedCall`` (``compare/traced_call.py``).
Tables go through tabulate, graphs are Mermaid; output is deterministic (no addresses,
timestamps or absolute paths), so a report is a golden file. A report stays readable at any
size: long values abbreviated, tables capped, a large graph grouped by source line, the work run
inside a node's VJP folded into an appendix; the JSON export (``export.py``) keeps everything.
"""

from .document import render, render_recording
from .options import ReportOptions

__all__ = ["ReportOptions", "render", "render_recording"]

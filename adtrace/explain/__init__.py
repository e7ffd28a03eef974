"""Explain a gradient (issue 27): where an input element's gradient came from (its recorded
contributions, per source line and per path), why it is zero (the node that cut every path) and why
it is NaN or infinite (the first non-finite value of the backward pass and its cause), read from a
``Recording``. It reads recordings and renders through the report's tables: a stage after ``report``.

    import adtrace
    adtrace.explain(f, x, wrt=["x[3]"])  # [Explanation(selector='x[3]', gradient=0.0, verdict='zero', ...)]
    recording.explain(wrt=["x[3]"])  # the same from a recording (capture="full", sites=True, calls=True)
"""

import sys
import types

from .entry import explain
from .explainer import default_elements, explain_recording
from .explanation import Cause, Explanation
from .markdown import render_explanations
from .report_section import explanations_section

__all__ = ["explain", "explain_recording", "default_elements", "Explanation", "Cause", "render_explanations",
           "explanations_section"]


class _CallablePackage(types.ModuleType):
    """``adtrace.explain(f, *args, wrt=...)`` calls ``explain`` while ``adtrace.explain.zero`` etc. stay
    this package's modules (a function of the package's own name would hide them)."""

    def __call__(self, f, *args, **kwargs):
        return explain(f, *args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage

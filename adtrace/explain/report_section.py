"""The "Explanations" section of ``adtrace report`` (a recording's or a traced call's): the input
elements whose gradient is zero or non-finite, a few of each, explained as ``adtrace explain`` does;
nothing when every element's gradient is finite and not zero, or the recording cannot be explained
(another engine's, values not kept whole). ``report/`` calls it through ``RENDERERS["explanations"]``
(``adtrace/__init__.py``): it comes after the report in the pipeline."""

from .explainer import explain_recording
from .markdown import render_explanation

TITLE = "## Explanations"


def explanations_section(recording):
    try:
        found = explain_recording(recording, largest=False)
    except (ValueError, TypeError, KeyError):  # not an autograd recording, values summarised, no trace
        return ""
    if not found:
        return ""
    intro = ("Why these input elements' gradients are zero or not finite (`adtrace explain` says more: "
             "`--wrt` any element, `--json`):")
    return "\n\n".join([TITLE, intro] + [_demoted(render_explanation(e)) for e in found])


def _demoted(markdown):
    """An explanation's ``##`` heading one level down, under the section's."""
    return "\n".join("#" + line if line.startswith("## ") else line for line in markdown.splitlines())

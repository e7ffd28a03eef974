"""The "Explanations" section of ``adtrace report`` (a recording's or a traced call's): the input
elements whose gradient is zero or non-finite, a few of each, explained as ``adtrace explain`` does;
nothing when every element's gradient is finite and not zero, or the recording cannot be explained
(another engine's, values not kept whole). ``report/`` calls it through ``RENDERERS["explanations"]``
(``adtrace/__init__.py``): it comes after the report in the pipeline."""

from collections import Counter
from dataclasses import replace

import numpy as np

from ..recording.values import ArraySummary, ContainerSummary
from .elements import leaves
from .explainer import explain_recording
from .markdown import render_explanation

TITLE = "## Explanations"
MAX_NODES = 10_000  # a larger graph is not explained in a report (seconds per 10,000 nodes): the section says so
CAUSES_SHOWN = 20  # per element; the rest counted by reason (a long chain's every node may be a cause)


def explanations_section(recording):
    if recording.engine == "autograd" and len(recording.nodes) > MAX_NODES:
        return _too_large(recording)
    try:
        names = getattr(recording, "argument_names", None) or None  # (a traced call's: W[1, 0], not v0_leaf[1, 0])
        found = explain_recording(recording, largest=False, names=names)
    except (ValueError, TypeError, KeyError):  # not an autograd recording, values summarised, no trace
        return _summarised(recording)
    except Exception as error:  # a recording the explainer cannot read never breaks the report
        return (f"{TITLE}\n\nExplanations could not be made from this recording ({type(error).__name__} in "
                "adtrace's explain stage): the rest of the report stands.")
    if not found:
        return ""
    known = [e for e in found if any(c.reason != "unknown" for c in e.causes)]
    parts = [TITLE]
    if known:
        parts += ["Why these input elements' gradients are zero or not finite (`adtrace explain` says more: "
                  "`--wrt` any element, `--json`):"] + [_shown(e) for e in known]
    if len(known) < len(found):
        unknown = [f"`{e.selector}`" for e in found if e not in known]
        plural = len(unknown) > 1
        subject = f"gradient{'s' if plural else ''} of {', '.join(unknown)} {'are' if plural else 'is'}"
        parts.append(f"{'The' if not known else 'Also, the'} {subject} zero or not finite, but this "
                     "recording did not keep its nodes' calls to follow the element through them: `adtrace explain` "
                     "(or `record(capture=\"full\", sites=True, calls=True)`) says why.")
    return "\n\n".join(parts)


def _summarised(recording):
    """A pointer, when the values were kept as summaries (``capture="auto"``) and the gradient's show a
    NaN or Inf, or a part all zeros: what is needed to say why."""
    query = recording.user_query() if recording.engine == "autograd" else None
    gradient = recording.gradient(query) if query is not None else None
    summaries = [gradient] if isinstance(gradient, ArraySummary) else [
        leaf for _, leaf in gradient.leaves] if isinstance(gradient, ContainerSummary) else []
    unusual = [s for s in summaries if not np.isfinite([s.min, s.max, s.mean]).all()
               or s.min == s.max == 0]
    if not unusual:
        return ""
    return (f"{TITLE}\n\nThe gradient holds a zero or non-finite part, but this recording kept its values as "
            "summaries: record with `capture=\"full\", sites=True, calls=True` or run `adtrace explain` on the "
            "function to see why.")


def _too_large(recording):
    """A pointer instead of explanations, for a graph above ``MAX_NODES`` whose gradient has a zero or non-finite
    element (said only then, as the section)."""
    query = recording.user_query()
    gradient = recording.gradient(query) if query is not None else None
    if gradient is not None:  # (None: no backward pass ran, a gradient of zeros)
        try:
            numbers = np.concatenate([np.ravel(np.asarray(leaf, dtype=complex)) for _, leaf in leaves(gradient)])
        except (TypeError, ValueError):  # kept as summaries: as explain would, the pointer of _summarised
            return _summarised(recording)
        if numbers.size and np.isfinite(numbers).all() and (numbers != 0).all():
            return ""
    return (f"{TITLE}\n\nThe gradient holds a zero or non-finite element, but this graph has {len(recording.nodes):,} "
            f"nodes, above the {MAX_NODES:,} a report explains: run `adtrace explain` on the function to see why.")


def _shown(explanation):
    """An explanation's Markdown, ``CAUSES_SHOWN`` causes in the table (of many, the known ones first: a chain's
    thousands of nodes of unknown derivative come before the node that cut it) and the others counted."""
    causes = explanation.causes
    if len(causes) > CAUSES_SHOWN:
        causes = [c for c in causes if c.reason != "unknown"] + [c for c in causes if c.reason == "unknown"]
    rest = causes[CAUSES_SHOWN:]
    markdown = _demoted(render_explanation(replace(explanation, causes=tuple(causes[:CAUSES_SHOWN]))))
    if not rest:
        return markdown
    reasons = ", ".join(f"{n} `{reason}`" for reason, n in Counter(c.reason for c in rest).most_common())
    return (markdown + f"\n\n_{len(rest)} more causes not shown here ({reasons}): `adtrace explain` (`--json`) "
            "lists them all._")


def _demoted(markdown):
    """An explanation's ``##`` heading one level down, under the section's."""
    return "\n".join("#" + line if line.startswith("## ") else line for line in markdown.splitlines())

"""Bugs of a whole backward pass of an engine with its own ``backward()`` (micrograd, a learner's
``Value`` class), read from its recording: every local rule may be right and the gradient still wrong.

``pass_findings(recording, query)`` names, in the lecture's words, each of:

- ``zero at start``: a value's ``.grad`` was not 0 when the pass began (the first contribution a
  ``_backward`` added into it found something there): the lecture's ``node_to_grad`` starts empty
  in every pass; gradients of an earlier pass were not zeroed. Not counted: what ``backward()``
  itself wrote (a zeroing loop, the seed), what a pass run inside this pass's ``backward()`` added
  (a regularizer's pass: the sum is meant);
- ``one pass``: ``backward()`` ran twice over the same graph: an earlier pass visited this pass's
  end, and this pass's seed went into values that already held that pass's gradients;
- ``reverse topological``: a node's local backward ran before one of its consumers had added into
  its ``.grad`` (it passed on part of the sum of its partial adjoints), or ran twice in one pass.
  A leaf's (nothing to pass on) is no finding.

Each finding names the value and the user's line that made it (its ``site``).
"""

from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..recording.callsite import INPUT
from ..recording.events import REV, AddOutgrads, BackwardStart, ToposortYielded

ZERO_AT_START, ONE_PASS, REVERSE_TOPOLOGICAL = "zero at start", "one pass", "reverse topological"
TITLES = {ZERO_AT_START: "a gradient was not zero when the pass began",
          ONE_PASS: "backward() ran twice over the same graph",
          REVERSE_TOPOLOGICAL: "the visit order is not reverse topological"}


@dataclass(frozen=True)
class PassFinding:
    test: str  # ZERO_AT_START | ONE_PASS | REVERSE_TOPOLOGICAL
    node: str  # the value it is about
    site: Optional[str]  # the user's line that made it
    reason: str

    @property
    def title(self):
        return TITLES[self.test]


def pass_findings(recording, query):
    """The findings of pass ``query`` of an engine's recording, in the order above."""
    if query is None:
        return []
    events = recording.query_events(query)
    stale = _stale_at_start(recording, query, events)
    earlier = _earlier_pass_over(recording, query, events)
    if earlier is not None and stale:
        findings = [_twice(recording, query, events, earlier, stale)]
    else:
        made = {label: i for i, label in enumerate(recording.nodes)}  # (in the order the values were made)
        findings = [_not_zeroed(recording, query, label, stale[label])
                    for label in sorted(stale, key=lambda label: made.get(label, -1))]
    return _first(findings, "held a gradient when the pass began") + _first(_out_of_order(recording, events),
                                                                           "ran early too")


def _first(findings, what, shown=3):
    """The first finding, the others counted in its reason (a network not zeroed: one line, not hundreds)."""
    if len(findings) < 2:
        return findings
    first, others = findings[0], [f.node for f in findings[1:]]
    names = ", ".join(others[:shown]) + (", ..." if len(others) > shown else "")
    return [PassFinding(first.test, first.node, first.site, f"{first.reason}; {len(others)} more {what}: {names}")]


def _stale_at_start(recording, query, events):
    """``label -> (its .grad when the pass began, the pass that left it there or None)`` for each value
    whose first contribution in this pass found a gradient other than 0 there."""
    written, stale = set(), {}
    for e in events:
        if type(e) is BackwardStart:
            written.add(e.end)
        elif type(e) is AddOutgrads and e.parent not in written:
            written.add(e.parent)
            before = _before(e)
            if e.node is not None and e.replaced is False and before is not None and _nonzero(before):
                stale[e.parent] = before
    if not stale:
        return {}
    start = next(i for i, e in enumerate(recording.events) if type(e) is BackwardStart and e.query == query)
    left_by = {}
    for e in recording.events[:start]:
        if type(e) is AddOutgrads and e.mode == REV and e.query is not None:
            left_by[e.parent] = e.query
    # (a pass numbered after this one began inside its backward(): its gradients are this pass's own)
    return {label: (value, left_by.get(label)) for label, value in stale.items()
            if left_by.get(label) is None or left_by[label] < query}


def _earlier_pass_over(recording, query, events):
    """An earlier pass that visited this pass's end (its graph), or None."""
    end = next((e.end for e in events if type(e) is BackwardStart), None)
    for e in recording.events:
        if type(e) is BackwardStart and e.query == query:
            return None
        if type(e) is ToposortYielded and e.node == end and e.query is not None and e.query < query:
            return e.query
    return None


def _twice(recording, query, events, earlier, stale):
    end = next(e.end for e in events if type(e) is BackwardStart)
    label, (value, _) = next(iter(stale.items()))
    return PassFinding(ONE_PASS, end, _site(recording, end), (
        f"pass {query} seeds {end} again after pass {earlier} over it, "
        f"and its values already hold the gradients of pass {earlier} ({label}.grad was {_text(value)} when pass "
        f"{query} began): each .grad is the sum of both passes, not the lecture's node_to_grad of one (call "
        "backward() once, or zero every .grad before the second)"))


def _not_zeroed(recording, query, label, found):
    value, source = found
    origin = "an earlier pass (before the recording)"
    if source is not None:
        end = next((e.end for e in recording.query_events(source) if type(e) is BackwardStart), None)
        made = _site(recording, end)
        made = ", an input" if made == INPUT else f", made at {made}" if made else ""
        origin = f"pass {source} (backward() from {end}{made})"
    return PassFinding(ZERO_AT_START, label, _site(recording, label), (
        f"{label}.grad was {_text(value)} when pass {query} began, not 0: the gradient {origin} left there was "
        f"not zeroed, and this pass adds onto it (the lecture's node_to_grad starts empty in every pass: set "
        "every .grad to 0 before backward())"))


def _out_of_order(recording, events):
    """A node whose local backward ran before a consumer added into it, or ran twice (first of each)."""
    visits, grads, findings, named = {}, {}, [], set()
    for e in events:
        if type(e) is ToposortYielded:
            if e.node in visits and _propagates(recording, e.node) and e.node not in named:
                named.add(e.node)
                findings.append(PassFinding(REVERSE_TOPOLOGICAL, e.node, _site(recording, e.node), (
                    f"{e.node}'s local backward ran twice in one pass (visits {visits[e.node]} and {e.position}): "
                    "it passed its gradient on twice; reverse topological order visits each node once, after "
                    "every consumer has added into it")))
            visits.setdefault(e.node, e.position)
        elif type(e) is AddOutgrads:
            if e.node is not None and e.parent in visits and e.parent not in named and _propagates(recording, e.parent):
                named.add(e.parent)
                kept = recording.capture != "structure"  # (no values recorded: none to show)
                grad = f", .grad {_text(grads.get(e.parent))}" if kept else ""
                contribution = f" {_text(e.contribution)}" if kept else ""
                findings.append(PassFinding(REVERSE_TOPOLOGICAL, e.parent, _site(recording, e.parent), (
                    f"{e.parent}'s local backward ran (visit {visits[e.parent]}{grad}) before its "
                    f"consumer {e.node} had added into it ({e.node}'s contribution{contribution} came "
                    f"after): it passed on part of the sum of its partial adjoints, not all of it; in reverse "
                    f"topological order a node's _backward runs only after every consumer has added into "
                    f"node_to_grad[{e.parent}]")))
            grads[e.parent] = e.result[0] if e.result is not None else None
        elif type(e) is BackwardStart:
            grads[e.end] = e.seed
    return findings


def _propagates(recording, label):
    node = recording.nodes.get(label)
    return bool(getattr(node, "parents", ()))


def _before(add):
    """What ``parent.grad`` held before this write: the kept previous value, or for an ndarray added
    in place with none kept, its result less the contribution."""
    if add.previous is None:
        return None
    previous = add.previous[0]
    if previous is None and add.contribution is not None and add.result is not None:
        try:
            return np.asarray(add.result[0]) - np.asarray(add.contribution)
        except (TypeError, ValueError):
            return None
    return previous


def _nonzero(value):
    try:
        array = np.asarray(value)
        return array.dtype.kind in "biufc" and bool(np.any(array != 0))
    except (TypeError, ValueError):
        return False


def _site(recording, label):
    """The user's line that made ``label``; ``INPUT`` for a leaf made with none where lines were kept
    (an argument the traced call made a leaf); None where no line is known."""
    node = recording.nodes.get(label)
    site = getattr(node, "site", None)
    if site is None and node is not None and not getattr(node, "parents", ()) \
            and any(getattr(n, "site", None) for n in recording.nodes.values()):
        return INPUT
    return site


def _text(value):
    if value is None:
        return "None"
    if isinstance(value, np.ndarray) and value.ndim and value.dtype.kind in "biuf":
        return np.array2string(value, precision=6, threshold=6, separator=", ")
    try:
        return f"{float(value):.6g}"
    except (TypeError, ValueError):
        return type(value).__name__

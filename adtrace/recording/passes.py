"""Backward passes inside backward passes: which query ran inside which, and the user's own.

A VJP rule may run backward passes of its own (autograd's ``fixed_point`` and ``odeint``, a
custom rule that calls ``grad``): they start while the outer pass visits that rule's node and end
before it goes on. Passes can also run before the user's, during the forward computation
(``grad(grad(f))``, ``flatten``'s ``unflatten``), inside no other pass. The user's pass is the
last one that ran inside no other.
"""

from dataclasses import dataclass
from typing import Optional

from .events import BackwardEnd, BackwardStart, ToposortYielded


@dataclass(frozen=True)
class BackwardPass:
    query: int
    parent: Optional[int]  # the query it ran inside, None for an outermost pass
    node: Optional[str]  # the parent's node being visited when it started: whose VJP ran it


def backward_passes(recording):
    """One ``BackwardPass`` per query, in the order the passes began."""
    return list(recording.derived("passes", _backward_passes))


def _backward_passes(recording):
    recorded = recording.events
    kinds = list(map(type, recorded))  # (in C: one pass, a scalar program's, found without the walk below)
    if kinds.count(BackwardStart) == 1:
        start = kinds.index(BackwardStart)
        if ToposortYielded not in kinds[:start]:  # (no visit before it: it ran inside no pass, no node's VJP)
            return [BackwardPass(recorded[start].query, None, None)]
    passes, running, visiting = [], [], {}
    for e in recorded:
        event_type = type(e)  # (not isinstance: this loop reads every event)
        if event_type is BackwardStart:
            parent = running[-1] if running else None
            passes.append(BackwardPass(e.query, parent, visiting.get(parent)))
            running.append(e.query)
        elif event_type is ToposortYielded:
            visiting[e.query] = e.node
        elif event_type is BackwardEnd and e.query in running:
            del running[running.index(e.query):]  # (a pass abandoned by an exception ends its inner ones)
    return passes


def user_query(recording):
    """The query of the last outermost backward pass (``None`` when no pass ran)."""
    outermost = [p.query for p in backward_passes(recording) if p.parent is None]
    return outermost[-1] if outermost else None


def nested_in(recording, query):
    """The passes that ran inside ``query``, directly or deeper."""
    passes = backward_passes(recording)
    parent = {p.query: p.parent for p in passes}
    inside = []
    for p in passes:
        ancestor = p.parent
        while ancestor is not None and ancestor != query:
            ancestor = parent.get(ancestor)
        if ancestor == query:
            inside.append(p)
    return inside

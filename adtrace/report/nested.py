"""The appendix "Nested backward passes": what ran inside a node's VJP, which every other section
folds into one line (``nesting.py``). Per node: the counts, then, collapsed, its passes one row
each and the state snapshot of its first pass (``Recording.snapshots(query)`` gives any other's)."""

from collections import Counter

from ..recording.events import BackwardEnd, BackwardStart, ToposortYielded
from .abbreviate import counted
from .fit import Short, fit
from .format import code
from .profile import primitive_of
from .recorded import snapshot_table
from .tables import table


def nested_section(recording, nesting, options):
    if not nesting.work:
        return None
    summary = _pass_summary(recording, nesting)
    parts = ["## Nested backward passes", "",
             "A VJP rule that runs backward passes of its own (autograd's `fixed_point` and `odeint`, a rule "
             "calling `grad`): its passes and the nodes their traces made belong to the node being visited, "
             "and are left out of the sections above. Any pass's state snapshot: `Recording.snapshots(query)`; "
             "every event: the JSON export (`--json FILE`)."]
    for work in nesting.work.values():
        node = recording.nodes[work.node]
        parts += ["", f"### Inside the VJP of {code(work.node)}", "",
                  f"{code(work.node)} ({code(primitive_of(node))}, visited by query {work.query}): "
                  f"{work.describe()}."]
        if work.passes:
            title = f"The {counted(len(work.passes), 'nested pass', 'es')}"
            parts += ["", _details(title, _passes_table(work, summary, options))]
            first = work.passes[0].query
            events = recording.query_events(first)
            parts += ["", _details(f"State snapshot of query {first}, the first of them",
                                   snapshot_table(recording, events, options.max_rows))]
    return "\n".join(parts)


def _passes_table(work, summary, options):
    headers = ["query", "level", "ran inside", "end node", "nodes visited", "returned"]
    rows = []
    for p in work.passes[:options.max_rows]:
        start, end, visits = summary["start"].get(p.query), summary["end"].get(p.query), summary["visits"][p.query]
        returned = "-" if end is None else (f"raised {end.error}" if end.error else Short(end.result))
        rows.append((p.query, "-" if start is None else start.level, f"query {p.parent} at {p.node}",
                     "-" if start is None else start.end, visits, returned))
    return table(headers, fit(headers, rows), options.max_rows, total=len(work.passes))


def _pass_summary(recording, nesting):
    """Per nested query: its ``backward_start`` and ``backward_end`` events, and its visits."""
    start, end, visits = {}, {}, Counter()
    events = recording.events
    for first, last, _ in nesting.stretches:
        for e in events[first:last + 1]:
            event_type = type(e)  # (not isinstance: this loop reads every event folded)
            if event_type is BackwardStart:
                start[e.query] = e
            elif event_type is BackwardEnd:
                end[e.query] = e
            elif event_type is ToposortYielded:
                visits[e.query] += 1
    return {"start": start, "end": end, "visits": visits}


def _details(summary, body):
    """A block Markdown viewers show collapsed (GitHub renders the Markdown inside it)."""
    return f"<details><summary>{summary}</summary>\n\n{body}\n\n</details>"

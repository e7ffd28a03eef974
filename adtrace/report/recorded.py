"""Report sections read from a ``Recording`` alone: call sequence, state snapshots, forward mode,
levels (the lecture mapping is ``lecture.py``). Each returns Markdown text; none touches autograd. Work run inside
a node's VJP (``nesting.py``) is one row or one line here; the appendix shows it.

A recording of an engine with its own ``backward()`` (``Recording.code``, micrograd's shape) shows
that engine's statements where autograd's would be (``Recording.statement``), its ``.grad`` values
where autograd's ``outgrads`` entries would be, and marks a write that replaced instead of adding.

Only the rows a table shows are built: a recording of 200,000 nodes has 800,000 events, and a
snapshot row holds a copy of ``outgrads``.
"""

from collections import Counter
from operator import attrgetter
from dataclasses import fields

from ..compare.pass_checks import pass_findings
from ..recording.events import (AddOutgrads, BackwardEnd, BackwardStart, JVPNodeCreated, JVPRoot, NodeCreated,
                                RootCreated, ToposortYielded, TraceReturned, VJPCalled)
from ..recording.passes import user_query
from ..recording.snapshots import ADD, INIT, POP, RETURN, VJP, replay
from .abbreviate import OUTGRADS_WIDTH, brief_outgrads, counted, each
from .fit import Short, fit
from .format import code, fmt, text
from .naming import Namer
from .tables import table

# -------------------- gradients never computed --------------------


def never_computed_line(recording, shown=5, markdown=True):
    """For an engine with its own ``backward()``: the values no backward pass computed a gradient for
    (no pass ran, or none reached them: made after the last, or not on the path to its output), whose
    ``.grad`` is still what ``__init__`` set (a graph drawn before ``backward()`` shows zeros); "" when none.
    ``markdown``: False for plain text (the page's notes)."""
    if recording.code is None or not recording.nodes:
        return ""
    strong, mark = (lambda s: f"**{s}**", code) if markdown else (str, str)
    if not recording.queries:
        lead = strong("No backward pass ran: no value's gradient was computed.")
        return (f"{lead} The {mark('.grad')} of each of the {len(recording.nodes)} values is what {mark('__init__')} "
                f"set (0), not a gradient: a graph drawn before {mark('backward()')} shows zeros.")
    reached = set()
    for query in recording.queries:
        end = next((e.end for e in recording.query_events(query) if type(e) is BackwardStart), None)
        reached.update(recording.graph(end) if end is not None else ())
    never = [label for label in recording.nodes if label not in reached]
    if not never:
        return ""
    names = ", ".join(mark(label) for label in never[:shown]) + (f", ... ({len(never)} in all)"
                                                                 if len(never) > shown else "")
    lead = strong(f"{len(never)} of {len(recording.nodes)} values' gradients were never computed:")
    return (f"{lead} no backward pass reached them (made after the last pass, or not on the path to its output): "
            f"{names}. Their {mark('.grad')} is what {mark('__init__')} set, not a gradient.")


def pass_findings_lines(recording):
    """For an engine with its own ``backward()``: the bugs of the whole pass (``compare/pass_checks.py``: a
    gradient not zeroed, ``backward()`` twice, a visit order not reverse topological) of its last outermost
    pass, the one ``check`` examines (a loop that never zeroes shows it there too), as a traced call's report
    names them. One pass: finding them reads the events before it (every pass's would be quadratic)."""
    query = user_query(recording) if recording.code is not None else None
    return [f"**The backward pass is wrong (pass {query}): {text(finding.title)}**, at {code(finding.node)}"
            f"{f' (made at {text(finding.site)})' if finding.site else ''}: {text(finding.reason)}."
            for finding in pass_findings(recording, query)]


# -------------------- call sequence --------------------


def call_sequence_section(recording, nesting, options):
    headers = ["#", "level", "query", "statement", "node", "in", "out"]
    own = recording.code is not None
    rows, events, stretches = [], recording.events, {s[0]: s for s in nesting.stretches}
    namer = Namer(recording)
    for i, e in enumerate(events):
        if len(rows) == options.max_rows:
            break
        if i in stretches:
            rows.append(_folded_row(stretches[i], e, nesting))
        elif i not in nesting.inside:
            node, *cells = _call_cells(e, own)
            rows.append((i + 1, e.level, "-" if e.query is None else e.query, code(recording.statement(e)),
                         namer.in_cell(node, _labels(e)), *cells))
    total = len(events) - len(nesting.inside) + len(nesting.stretches)
    intro = ("Every hooked call in order (`make_vjp` is not hooked: its first statement creates the root)." if not own
             else f"Every recorded event in order, with the statement of `{recording.code.name}` "
                  f"({recording.code.location}) that made it; a value's creation is its `__init__`.")
    return "\n".join(["## Call sequence", "", intro, "", table(headers, fit(headers, rows), options.max_rows,
                                                               total=total)])


def _labels(e):
    """The nodes an event names in its node cell."""
    return [label for label in (getattr(e, name, None) for name in ("label", "node", "end", "parent", "root"))
            if isinstance(label, str)]


def _folded_row(stretch, first, nesting):
    start, end, node = stretch
    work = nesting.work[node]
    return (f"{start + 1}-{end + 1}", first.level, "-", f"(inside the VJP of {node}: {end - start + 1} events)", node,
            f"{counted(len(work.passes), 'nested pass', 'es')}, {counted(len(work.nodes), 'node')}",
            "see Nested backward passes")


def _call_cells(e, own=False):
    """The node, in and out cells of one event; ``own``: an engine with its own backward(), whose
    writes show the ``.grad`` values (not autograd's ``(value, mutable)`` pairs)."""
    if own and isinstance(e, AddOutgrads):
        previous = "-" if e.previous is None else e.previous[0]
        out = Short(e.result[0], suffix=" (replaced: the previous value is lost)" if e.replaced else
                    " (not known: added or replaced)" if e.replaced is None and e.node is not None else "")
        return f"{e.node or 'backward()'} -> {e.parent}", Short((previous, e.contribution), each), out
    cells = CALL_CELLS.get(type(e))
    return _declared_cells(e) if cells is None else cells(e)


def _node_cells(e):
    out = Short(e.value) if isinstance(e, NodeCreated) else Short((e.value, e.tangent), each, prefix="value, tangent: ")
    return f"{e.label} = {e.primitive}" if e.primitive else e.label, ", ".join(e.parents) or "-", out


def _trace_cells(e):
    out = "independent of the input: vjp returns zeros" if e.independent else Short(e.output, prefix="(",
                                                                                      suffix=f", {e.end})")
    return e.root, Short(e.input), out


def _declared_cells(e):
    """An event kind this table has no cells for: its node (a field so named) and every other field."""
    shown = [(f.name, getattr(e, f.name)) for f in fields(e) if f.name not in ("mode", "level", "query")]
    node = next((value for name, value in shown if name in ("node", "label", "end")), "-")
    text = ", ".join(f"{name}={value if isinstance(value, str) else fmt(value)}" for name, value in shown)
    return node, text or "-", "-"


CALL_CELLS = {  # event class -> its (node, in, out) cells
    RootCreated: lambda e: (e.label, "-", "-"),
    JVPRoot: lambda e: (e.label, Short(e.tangent), "-"),
    NodeCreated: _node_cells,
    JVPNodeCreated: _node_cells,
    TraceReturned: _trace_cells,
    BackwardStart: lambda e: (e.end, Short(e.seed, prefix="g = "), "-"),
    ToposortYielded: lambda e: (e.node, f"position {e.position}", "-"),
    VJPCalled: lambda e: (e.node, Short(e.outgrad), Short(e.ingrads)),
    AddOutgrads: lambda e: (f"{e.node} -> {e.parent}", Short((e.previous, e.contribution), each), Short(e.result)),
    BackwardEnd: lambda e: (e.end, "-", f"raised {e.error}" if e.error else Short(e.result)),
}


# -------------------- state snapshots --------------------


SNAPSHOT_HEADERS = ["step / statement", "node", "outgrad / upstream g", "ingrads / current ingrad",
                    "previous outgrad", "outgrads after"]
OWN_SNAPSHOT_HEADERS = ["step / statement", "node", ".grad read / seed", "contributions / written",
                        "previous .grad", ".grad after"]


def snapshot_section(recording, nesting, options):
    own = recording.code
    parts = [f"## State snapshot per statement of `{'backward_pass' if own is None else own.name}`", ""]
    if own is not None:
        parts += [f"The `.grad` of every value written so far, after each statement of `{own.name}` "
                  f"({own.location}); each write of a `_backward` is a row of its `{own.statement_text('vjp')}`.", ""]
    outermost = [p.query for p in nesting.passes if p.parent is None]
    if not outermost:
        return "\n".join(parts + ["_No backward pass ran in this recording._"])
    for query in outermost[:options.max_queries]:
        events = recording.query_events(query)
        mark = ": the user's pass" if query == nesting.user and len(outermost) > 1 else ""
        parts += [f"### Query {query} (level {events[0].level}){mark}", "",
                  snapshot_table(recording, events, options.max_rows), ""]
    if len(outermost) > options.max_queries:
        parts.append(f"_{len(outermost) - options.max_queries} more queries not shown (cap {options.max_queries})._")
    folded = nesting.folded_line("in these tables")
    if folded:
        parts.append(folded)
    return "\n".join(parts).rstrip()


def snapshot_table(recording, events, max_rows):
    """The first ``max_rows`` snapshot rows of one query's events, replaying only the events they
    need (an event makes one row or two)."""
    own = recording.code
    replayed = list(replay(events[:max_rows], own))[:max_rows]
    namer = Namer(recording)
    rows = [_snapshot_row(r, namer) if own is None else _own_snapshot_row(r, namer) for r in replayed]
    headers = SNAPSHOT_HEADERS if own is None else OWN_SNAPSHOT_HEADERS
    made = recording.tally(events)
    text = table(headers, fit(headers, rows), max_rows, total=made.rows)
    if made.rowless:
        text += "\n\n" + rowless_line(made.rowless, "this table")
    return text


def rowless_line(rowless, where):
    """The line saying which events ``where`` does not show: their kinds make no row of the replay."""
    kinds = ", ".join(f"{counted(n, f'`{kind}` event')}" for kind, n in rowless.items())
    return f"_Not in {where}: {kinds} (a kind that is no step of the backward pass)._"


def snapshot_rows(recording, events):
    """How many rows the replay of ``events`` makes (counted from the events' declared ``steps``, not replayed)."""
    return recording.tally(events).rows


def _snapshot_row(r, namer):
    return (f"{r.step}. {code(r.statement)}", namer(r.node) if r.node else "-", _outgrad_cell(r), _ingrads_cell(r),
            Short(r.previous) if r.statement == ADD else "-", Short(r.outgrads, brief_outgrads, OUTGRADS_WIDTH))


def _own_snapshot_row(r, namer):
    """A row of an engine whose gradients stay on its values (``snapshots.GRADS``)."""
    read, written, previous = "-", "-", "-"
    if r.stands_for == INIT:
        read = Short(r.outgrad, prefix="seed ")
    elif r.stands_for == VJP:
        read, written = Short(r.outgrad), Short(r.ingrads)
    elif r.stands_for == ADD:
        unknown = r.replaced is None and r.event.node is not None
        written = Short(r.ingrads, suffix=f" -> {r.parent}" + (" (replaced)" if r.replaced else
                                                               " (not known: added or replaced)" if unknown else ""))
        previous = Short(r.previous)
    return (f"{r.step}. {code(r.statement)}", namer(r.node) if r.node else "-", read, written, previous,
            Short(r.outgrads, brief_outgrads, OUTGRADS_WIDTH))


def _outgrad_cell(row):
    if row.statement == INIT:
        return Short(row.outgrad, prefix="g = ")
    if row.statement in (POP, VJP, RETURN):
        return Short(row.outgrad)
    return "-"


def _ingrads_cell(row):
    if row.statement == ADD:
        return Short(row.ingrads, suffix=f" -> {row.parent}")
    return "-" if row.ingrads is None else Short(row.ingrads)


# -------------------- forward mode and levels --------------------


FORWARD_NODES = frozenset((JVPRoot, JVPNodeCreated))


def forward_section(recording, options):
    if not FORWARD_NODES & set(map(type, recording.nodes.values())):  # (no forward mode: the nodes' types read in C)
        return None
    nodes = recording.of_kind(JVPRoot, JVPNodeCreated)
    adds = Counter(e.node for e in recording.of_kind(AddOutgrads) if e.mode == "fwd")
    inputs = {e.root: e.input for e in recording.of_kind(TraceReturned)}  # a root's value is the input x
    named = Namer(recording)
    rows = [(named(e.label), getattr(e, "primitive", "(input)"),
             Short(e.value if hasattr(e, "value") else inputs.get(e.label)), Short(e.tangent), adds.get(e.label, 0))
            for e in nodes[:options.max_rows]]
    headers = ["node", "primitive", "value", "tangent", "add_outgrads calls"]
    return "\n".join([
        "## Forward mode", "",
        "Tangent per node (`JVPNode.g`); a node's JVP rule sums one tangent per boxed argument with "
        "`sum_outgrads`, which calls `add_outgrads`.", "",
        table(headers, fit(headers, rows), options.max_rows, total=len(nodes))])


def levels_section(recording, nesting):
    """Nodes, passes and accumulations per trace level, outside the work folded into a node's VJP."""
    inside = nesting.inside
    events = [e for i, e in enumerate(recording.events) if i not in inside] if inside else recording.events
    levels = sorted(set(map(attrgetter("level"), events)))  # (read in C: this walks every event)
    if levels == [0] or not levels:
        return None
    rows = []
    for level in levels:  # (type(e), not isinstance: these loops read every event)
        at = [e for e in events if e.level == level]
        rows.append((level, sum(type(e) in (RootCreated, NodeCreated) for e in at),
                     len({e.query for e in at if type(e) is BackwardStart}),
                     sum(type(e) is AddOutgrads for e in at)))
    query_level = {e.query: e.level for e in events if type(e) is BackwardStart}
    made_by_inner = Counter(e.primitive for e in events if type(e) is NodeCreated and e.query in query_level
                            and e.level < query_level[e.query])
    lines = ["## Levels (higher order)", "",
             "Level 0 is the outer trace. An inner backward pass runs while the outer trace records, "
             "so its own operations (among them the accumulation `VSpace.add` / `VSpace.mut_add`) "
             "become nodes of the outer graph: that is why the accumulation is itself differentiable.", "",
             table(["level", "nodes", "backward queries", "add_outgrads calls"], rows)]
    if made_by_inner:
        lines += ["", "Outer-trace nodes created by inner backward passes: " +
                  ", ".join(f"{text(name)} x{count}" for name, count in sorted(made_by_inner.items())) + "."]
    folded = nesting.folded_line("counted here")
    if folded:
        lines += ["", folded]
    return "\n".join(lines)

"""Report sections read from a ``Recording`` alone: graph, call sequence, state snapshots,
lecture mapping, forward mode, levels. Each returns Markdown text; none touches autograd.

A recording of an engine with its own ``backward()`` (``Recording.code``, micrograd's shape) shows
that engine's statements where autograd's would be (``Recording.statement``), its ``.grad`` values
where autograd's ``outgrads`` entries would be, and marks a write that replaced instead of adding."""

from collections import Counter

from ..recording.snapshots import ADD, INIT, POP, RETURN, VJP, YIELD
from .format import code, fmt, fmt_outgrads, text
from .mermaid import flowchart
from .tables import table

# -------------------- graph --------------------


def graph_section(recording, options, mode="rev"):
    kinds = ("root", "node") if mode == "rev" else ("jvp_root", "jvp_node")
    nodes = [e for e in recording.nodes.values() if e.kind in kinds]
    inputs = {e.root: e.input for e in recording.of_kind("trace")}  # a root's value is the input x
    rows = [(n.label, _primitive(n), _parents(n),
             fmt(n.value if hasattr(n, "value") else inputs.get(n.label))) for n in nodes]
    title = "Graph" if mode == "rev" else "Forward-mode graph"
    parts = [f"## {title}", "", table(["node", "primitive", "parents by argument position", "output value"],
                                      rows, options.max_rows)]
    captions = [(n.label, n.label if n.kind.endswith("root") or not n.primitive else f"{n.label} = {n.primitive}",
                 tuple(zip(n.argnums, n.parents)) if hasattr(n, "parents") else ()) for n in nodes]
    chart = flowchart(captions, options.max_graph_nodes)
    if chart is None:
        parts += ["", f"_{len(nodes)} nodes: above the flowchart cap of {options.max_graph_nodes}; "
                      "the table above is the graph._"]
    else:
        parts += ["", chart]
    return "\n".join(parts)


def _primitive(node):
    """The primitive as recorded; "(input)" for autograd's root, "(leaf)" for a value made without
    children (an engine of micrograd's shape: its op is '')."""
    primitive = getattr(node, "primitive", "(input)")
    return primitive if primitive or getattr(node, "parents", ()) else "(leaf)"


def _parents(node):
    if not getattr(node, "parents", ()):
        return "-"
    return ", ".join(f"arg {a}: {p}" for a, p in zip(node.argnums, node.parents))


# -------------------- call sequence --------------------



def call_sequence_section(recording, options):
    own = recording.code is not None
    rows = [(i, e.level, "-" if e.query is None else e.query, code(recording.statement(e)), *_call_cells(e, own))
            for i, e in enumerate(recording.events, 1)]
    intro = ("Every hooked call in order (`make_vjp` is not hooked: its first statement creates the root)." if not own
             else f"Every recorded event in order, with the statement of `{recording.code.name}` "
                  f"({recording.code.location}) that made it; a value's creation is its `__init__`.")
    return "\n".join([
        "## Call sequence", "", intro, "",
        table(["#", "level", "query", "statement", "node", "in", "out"], rows, options.max_rows)])


def _call_cells(e, own=False):
    """The node, in and out cells of one event; ``own``: an engine with its own backward(), whose
    writes show the ``.grad`` values (not autograd's ``(value, mutable)`` pairs)."""
    if e.kind == "add_outgrads" and own:
        previous = "-" if e.previous is None else fmt(e.previous[0])
        out = fmt(e.result[0]) + (" (replaced: the previous value is lost)" if e.replaced else "")
        return f"{e.node or 'backward()'} -> {e.parent}", f"{previous}, {fmt(e.contribution)}", out
    kind = e.kind
    if kind in ("root", "jvp_root"):
        return e.label, fmt(getattr(e, "tangent", None)) if kind == "jvp_root" else "-", "-"
    if kind in ("node", "jvp_node"):
        out = fmt(e.value) if kind == "node" else f"value {fmt(e.value)}, tangent {fmt(e.tangent)}"
        return f"{e.label} = {e.primitive}" if e.primitive else e.label, ", ".join(e.parents) or "-", out
    if kind == "trace":
        out = "independent of the input: vjp returns zeros" if e.independent else f"({fmt(e.output)}, {e.end})"
        return e.root, fmt(e.input), out
    if kind == "backward_start":
        return e.end, f"g = {fmt(e.seed)}", "-"
    if kind == "toposort":
        return e.node, f"position {e.position}", "-"
    if kind == "vjp":
        return e.node, fmt(e.outgrad), fmt(e.ingrads)
    if kind == "add_outgrads":
        return f"{e.node} -> {e.parent}", f"{fmt(e.previous)}, {fmt(e.contribution)}", fmt(e.result)
    if kind == "backward_end":
        return e.end, "-", e.error and f"raised {e.error}" or fmt(e.result)
    return "-", "-", "-"


# -------------------- state snapshots --------------------


SNAPSHOT_HEADERS = ["step / statement", "node", "outgrad / upstream g", "ingrads / current ingrad",
                    "previous outgrad", "outgrads after"]
OWN_SNAPSHOT_HEADERS = ["step / statement", "node", ".grad read / seed", "contributions / written",
                        "previous .grad", ".grad after"]


def snapshot_section(recording, options):
    queries = recording.queries
    own = recording.code
    parts = [f"## State snapshot per statement of `{'backward_pass' if own is None else own.name}`", ""]
    if own is not None:
        parts += [f"The `.grad` of every value written so far, after each statement of `{own.name}` "
                  f"({own.location}); each write of a `_backward` is a row of its `{own.statement_text('vjp')}`.", ""]
    if not queries:
        return "\n".join(parts + ["_No backward pass ran in this recording._"])
    for query in queries[:options.max_queries]:
        level = recording.query_events(query)[0].level
        rows = [_snapshot_row(r) if own is None else _own_snapshot_row(r) for r in recording.snapshots(query)]
        parts += [f"### Query {query} (level {level})", "",
                  table(SNAPSHOT_HEADERS if own is None else OWN_SNAPSHOT_HEADERS, rows, options.max_rows), ""]
    if len(queries) > options.max_queries:
        parts.append(f"_{len(queries) - options.max_queries} more queries not shown (cap {options.max_queries})._")
    return "\n".join(parts).rstrip()


def _snapshot_row(r):
    return (f"{r.step}. {code(r.statement)}", r.node or "-", _outgrad_cell(r), _ingrads_cell(r),
            fmt(r.previous) if r.statement == ADD else "-", fmt_outgrads(r.outgrads))


def _own_snapshot_row(r):
    """A row of an engine whose gradients stay on its values (``snapshots.grad_snapshots``)."""
    read, written, previous = "-", "-", "-"
    if r.kind == "backward_start":
        read = f"seed {fmt(r.outgrad)}"
    elif r.kind == "vjp":
        read, written = fmt(r.outgrad), fmt(r.ingrads)
    elif r.kind == "add_outgrads":
        written = f"{fmt(r.ingrads)} -> {r.parent}" + (" (replaced)" if r.replaced else "")
        previous = fmt(r.previous)
    return (f"{r.step}. {code(r.statement)}", r.node or "-", read, written, previous,
            "{" + ", ".join(f"{label}:{fmt(value)}" for label, value in r.outgrads.items()) + "}")


def _outgrad_cell(row):
    if row.statement == INIT:
        return f"g = {fmt(row.outgrad)}"
    if row.statement in (POP, VJP, RETURN):
        return fmt(row.outgrad)
    return "-"


def _ingrads_cell(row):
    if row.statement == ADD:
        return f"{fmt(row.ingrads)} -> {row.parent}"
    return "-" if row.ingrads is None else fmt(row.ingrads)


# -------------------- lecture mapping --------------------

LECTURE = (
    ("node_to_grad = {out: [1]}", INIT, "backward_start"),
    ("for i in reverse_topo_order(out)", YIELD, "toposort"),
    ("v_i_bar = sum(node_to_grad[i])", POP + "  (summed on arrival by add_outgrads)", "toposort"),
    ("for k in inputs(i)", "for parent, ingrad in zip(node.parents, ingrads)", "add_outgrads"),
    ("compute v_k_to_i_bar = v_i_bar * dv_i/dv_k", VJP, "vjp"),
    ("append v_k_to_i_bar to node_to_grad[k]", ADD, "add_outgrads"),
    ("return adjoint of input v_input_bar", RETURN, "backward_end"),
)
# The same rows for an engine with its own backward(): (the statement's key in its EngineCode, or a
# text of ours where the engine has no statement of its own for the lecture's line)
OWN_LECTURE = ("backward_start", "toposort",
               "_(none: the closure reads `out.grad`, which each `+=` summed on arrival)_",
               "_(the closure's writes, one per child)_", "vjp", "add_outgrads",
               "_(none: `backward()` returns nothing; each value keeps its `.grad`)_")


def lecture_mapping_section(recording, reference_counts=None):
    counts = Counter(e.kind for e in recording.events if e.mode == "rev")
    own = recording.code
    engine = "autograd" if own is None else recording.engine
    headers = ["lecture pseudocode", f"{engine} statement ({'backward_pass' if own is None else own.name})",
               f"runs ({engine})"]
    rows = []
    for i, (line, statement, kind) in enumerate(LECTURE):
        cell = code(statement)
        if own is not None:  # the engine's own statement, or our words where it has none
            text = own.statement_text(OWN_LECTURE[i])
            cell = code(text) if text else OWN_LECTURE[i]
        row = [code(line), cell, counts[kind]]
        if reference_counts is not None:
            row.append(reference_counts[i])
        rows.append(row)
    if reference_counts is not None:
        headers.append("runs (reference)")
    intro = ("The lecture's reverse AD algorithm (CMU 10-414/714, Lecture 4) line by line against "
             "`backward_pass`. autograd computes all of a node's partial adjoints in one `node.vjp` call "
             "(the root's too, which returns `()`); the lecture's line runs once per input position. "
             "autograd sums on arrival, so its `pop` already holds the lecture's `sum`.")
    if own is not None:
        intro = (f"The lecture's reverse AD algorithm (CMU 10-414/714, Lecture 4) line by line against "
                 f"`{own.name}`. Each `_backward` closure computes a node's partial adjoints and adds each "
                 "into its child's `.grad` itself (`+=`): the lecture's `append` and `sum` happen on arrival, "
                 "in the child's running `.grad`; a closure that assigns (`=`) throws the earlier ones away.")
    return "\n".join(["## Lecture mapping", "", intro, "", table(headers, rows)])


# -------------------- forward mode and levels --------------------


def forward_section(recording, options):
    nodes = [e for e in recording.events if e.kind in ("jvp_root", "jvp_node")]
    if not nodes:
        return None
    adds = Counter(e.node for e in recording.of_kind("add_outgrads") if e.mode == "fwd")
    inputs = {e.root: e.input for e in recording.of_kind("trace")}  # a root's value is the input x
    rows = [(e.label, getattr(e, "primitive", "(input)"), fmt(e.value if hasattr(e, "value") else inputs.get(e.label)),
             fmt(e.tangent), adds.get(e.label, 0)) for e in nodes]
    return "\n".join([
        "## Forward mode", "",
        "Tangent per node (`JVPNode.g`); a node's JVP rule sums one tangent per boxed argument with "
        "`sum_outgrads`, which calls `add_outgrads`.", "",
        table(["node", "primitive", "value", "tangent", "add_outgrads calls"], rows, options.max_rows)])


def levels_section(recording):
    levels = sorted({e.level for e in recording.events})
    if levels == [0] or not levels:
        return None
    rows = []
    for level in levels:
        at = [e for e in recording.events if e.level == level]
        rows.append((level, sum(e.kind in ("root", "node") for e in at),
                     len({e.query for e in at if e.kind == "backward_start"}),
                     sum(e.kind == "add_outgrads" for e in at)))
    made_by_inner = Counter(e.primitive for e in recording.of_kind("node")
                            if e.query is not None and e.level < _query_level(recording, e.query))
    lines = ["## Levels (higher order)", "",
             "Level 0 is the outer trace. An inner backward pass runs while the outer trace records, "
             "so its own operations (among them the accumulation `VSpace.add` / `VSpace.mut_add`) "
             "become nodes of the outer graph: that is why the accumulation is itself differentiable.", "",
             table(["level", "nodes", "backward queries", "add_outgrads calls"], rows)]
    if made_by_inner:
        lines += ["", "Outer-trace nodes created by inner backward passes: " +
                  ", ".join(f"{text(name)} x{count}" for name, count in sorted(made_by_inner.items())) + "."]
    return "\n".join(lines)


def _query_level(recording, query):
    return next(e.level for e in recording.events if e.kind == "backward_start" and e.query == query)

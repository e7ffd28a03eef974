"""Report sections read from a ``Recording`` alone: graph, call sequence, state snapshots,
lecture mapping, forward mode, levels. Each returns Markdown text; none touches autograd."""

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
    rows = [(n.label, getattr(n, "primitive", "(input)"), _parents(n),
             fmt(n.value if hasattr(n, "value") else inputs.get(n.label))) for n in nodes]
    title = "Graph" if mode == "rev" else "Forward-mode graph"
    parts = [f"## {title}", "", table(["node", "primitive", "parents by argument position", "output value"],
                                      rows, options.max_rows)]
    captions = [(n.label, n.label if n.kind.endswith("root") else f"{n.label} = {n.primitive}",
                 tuple(zip(n.argnums, n.parents)) if hasattr(n, "parents") else ()) for n in nodes]
    chart = flowchart(captions, options.max_graph_nodes)
    if chart is None:
        parts += ["", f"_{len(nodes)} nodes: above the flowchart cap of {options.max_graph_nodes}; "
                      "the table above is the graph._"]
    else:
        parts += ["", chart]
    return "\n".join(parts)


def _parents(node):
    if not getattr(node, "parents", ()):
        return "-"
    return ", ".join(f"arg {a}: {p}" for a, p in zip(node.argnums, node.parents))


# -------------------- call sequence --------------------



def call_sequence_section(recording, options):
    rows = [(i, e.level, "-" if e.query is None else e.query, code(_statement(e)), *_call_cells(e))
            for i, e in enumerate(recording.events, 1)]
    return "\n".join([
        "## Call sequence", "",
        "Every hooked call in order (`make_vjp` is not hooked: its first statement creates the root).", "",
        table(["#", "level", "query", "statement", "node", "in", "out"], rows, options.max_rows)])


def _statement(event):
    if event.mode == "fwd" and event.forward_statement:
        return event.forward_statement
    return event.statement


def _call_cells(e):
    kind = e.kind
    if kind in ("root", "jvp_root"):
        return e.label, fmt(getattr(e, "tangent", None)) if kind == "jvp_root" else "-", "-"
    if kind in ("node", "jvp_node"):
        out = fmt(e.value) if kind == "node" else f"value {fmt(e.value)}, tangent {fmt(e.tangent)}"
        return f"{e.label} = {e.primitive}", ", ".join(e.parents), out
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


def snapshot_section(recording, options):
    queries = recording.queries
    parts = ["## State snapshot per statement of `backward_pass`", ""]
    if not queries:
        return "\n".join(parts + ["_No backward pass ran in this recording._"])
    for query in queries[:options.max_queries]:
        level = recording.query_events(query)[0].level
        rows = [(f"{r.step}. {code(r.statement)}", r.node or "-", _outgrad_cell(r), _ingrads_cell(r),
                 fmt(r.previous) if r.statement == ADD else "-", fmt_outgrads(r.outgrads))
                for r in recording.snapshots(query)]
        parts += [f"### Query {query} (level {level})", "",
                  table(["step / statement", "node", "outgrad / upstream g", "ingrads / current ingrad",
                         "previous outgrad", "outgrads after"], rows, options.max_rows), ""]
    if len(queries) > options.max_queries:
        parts.append(f"_{len(queries) - options.max_queries} more queries not shown (cap {options.max_queries})._")
    return "\n".join(parts).rstrip()


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


def lecture_mapping_section(recording, reference_counts=None):
    counts = Counter(e.kind for e in recording.events if e.mode == "rev")
    headers = ["lecture pseudocode", "autograd statement (backward_pass)", "runs (autograd)"]
    rows = []
    for i, (line, statement, kind) in enumerate(LECTURE):
        row = [code(line), code(statement), counts[kind]]
        if reference_counts is not None:
            row.append(reference_counts[i])
        rows.append(row)
    if reference_counts is not None:
        headers.append("runs (reference)")
    return "\n".join([
        "## Lecture mapping", "",
        "The lecture's reverse AD algorithm (CMU 10-414/714, Lecture 4) line by line against "
        "`backward_pass`. autograd computes all of a node's partial adjoints in one `node.vjp` call "
        "(the root's too, which returns `()`); the lecture's line runs once per input position. "
        "autograd sums on arrival, so its `pop` already holds the lecture's `sum`.", "",
        table(headers, rows)])


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

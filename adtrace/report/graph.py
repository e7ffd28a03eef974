"""The graph: a Mermaid picture, then the table. Up to ``collapse_above`` nodes each node is a box
and a row; above, nodes are grouped by the user's source line (``collapse.py``), so every report
has a picture small enough to draw. What ran inside a node's VJP is one box beside that node."""

from ..recording.events import JVPNodeCreated, JVPRoot, NodeCreated, RootCreated, TraceReturned
from .abbreviate import counted
from .collapse import group_nodes, primitives_text
from .fit import Short, fit
from .mermaid import flowchart
from .naming import Namer
from .profile import ROOTS
from .tables import table

MAX_WORK_BOXES = 20  # boxes of nested work in one picture


def graph_section(recording, nesting, options, mode="rev"):
    types = (RootCreated, NodeCreated) if mode == "rev" else (JVPRoot, JVPNodeCreated)
    nodes, inside = [e for e in recording.nodes.values() if type(e) in types], nesting.made_inside
    if inside:  # (none made inside a VJP, the common case: no lookup per node)
        nodes = [e for e in nodes if e.label not in inside]
    title = "Graph" if mode == "rev" else "Forward-mode graph"
    if len(nodes) <= options.collapse_above:
        picture, listing = _each_node(recording, nodes, nesting, options)
    else:
        picture, listing = _collapsed(nodes, nesting, options)
    parts = [f"## {title}", "", picture, "", listing]
    folded = nesting.folded_line("in this graph")
    if folded and mode == "rev":
        parts += ["", folded]
    return "\n".join(parts)


def _each_node(recording, nodes, nesting, options):
    inputs = {e.root: e.input for e in recording.of_kind(TraceReturned)}  # a root's value is the input x
    named = Namer(recording)
    rows = [(named(n.label), _primitive(n), _parents(n),
             Short(n.value if hasattr(n, "value") else inputs.get(n.label))) for n in nodes[:options.max_rows]]
    headers = ["node", "primitive", "parents by argument position", "output value"]
    boxes = [(n.label,
              n.label if type(n) in ROOTS or not n.primitive else f"{n.label} = {n.primitive}",
              tuple((f"arg {_argnum(a)}", p) for a, p in zip(n.argnums, n.parents)) if hasattr(n, "parents") else ())
             for n in nodes]
    picture = flowchart(boxes + _work_boxes(nesting, {n.label: n.label for n in nodes}), len(nodes) + MAX_WORK_BOXES)
    return picture, table(headers, fit(headers, rows), options.max_rows, total=len(nodes))


def _collapsed(nodes, nesting, options):
    groups, group_of = group_nodes(nodes, options.max_groups)
    boxes = [(g.name, f"{g.name}\n{counted(len(g.labels), 'node')}: {primitives_text(g)}"
              + (f"\n{counted(g.inner, 'edge')} inside" if g.inner else ""),
              tuple((counted(count, "edge"), parent) for parent, count in g.parents.items())) for g in groups]
    picture = flowchart(boxes + _work_boxes(nesting, group_of), len(boxes) + MAX_WORK_BOXES)
    headers = ["group", "nodes", "primitives", "edges inside", "edges from other groups"]
    rows = [(g.name, len(g.labels), primitives_text(g), g.inner,
             "; ".join(f"{parent}: {count}" for parent, count in g.parents.items()) or "-") for g in groups]
    note = (f"_{len(nodes)} nodes, above the collapse threshold of {options.collapse_above}: grouped by the line "
            f"of the user's code that made them, {len(groups)} groups. Every node, one row each: "
            f"`adtrace report --collapse-above {len(nodes)}` (`ReportOptions(collapse_above=...)`); every "
            "event: the JSON export (`--json FILE`)._")
    return picture, note + "\n\n" + table(headers, fit(headers, rows), options.max_rows)


def _work_boxes(nesting, box_of):
    """One box per node whose VJP ran work, linked from the box holding that node."""
    boxes = []
    for work in list(nesting.work.values())[:MAX_WORK_BOXES]:
        caption = (f"inside the VJP of {work.node}\n{counted(len(work.passes), 'nested pass', 'es')}, "
                   f"{counted(len(work.nodes), 'node')}")
        owner = box_of.get(work.node)
        boxes.append((f"work {work.node}", caption, (("its VJP", owner),) if owner else ()))
    return boxes


def _primitive(node):
    """The primitive as recorded; "(input)" for autograd's root, "(leaf)" for a value made without
    children (an engine of micrograd's shape: its op is '')."""
    primitive = getattr(node, "primitive", "(input)")
    return primitive if primitive or getattr(node, "parents", ()) else "(leaf)"


def _parents(node):
    if not getattr(node, "parents", ()):
        return "-"
    return ", ".join(f"arg {_argnum(a)}: {p}" for a, p in zip(node.argnums, node.parents))


def _argnum(argnum):
    return "?" if argnum is None else argnum  # (children given as a set: their argument order lost)

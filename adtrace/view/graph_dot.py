"""The recorded graph in graphviz's DOT language (``dot -Tsvg graph.dot``), for those who have graphviz.

Nodes are ``n0``, ``n1`` ... in creation order, each a box with its lines (``graph_export.caption``)
and its label as ``tooltip``; edges go from the parent to the node made from it, labelled with the
argument position (``arg 0``), and ``rankdir=BT`` puts the inputs at the bottom, as the SVG export and
the page do. Every string is quoted, with ``"`` and ``\\`` escaped, so no label can end it or become
one of DOT's escapes (``\\N``, ``\\l``); control characters are written as escapes first.
"""

from ..report.format import visible
from .graph_export import caption, exported_graph, written


def graph_dot(recording, path=None, name="adtrace"):
    """The DOT text of ``recording``'s graph, written to ``path`` if given; ``name``: the graph's."""
    nodes, edges = exported_graph(recording)
    ids = {n.label: f"n{i}" for i, n in enumerate(nodes)}
    lines = [f"digraph {quoted(name)} {{", "  rankdir=BT;",
             '  node [shape=box, style="rounded,filled", fillcolor="#f4f6fb", fontname="monospace", fontsize=11];',
             '  edge [fontname="monospace", fontsize=9, color="#555555"];']
    for node in nodes:
        style = ', style="rounded,dashed"' if node.mode is None else ""  # (made before the recording)
        lines.append(f"  {ids[node.label]} [label={quoted(*caption(node))}, tooltip={quoted(node.label)}{style}];")
    for edge in edges:
        lines.append(f"  {ids[edge.parent]} -> {ids[edge.child]} [label={quoted(f'arg {edge.argnum}')}];")
    lines.append("}")
    return written("\n".join(lines) + "\n", path)


def quoted(*lines):
    """A DOT quoted string of ``lines``, one below the other (``\\n``, centred)."""
    return '"' + "\\n".join(visible(line).replace("\\", "\\\\").replace('"', '\\"') for line in lines) + '"'

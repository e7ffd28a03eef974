"""The recorded graph as a standalone SVG picture: laid out here (``layered.py``), no graphviz.

One file that any browser or image viewer shows offline: no script, no link, no external font (the
generic ``monospace`` family), no stylesheet but its own attributes. Each node is a box with its
lines (``graph_export.caption``: label, primitive, the user's line, value) and its whole value as a
tooltip (``<title>``); each edge an arrow from the parent up to the node made from it, labelled with
the argument position it entered at (``arg 0``). Inputs at the bottom, the output on top, as the
page and the reports' pictures draw it. Same recording, same bytes.
"""

from xml.sax.saxutils import escape, quoteattr

from ..report.format import visible
from .graph_export import caption, exported_graph, written
from .layered import layout

FONT_SIZE = 12
CHAR_WIDTH = 7.3  # of a monospace character at FONT_SIZE (a little wide, so text stays inside its box)
LINE_HEIGHT = 15
PADDING = 8
MARGIN = 20
EDGE_LABEL = 10  # font size of "arg k"
ARG_WIDTH = 44  # of the bottom of a box per edge entering it (room for its "arg k")
BOLD = ' font-weight="bold"'  # a node's first line, its label


def graph_svg(recording, path=None, title=None):
    """The SVG text of ``recording``'s graph, written to ``path`` if given; ``title``: the picture's
    title (its ``<title>``)."""
    nodes, edges = exported_graph(recording)
    captions = [caption(n) for n in nodes]
    index = {n.label: i for i, n in enumerate(nodes)}
    pairs = [(index[e.parent], index[e.child]) for e in edges]
    entering = [0] * len(nodes)  # edges into each node: each enters the bottom of its box at its own point
    for _, child in pairs:
        entering[child] += 1
    sizes = [(max(max(len(line) for line in lines) * CHAR_WIDTH + 2 * PADDING, count * ARG_WIDTH + PADDING),
              len(lines) * LINE_HEIGHT + 2 * PADDING) for lines, count in zip(captions, entering)]
    placed = layout(sizes, pairs)
    width, height = placed.width + 2 * MARGIN, placed.height + 2 * MARGIN
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{_n(width)}" height="{_n(height)}" '
             f'viewBox="0 0 {_n(width)} {_n(height)}" font-family="monospace" font-size="{FONT_SIZE}">',
             f"<title>{_text(title or 'adtrace graph')}</title>",
             '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
             'orient="auto"><path d="M 0 0 L 10 5 L 0 10 z" fill="#555"/></marker></defs>',
             '<rect width="100%" height="100%" fill="white"/>',
             f'<g transform="translate({MARGIN} {MARGIN})">', '<g class="edges">']
    seen = [0] * len(nodes)
    for edge, (parent, child), route in zip(edges, pairs, placed.routes):
        seen[child] += 1
        parts.append(_edge(edge, placed, sizes, parent, child, route, (seen[child] - 0.5) / entering[child]))
    parts.append('</g><g class="nodes">')
    for i, (node, lines) in enumerate(zip(nodes, captions)):
        parts.append(_node(node, lines, placed.x[i], placed.y[i], sizes[i]))
    parts.append("</g></g></svg>")
    return written("\n".join(parts) + "\n", path)


def _node(node, lines, x, y, size):
    width, height = size
    left, top = x - width / 2, y - height / 2
    dashed = ' stroke-dasharray="4 3"' if node.mode is None else ""  # (made before the recording)
    texts = "".join(f'<text x="{_n(x)}" y="{_n(top + PADDING + (k + 0.8) * LINE_HEIGHT)}" text-anchor="middle"'
                    f'{BOLD if k == 0 else ""}>{_text(line)}</text>' for k, line in enumerate(lines))
    tooltip = node.label if node.value is None else f"{node.label} = {node.value}"
    return (f'<g class="node" id={quoteattr("node-" + visible(node.label))}><title>{_text(tooltip)}</title>'
            f'<rect x="{_n(left)}" y="{_n(top)}" width="{_n(width)}" height="{_n(height)}" rx="4" '
            f'fill="#f4f6fb" stroke="#345"{dashed}/>{texts}</g>')


def _edge(edge, placed, sizes, parent, child, route, at):
    """From the top of the parent's box, through the layers it crosses, to the bottom of the child's,
    at ``at`` of its width (its argument positions side by side, in order), labelled just below."""
    start = (placed.x[parent], placed.y[parent] - sizes[parent][1] / 2)
    end = (placed.x[child] + (at - 0.5) * (sizes[child][0] - PADDING), placed.y[child] + sizes[child][1] / 2)
    points = [start, *route, end]
    path = " ".join(f"{'M' if k == 0 else 'L'} {_n(px)} {_n(py)}" for k, (px, py) in enumerate(points))
    text = f"arg {edge.argnum}"
    return (f'<g class="edge"><title>{_text(f"{edge.parent} -> {edge.child}, {text}")}</title>'
            f'<path d="{path}" fill="none" stroke="#555" marker-end="url(#arrow)"/>'
            f'<text x="{_n(end[0] + 2)}" y="{_n(end[1] + EDGE_LABEL + 2)}" font-size="{EDGE_LABEL}" '
            f'fill="#555">{_text(text)}</text></g>')


def _text(value):
    """Text safe in XML: control characters as escapes (XML 1.0 allows none), ``&<>`` as entities."""
    return escape(visible(value))


def _n(number):
    """A coordinate, written short and always the same way."""
    text = f"{number:.1f}"
    return text[:-2] if text.endswith(".0") else text

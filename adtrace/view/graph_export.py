"""The recorded graph as plain nodes and edges, what the exports draw (``graph_svg.py``, ``graph_dot.py``)
and the JSON form writes (``graph_json``).

Each node as the reports name it: its label, its primitive (``(input)`` for autograd's root, ``(leaf)``
for a value made without children, ``(unrecorded)`` for a node made before the recording started
that a recorded node names as a parent), the user's line that made it (under ``record(sites=True)``,
which the command line uses) and its value as text (``report.format.fmt``; the input's for a root).
Each edge from a parent to the node made from it, with the argument position it entered at
(``"?"`` where an engine gave its children as a set). Nodes come in creation order, a parent
before its children; the same recording gives the same graph, with no address, time or absolute
path in it.

    {"format": 1, "engine": "autograd",
     "nodes": [{"label": "v1_sin", "primitive": "sin", "line": "f.py:4", "value": "0.141",
                "mode": "rev", "level": 0}, ...],
     "edges": [{"parent": "v0_root", "child": "v1_sin", "argnum": 0}, ...]}
"""

import json
from dataclasses import asdict, dataclass

from typing import Optional, Union

from ..recording.events import TraceReturned
from ..report.abbreviate import clip
from ..report.files import write_file
from ..report.format import fmt, visible, whole
from .data import unrecorded_labels

FORMAT = 1
VALUE_CHARS = 40  # of a value in a drawn node (the whole value: the SVG's tooltip, the JSON)
LINE_CHARS = 48  # of any other line of a drawn node


@dataclass(frozen=True)
class GraphNode:
    label: str
    primitive: str
    line: Optional[str]  # the user's "path:line" that made it
    value: Optional[str]  # whole (every digit); None: not recorded (capture "structure", or made before the recording)
    mode: Optional[str]  # "rev" | "fwd"; None for an unrecorded node
    level: Optional[int]
    short: Optional[str] = None  # the value as the reports write it (6 digits): in a drawn node's box, not the JSON


@dataclass(frozen=True)
class GraphEdge:
    parent: str
    child: str
    argnum: Union[int, str]  # the argument position of the child's primitive; "?" when unknown


def exported_graph(recording):
    """``(nodes, edges)``: ``[GraphNode]`` in creation order (the unrecorded ones first) and
    ``[GraphEdge]`` by child, then argument position."""
    nodes = recording.nodes
    inputs = {e.root: e.input for e in recording.of_kind(TraceReturned)}  # a root's value is the input x
    shown = [GraphNode(label, "(unrecorded)", None, None, None, None) for label in unrecorded_labels(recording)]
    edges = []
    for label, node in nodes.items():
        value = getattr(node, "value", inputs.get(label))
        kept = value is not None and recording.capture != "structure"
        shown.append(GraphNode(label, _primitive(node), getattr(node, "site", None), whole(value) if kept else None,
                               node.mode, node.level, fmt(value) if kept else None))
        for argnum, parent in zip(getattr(node, "argnums", ()), getattr(node, "parents", ())):
            edges.append(GraphEdge(parent, label, "?" if argnum is None else argnum))
    return shown, edges


def caption(node):
    """The lines a drawn node shows: label, primitive, the user's line, the value (short); none empty."""
    lines = [clip(node.label, LINE_CHARS), clip(node.primitive, LINE_CHARS)]
    if node.line:
        lines.append(clip(node.line, LINE_CHARS))
    if node.short is not None:
        lines.append(clip(node.short, VALUE_CHARS))
    return [visible(line) for line in lines]


def graph_json(recording, path=None):
    """The graph as JSON text (see the module's docstring), written to ``path`` if given; every value
    whole, text as the reports show it (control characters as escapes)."""
    nodes, edges = exported_graph(recording)
    data = {"format": FORMAT, "engine": recording.engine_name,
            "nodes": [{key: _shown(value) for key, value in asdict(n).items() if key != "short"} for n in nodes],
            "edges": [{key: _shown(value) for key, value in asdict(e).items()} for e in edges]}
    return written(json.dumps(data, indent=1, ensure_ascii=False, allow_nan=False) + "\n", path)


def written(text, path):
    """``text``, written first to ``path`` if given (``report.files.write_file``: a regular file
    atomically, a symbolic link through, never a device replaced)."""
    if path is not None:
        write_file(path, text)
    return text


def _shown(value):
    return visible(value) if isinstance(value, str) else value


def _primitive(node):
    primitive = getattr(node, "primitive", "(input)")
    return primitive if primitive or getattr(node, "parents", ()) else "(leaf)"  # a micrograd leaf: op ''

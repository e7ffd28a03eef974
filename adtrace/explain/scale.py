"""How large the gradient is where: per source line, the size of the cotangents (``outgrad``s) that
reached the nodes made there, in the program's order, and per leaf of the input (``params['W1']``,
``layers[0][0]``) the size of its gradient; like a profiler's by-line view, an exploding or vanishing
gradient shows where it starts.

A line's ``norm`` is the 2-norm of every outgrad its nodes received, together; ``largest`` their
largest magnitude; lines are ordered by their first node (creation order: the forward pass's order).
"""

import math
from dataclasses import dataclass

import numpy as np

from ..recording.events import NodeCreated, VJPCalled
from .contributions import line_of
from .elements import Element, dense, flat, leaves


@dataclass(frozen=True)
class Scale:
    where: str  # a line (path:line) or a leaf of the input (params['W1'])
    nodes: int  # nodes made on the line (a leaf: its elements)
    norm: float
    largest: float


def by_line(recording, query):
    """``Scale`` per line, in the order the lines first made a node."""
    lines, first = {}, {}
    for event in recording.query_events(query):
        node = recording.nodes.get(event.node) if type(event) is VJPCalled else None
        if type(node) is not NodeCreated:  # (the input's own gradient: by_leaf)
            continue
        values = flat(dense(event.outgrad, getattr(node, "value", None)))
        line = line_of(node, event.node)
        first[line] = min(first.get(line, math.inf), _number(event.node))
        squares, largest, count = lines.get(line, (0.0, 0.0, 0))
        if values is not None and values.size:
            magnitudes = np.abs(values.astype(complex if values.dtype.kind == "c" else float))
            squares, largest = squares + float(np.sum(magnitudes ** 2)), max(largest, float(np.max(magnitudes)))
        lines[line] = (squares, largest, count + 1)
    return [Scale(line, count, math.sqrt(squares), largest)
            for line, (squares, largest, count) in sorted(lines.items(), key=lambda item: first[item[0]])]


def by_leaf(gradient, name="x"):
    """``Scale`` per leaf of the input's gradient (one for a bare array or number)."""
    found = []
    for keys, leaf in leaves(gradient):
        values = np.abs(np.ravel(np.asarray(leaf)))
        found.append(Scale(Element(keys).selector(name), values.size, float(np.sqrt(np.sum(values ** 2))),
                           float(np.max(values)) if values.size else 0.0))
    return found


def _number(label):
    head = label.split("_", 1)[0]
    return int(head[1:]) if head[1:].isdigit() else math.inf

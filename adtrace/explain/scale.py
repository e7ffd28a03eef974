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
from .query_index import query_index


@dataclass(frozen=True)
class Scale:
    where: str  # a line (path:line) or a leaf of the input (params['W1'])
    nodes: int  # nodes made on the line (a leaf: its elements)
    norm: float
    largest: float
    # a line's largest outgrad at the first node the backward pass visited there and at the last one: a
    # loop's line (a deep chain on one line) shows its growth or decay between them
    nearest_output: float = None
    nearest_input: float = None


def by_line(recording, query, skip=()):
    """``Scale`` per line, in the order the lines first made a node (the nodes of ``skip`` left out: a value
    class's argument leaves, made by adtrace, not on a line of the user's)."""
    lines, first = {}, {}
    for event in query_index(recording, query).events:
        node = recording.nodes.get(event.node) if type(event) is VJPCalled and event.node not in skip else None
        if type(node) is not NodeCreated:  # (the input's own gradient: by_leaf)
            continue
        values = flat(dense(event.outgrad, getattr(node, "value", None)))
        line = line_of(node, event.node)
        first[line] = min(first.get(line, math.inf), _number(event.node))
        scale, squares, largest, count, output_end, input_end = lines.get(line, (0.0, 0.0, 0.0, 0, None, None))
        if values is not None and values.size:
            magnitudes = np.abs(values.astype(complex if values.dtype.kind == "c" else float))
            scale, squares = _add_squares(scale, squares, magnitudes)
            input_end = float(np.max(magnitudes))
            largest = _larger(largest, input_end)
            output_end = input_end if output_end is None else output_end
        lines[line] = (scale, squares, largest, count + 1, output_end, input_end)
    return [Scale(line, count, _norm(scale, squares), largest, output_end, input_end)
            for line, (scale, squares, largest, count, output_end, input_end)
            in sorted(lines.items(), key=lambda item: first[item[0]])]


def _add_squares(scale, squares, magnitudes):
    """The sum of squares kept as ``scale**2 * squares`` (LAPACK's nrm2), so 1e200's do not overflow."""
    top = float(np.max(magnitudes))
    if not np.isfinite(top) or not np.isfinite(scale):
        return _larger(scale, top), squares + 1.0  # inf (or nan): the norm is it
    if top == 0:
        return scale, squares
    if top > scale:
        squares, scale = squares * (scale / top) ** 2, top
    return scale, squares + float(np.sum((magnitudes / scale) ** 2))


def _larger(a, b):
    """The larger of two magnitudes, NaN if either is (Python's ``max(0.0, nan)`` is 0.0)."""
    return float(np.fmax(a, b)) if not (np.isnan(a) or np.isnan(b)) else math.nan


def _norm(scale, squares):
    return scale * math.sqrt(squares) if np.isfinite(scale) else scale


def by_leaf(gradient, name="x"):
    """``Scale`` per leaf of the input's gradient (one for a bare array or number)."""
    found = []
    for keys, leaf in leaves(gradient):
        values = np.abs(np.ravel(np.asarray(leaf)))
        found.append(Scale(Element(keys).selector(name), values.size,
                           _norm(*_add_squares(0.0, 0.0, values)) if values.size else 0.0,
                           float(np.max(values)) if values.size else 0.0))
    return found


def _number(label):
    head = label.split("_", 1)[0]
    return int(head[1:]) if head[1:].isdigit() else math.inf

"""Why an input element's gradient is zero: where its influence stops on the way to the output.

The element's influence is followed forward, element by element, through each node's local Jacobian
(``jacobians.py``: the node's own VJP rule re-evaluated on unit cotangents): ``reached[label]`` is the
mask of the node's elements whose local derivative chain from the input element is not zero. It
stops at:

- a **cut**: an element-wise node whose diagonal derivative is 0 where the parent is reached (relu
  off, ``where``'s other branch, ``clip`` saturated, ``floor``/``round``/``sign``, ``abs`` at 0, a
  product with 0), on a node that has a path to the output;
- a **sink**: a reached node nothing consumes, not the output (its value left the trace: ``._value``,
  a plain numpy call, or was not used): ``left-trace``;
- a node that does not read the reached elements (another index, another key of a dict):
  ``independent``, named only when nothing else explains the zero; an input no node consumes is
  ``independent`` at the input itself.

If the influence does reach the output, the zero is a ``cancellation`` of contributions. A node
without a Jacobian (no ``record(calls=True)``, or above ``jacobians.MAX_ELEMENTS``) connects every
element to every element: the search stays sound but can find no cut inside it.
"""

import numpy as np

from .elements import flat, flat_index
from .explanation import Cause
from .jacobians import jacobian
from .reasons import ELEMENTWISE, zero_reason


def why_zero(recording, graph, root_value, element):
    """The ``Cause``s of a zero gradient at ``element`` of the input."""
    start = np.zeros(flat(root_value).size, dtype=bool)
    start[flat_index(root_value, element)] = True
    reached = {graph.root: start}
    cuts, stops = [], []
    for label in graph.order:
        if label == graph.root or label not in recording.nodes:
            continue
        mask = _reach(recording, graph, label, reached, cuts, stops)
        if mask is not None and mask.any():
            reached[label] = mask
    if graph.end in reached:
        return [_cause(recording, graph.end, None, "cancellation", None,
                       "the input reaches the output; its contributions cancel")]
    left = [_cause(recording, label, None, "left-trace", graph.fraction_ending_at(label),
                   "nothing traced consumes this value: it left autograd's trace (._value, a plain numpy call) "
                   "or was not used") for label in graph.sinks() if label in reached]
    causes = cuts + left
    if not causes:
        causes = stops or [_cause(recording, graph.root, None, "independent", 1.0,
                                  "no traced operation reaching the output reads the input")]
    return causes


def _reach(recording, graph, label, reached, cuts, stops):
    node = recording.nodes[label]
    size = np.size(flat(node.value)) if flat(node.value) is not None else 0
    mask = np.zeros(size, dtype=bool)
    for position, parent in enumerate(node.parents):
        from_parent = reached.get(parent)
        if from_parent is None:
            continue
        J = jacobian(recording, label, position)
        if J is None:
            mask[:] = True
            continue
        with np.errstate(invalid="ignore"):
            mask |= (J[:, from_parent] != 0).any(axis=1)
        on_a_path = graph.to_end.get(label, 0) > 0
        if node.primitive in ELEMENTWISE and J.shape[0] == J.shape[1]:
            cut = from_parent & (np.diagonal(J) == 0)
            if cut.any() and on_a_path:
                cuts.append(_cut(recording, graph, label, position, parent, cut))
        elif not (J[:, from_parent] != 0).any() and on_a_path:
            stops.append(_cause(recording, label, position, "independent", graph.fraction(label, position),
                                "this node does not read the input's element (another index or key)"))
    return mask


def _cut(recording, graph, label, position, parent, cut):
    node = recording.nodes[label]
    at = int(np.flatnonzero(cut)[0])
    values = {"output": _at(node.value, at)}
    parent_value = graph.value_of(recording, parent)
    if parent_value is not None and np.size(parent_value) == np.size(node.value):
        values["input"] = _at(parent_value, at)
    elements = np.flatnonzero(cut)
    where = f"element {_index(node.value, at)}" + (f" and {len(elements) - 1} more" if len(elements) > 1 else "")
    return _cause(recording, label, position, zero_reason(node.primitive), graph.fraction(label, position),
                  f"local derivative 0 at {where}", values)


def _cause(recording, label, position, reason, fraction, detail, values=None):
    node = recording.nodes.get(label)
    argnum = node.argnums[position] if position is not None and hasattr(node, "argnums") else None
    return Cause(label, getattr(node, "primitive", "root"), argnum, getattr(node, "site", None), reason,
                 fraction, detail, values or {})


def _at(value, at):
    return np.ravel(np.asarray(value))[at]


def _index(value, at):
    shape = np.shape(value)
    return "[" + ", ".join(str(int(i)) for i in np.unravel_index(at, shape)) + "]" if shape else "()"


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
from .graph import Graph
from .jacobians import jacobian, recorded_diagonal, recorded_take
from .reasons import ELEMENTWISE, zero_reason


def why_zero(recording, query, graph, root_value, element):
    """The ``Cause``s of a zero gradient at ``element`` of the input."""
    start = np.zeros(flat(root_value).size, dtype=bool)
    start[flat_index(root_value, element)] = True
    reached, touched = {graph.root: start}, {graph.root: start}
    cuts, stops, guessed = [], [], set()  # guessed: reached through a node not followed element-wise
    for label in graph.order:
        if label != graph.root and label in recording.nodes:
            _reach(recording, query, graph, label, reached, touched, cuts, stops, guessed)
    unknown = [label for label, position in stops if position is None]
    if graph.end in reached and unknown:
        return [_cause(recording, label, None, "unknown", None, "its local Jacobian is not known (record with "
                       "calls=True, or a node above jacobians.MAX_ELEMENTS): taken as connecting every element")
                for label in unknown]
    if graph.end in reached:
        return [_cause(recording, graph.end, None, "cancellation", None,
                       "the input reaches the output; its contributions cancel")]
    stops = [stop for stop in stops if stop[1] is not None]
    # the fraction of the element's own paths: over the nodes it reaches with every cut closed
    own = Graph({label: graph.parents[label] for label in touched}, graph.root, graph.end, graph.input)
    left = [_cause(recording, label, None, "left-trace", own.fraction_ending_at(label),
                   "nothing traced consumes this value: it left autograd's trace (._value, a plain numpy call) "
                   "or was not used") for label in graph.sinks() if label in reached]
    causes = [_cut(recording, own, *cut) for cut in cuts] + left
    if not causes:
        causes = [_cause(recording, label, position, "independent", own.fraction(label, position) or 1.0,
                         "this node does not read the input's element (another index or key)")
                  for label, position in stops]
    return causes or [_cause(recording, graph.root, None, "independent", 1.0,
                             "no traced operation reaching the output reads the input")]


def _reach(recording, query, graph, label, reached, touched, cuts, stops, guessed):
    """Follow the element into ``label``: ``reached`` its elements with a non-zero derivative chain,
    ``touched`` those it would reach if every cut were closed."""
    node = recording.nodes[label]
    values = flat(node.value)
    size = values.size if values is not None else 0
    mask, structure = np.zeros(size, dtype=bool), np.zeros(size, dtype=bool)
    on_a_path = graph.to_end.get(label, 0) > 0
    for position, parent in enumerate(node.parents):
        from_parent, near = reached.get(parent), touched.get(parent)
        if near is None:
            continue
        nonzero = _connections(recording, query, graph, label, position, node, near.size)
        if nonzero is None:  # not known: every element to every element
            mask[:] = mask.any() or from_parent is not None
            structure[:] = True
            if from_parent is not None and parent not in guessed:  # the first node not followed on this way
                stops.append((label, None))
            guessed.add(label)
            continue
        if parent in guessed:
            guessed.add(label)
        elementwise = node.primitive in ELEMENTWISE and nonzero.shape[0] == nonzero.shape[1]
        structure |= near if elementwise else nonzero[:, near].any(axis=1)
        if from_parent is None:
            continue
        mask |= nonzero[:, from_parent].any(axis=1)
        if elementwise:
            cut = from_parent & ~np.diagonal(nonzero)
            if cut.any() and on_a_path:
                cuts.append((label, position, parent, cut))
        elif not nonzero[:, from_parent].any() and on_a_path:
            stops.append((label, position))
    if mask.any():
        reached[label] = mask
    if structure.any():
        touched[label] = structure


def _connections(recording, query, graph, label, position, node, in_size):
    """``(out, in)`` booleans: which elements of the parent move which of the node (a local
    derivative not 0), from the re-evaluated Jacobian, else from the recorded diagonal of an
    element-wise node (unknown entries connected), else None."""
    J = jacobian(recording, label, position)
    if J is not None:
        with np.errstate(invalid="ignore"):
            return J != 0
    parent_value = graph.value_of(recording, node.parents[position])
    if node.primitive == "container_take" and isinstance(parent_value, (dict, list, tuple)):
        return recorded_take(recording, query, label, parent_value)
    values = flat(node.value)
    if node.primitive not in ELEMENTWISE or values is None or values.size != in_size:
        return None
    diagonal = recorded_diagonal(recording, query, label, position, parent_value)
    return None if diagonal is None else np.diag(diagonal != 0)  # (NaN != 0: unknown, connected)


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


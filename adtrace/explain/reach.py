"""Following an input element forward through the recorded graph, element by element.

Each node's local Jacobian (``jacobians.py``: its own VJP rule re-run on unit cotangents; without a
recorded call, an element-wise node's diagonal read from its recorded VJP, a dict's take from its
sparse index) says which of its elements each parent element moves. ``Reach.reached[label]`` is
the mask of a node's elements whose chain of local derivatives from the input element is not zero;
``touched`` those it would reach if every zero local derivative of an element-wise node were not
(the element's own paths); ``cuts`` the element-wise edges where a reached element met a zero local
derivative; ``stops`` the nodes whose local derivatives are 0 for every reached element of a parent
(``(label, position, mask of the parent's reached elements)``; ``position`` None: a node that could
not be followed element-wise, taken as connecting every element to every element).
"""

from dataclasses import dataclass, field

import numpy as np

from ..recording.values import Sparse
from .elements import flat, flat_index
from .jacobians import (Rows, diagonal, jacobian, moved as moved_by, recorded_diagonal, recorded_index, recorded_row,
                        recorded_take, structural)
from .query_index import query_index
from .reasons import ELEMENTWISE, SELECTIONS


@dataclass
class Reach:
    reached: dict = field(default_factory=dict)  # label -> mask of its flat elements
    touched: dict = field(default_factory=dict)
    cuts: list = field(default_factory=list)  # (label, position, parent, mask of the cut elements)
    stops: list = field(default_factory=list)  # (label, position or None, the parent's reached mask)
    guessed: set = field(default_factory=set)  # reached through a node not followed element-wise
    lost: list = field(default_factory=list)  # nodes not followed where the element was not guessed through
    unsure: list = field(default_factory=list)  # (label, position, mask): reached elements whose local
    # derivative the recording does not tell (a recorded diagonal where the outgrad was 0), taken as connected


def follow(recording, query, graph, element, guess=True):
    """``guess``: a node not followed element-wise connects every element to every element (else it stops
    the element there: ``stops`` names it, and nothing beyond is the element's)."""
    start = np.zeros(flat(graph.input).size, dtype=bool)
    start[flat_index(graph.input, element)] = True
    found = Reach({graph.root: start}, {graph.root: start})
    for label in graph.order:
        if label != graph.root and hasattr(recording.nodes.get(label), "parents"):  # (not another call's root)
            _into(recording, query, graph, label, found.reached, found.touched, found.cuts, found.stops,
                  found.guessed, found.unsure, guess, found.lost)
    return found


def _into(recording, query, graph, label, reached, touched, cuts, stops, guessed, unsure, guess=True, lost=None):
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
        nonzero, unknown = _connections(recording, query, graph, label, position, node, near.size)
        if nonzero is None and not guess and not _one_number(recording, query, label, position):
            if from_parent is not None and on_a_path:  # not known: the element is lost here
                lost.append(label)
            continue
        if nonzero is None:  # not known: every element to every element
            mask[:] = mask.any() or from_parent is not None
            structure[:] = True
            if from_parent is not None and parent not in guessed:  # the first node not followed on this way
                stops.append((label, None, from_parent))
            guessed.add(label)
            continue
        if parent in guessed:
            guessed.add(label)
        elementwise = node.primitive in ELEMENTWISE and nonzero.shape[0] == nonzero.shape[1]
        if elementwise:
            structure |= near
        else:
            moved = nonzero.moved(near)
            if not moved.all():  # an entry 0 by the values (a factor 0) still connects: the primitive's structure
                by_structure = structural(recording, label, position)
                moved |= moved_by(by_structure, near) if by_structure is not None else False
            structure |= moved
        if from_parent is None:
            continue
        moved = nonzero.moved(from_parent)
        mask |= moved
        if unknown is not None and (unknown & from_parent).any() and on_a_path:
            unsure.append((label, position, unknown & from_parent))
        if elementwise:
            cut = from_parent & ~nonzero.diagonal()
            if cut.any() and on_a_path:
                cuts.append((label, position, parent, cut))
        elif not moved.any() and on_a_path:
            stops.append((label, position, from_parent))
    if mask.any():
        reached[label] = mask
    if structure.any():
        touched[label] = structure


def _one_number(recording, query, label, position):
    """A node of one element made of the whole parent (a ``sum``, a ``dot``; not ``x[i]``, whose VJP is sparse):
    taken as reading every element of it where its derivatives are not known."""
    if np.size(flat(recording.nodes[label].value)) != 1:
        return False
    event = query_index(recording, query).vjps.get(label)
    return not (event is not None and isinstance(event.ingrads[position], Sparse))


def _connections(recording, query, graph, label, position, node, in_size):
    """``(out, in)`` booleans: which elements of the parent move which of the node (a local
    derivative not 0), from the re-evaluated Jacobian, else from the recorded diagonal of an
    element-wise node (unknown entries connected), else None; and the mask of the parent's elements
    whose entry is not known (None: all known)."""
    values = flat(node.value)
    same_size = node.primitive in ELEMENTWISE and values is not None and values.size == in_size
    found = diagonal(recording, label, position) if same_size else None
    if found is not None:
        return Diagonal(found != 0), None
    J = jacobian(recording, label, position)
    if isinstance(J, Rows):
        return J, None
    if J is not None:
        with np.errstate(invalid="ignore"):
            return (Diagonal(np.diagonal(J) != 0) if same_size else Dense(J != 0)), None
    parent_value = graph.value_of(recording, node.parents[position])
    if node.primitive == "container_take" and isinstance(parent_value, (dict, list, tuple)):
        taken = recorded_take(recording, query, label, parent_value)
        return (None if taken is None else Taken(taken)), None
    taken = recorded_index(recording, query, label, parent_value) if not same_size else None
    if taken is not None:  # x[index] without its call: the index its VJP kept
        return Taken(taken), None
    row = recorded_row(recording, query, label, position, parent_value) if not same_size else None
    if row is not None:  # a number made of the parent (a sum): its VJP's ingrad is its row
        return Dense(row != 0), None
    if not same_size:
        return None, None
    found = recorded_diagonal(recording, query, label, position, parent_value)
    if found is None:
        return None, None
    unknown = np.isnan(found)
    if unknown.any() and node.primitive in SELECTIONS:  # maximum/minimum: selected where the output is this value
        parent, output = flat(parent_value), flat(node.value)
        if parent is not None and output is not None and parent.size == output.size:
            found = np.where(unknown, (parent == output).astype(float), found)
            unknown = np.zeros_like(unknown)
    if unknown.any() and node.primitive in LINEAR:  # known from the values: no call needed
        found = np.where(unknown, _linear(recording, graph, node, position, parent_value), found)
        unknown = np.isnan(found)
    return Diagonal(found != 0), unknown  # (NaN != 0: unknown, connected)


LINEAR = ("add", "subtract", "negative", "multiply")


def _linear(recording, graph, node, position, parent_value):
    """An element-wise ``+``, ``-`` or ``*`` node's local derivatives from its values: 1 (``+``, ``-``), the
    other factor (``a * b``), ``y / x`` (``x * c``, the constant not kept; NaN where x is 0)."""
    size = np.size(flat(parent_value))
    if node.primitive != "multiply":
        return np.ones(size)
    if len(node.parents) == 2:
        other = flat(graph.value_of(recording, node.parents[1 - position]))
        return other.astype(float) if other is not None and other.size == size else np.full(size, np.nan)
    x, y = flat(parent_value), flat(node.value)
    with np.errstate(all="ignore"):
        return np.where(x != 0, y / np.where(x != 0, x, 1), np.nan)


class Dense:
    """A node's connections from a parent: ``(out, in)`` booleans."""

    def __init__(self, nonzero):
        self.nonzero, self.shape = nonzero, nonzero.shape

    def moved(self, mask):
        """The node's elements a local derivative not 0 connects to ``mask``'s elements of the parent."""
        return self.nonzero[:, mask].any(axis=1)

    def diagonal(self):
        return np.diagonal(self.nonzero)


class Diagonal(Dense):
    """An element-wise node's: element m reads element m (kept as its diagonal, not n x n)."""

    def __init__(self, nonzero):
        self.nonzero, self.shape = nonzero, (nonzero.size, nonzero.size)

    def moved(self, mask):
        return mask & self.nonzero

    def diagonal(self):
        return self.nonzero


class Taken(Dense):
    """A ``container_take``'s: element m is the container's element ``positions[m]``."""

    def __init__(self, positions):
        self.positions, self.shape = positions, (positions.size, None)

    def moved(self, mask):
        return mask[self.positions]

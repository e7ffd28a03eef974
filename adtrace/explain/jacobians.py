"""A node's local Jacobian, by re-evaluating its VJP rule on unit cotangents.

``record(calls=True)`` keeps each node's primitive call (function, unboxed arguments); autograd's rule
for it is ``primitive_vjps[fun]``, which made the node's ``vjp`` in the first place. Row ``m`` of
``jacobian(...)`` is the rule's VJP of the unit cotangent ``e_m``: ``d node[m] / d parent[:]`` as
the rule computes it (no finite differences, no rounding beyond the rule's own). One VJP per output
element (an element-wise node's diagonal: ``diagonal``, one VJP): nodes above ``MAX_ELEMENTS``
elements, recordings without calls, and every Jacobian past ``MAX_VJPS`` VJP calls or ``MAX_ENTRIES``
numbers kept in one recording get None (the caller then treats the node as connecting every
element to every element, and says so).
"""

import weakref

import numpy as np
from autograd.core import primitive_vjps, vspace

from ..recording.values import Sparse
from .elements import array_index, dense, flat, positions
from .query_index import query_index
from .reasons import ELEMENTWISE

MAX_ELEMENTS = 4096


MAX_VJPS = 200_000  # VJP calls per recording, all Jacobians together; past it, the rest are not known
DENSE = 1 << 20  # a Jacobian of more entries (not an element-wise node's) is kept as ``Rows``
MAX_ENTRIES = 1 << 24  # numbers all kept Jacobians of a recording hold together (128 MB); past it, not known
_MADE = weakref.WeakKeyDictionary()  # recording -> {(label, position): Jacobian}: each element explained reuses them


def jacobian(recording, label, position):
    """``(out_size, in_size)`` array of ``d label / d parent`` at parent ``position``, or None."""
    return _made(recording, label, position, _jacobian)


def diagonal(recording, label, position):
    """An element-wise node's local derivatives at a parent of its own size, element by element (its
    Jacobian's diagonal: one VJP of a cotangent of ones, not one per element), or None."""
    return _made(recording, label, position, _diagonal, cost=1)


def _made(recording, label, position, make, cost=None):
    """``make(recording, label, position)``, once per recording, within its budget of VJP calls and of
    numbers kept."""
    made = _MADE.setdefault(recording, {"vjps": 0, "entries": 0})
    key = (make.__name__, label, position)
    if key not in made:
        node = recording.nodes.get(label)
        if cost is None:
            cost = np.size(node.value) if node is not None and not isinstance(node.value, (dict, list, tuple)) else 0
        if made["vjps"] + cost > MAX_VJPS:
            return None
        made["vjps"] += cost
        found = make(recording, label, position)
        if found is not None and made["entries"] + found.size > MAX_ENTRIES:
            found = None
        made["entries"] += found.size if found is not None else 0
        made[key] = found
    return made[key]


def _diagonal(recording, label, position):
    call = recording.calls.get(label)
    node = recording.nodes.get(label)
    if call is None or node is None or call.fun not in primitive_vjps or node.primitive not in ELEMENTWISE \
            or isinstance(node.value, (dict, list, tuple)):
        return None
    argnum = node.argnums[position]
    try:
        with np.errstate(all="ignore"):
            if np.shape(call.args[argnum]) != np.shape(node.value):
                return None
            vjp = primitive_vjps[call.fun]((argnum,), node.value, call.args, call.kwargs)
            (ingrad,) = tuple(vjp(vspace(node.value).ones()))  # off the diagonal every entry is 0
            found = flat(dense(ingrad, call.args[argnum]))
    except Exception:  # a rule that needs more than its call: unknown
        return None
    return found if found is not None and found.size == np.size(node.value) else None


def _jacobian(recording, label, position, args=None):
    call = recording.calls.get(label)
    node = recording.nodes.get(label)
    if call is None or node is None or call.fun not in primitive_vjps:
        return None
    value = node.value
    size = int(np.size(value)) if not isinstance(value, (dict, list, tuple)) else None
    if size is None or size > MAX_ELEMENTS:
        return None
    argnum = node.argnums[position]
    parent_values = flat((call.args if args is None else args)[argnum])
    if parent_values is None:
        return None
    room = MAX_ENTRIES - _MADE.get(recording, {}).get("entries", 0)  # (not made only to be dropped)
    rows = size * parent_values.size > DENSE and node.primitive not in ELEMENTWISE
    if not rows and size * parent_values.size > room:
        return None
    dtype = np.result_type(parent_values.dtype, float)
    J = Rows((size, parent_values.size)) if rows else np.empty((size, parent_values.size), dtype=dtype)
    try:
        with np.errstate(all="ignore"):
            if args is not None:  # other values of the same shapes: the answer made again from them
                value = call.fun(*args, **call.kwargs)
            args = call.args if args is None else args
            parent_value = args[argnum]
            vjp = primitive_vjps[call.fun]((argnum,), value, args, call.kwargs)
            space = vspace(value)
            for m in range(size):
                seed = np.zeros(size, dtype=space.dtype if hasattr(space, "dtype") else float)
                seed[m] = 1
                seed = seed.reshape(np.shape(value)) if np.shape(value) else seed[0]
                (ingrad,) = tuple(vjp(seed))
                row = flat(dense(ingrad, parent_value))
                if row is None or row.size != J.shape[1]:
                    return None
                J[m] = row
                if rows and J.kept > room:
                    return None
    except Exception:  # a rule that needs more than its call (or one adtrace cannot replay): unknown
        return None
    if rows:
        return J.done()
    if node.primitive in ELEMENTWISE and J.shape[0] == J.shape[1]:  # a unit seed's 0s times an infinite
        J = np.diag(np.diagonal(J))  # derivative elsewhere made NaN off the diagonal (sqrt at 0): no connection
    return J


class Rows:
    """A large Jacobian (above ``DENSE`` entries: a ``dot``'s, whose rows each read one column of ``W``)
    kept as its rows' entries that are not 0 (NaN kept: not known, connected), written row by row."""

    def __init__(self, shape):
        self.shape, self.kept = shape, 0
        self.indptr, self.indices, self.data = [0], [], []

    def __setitem__(self, m, row):
        nonzero = np.flatnonzero(row != 0)
        self.indices.append(nonzero.astype(np.int32))
        self.data.append(row[nonzero])
        self.kept += nonzero.size
        self.indptr.append(self.kept)

    def done(self):
        self.indptr = np.array(self.indptr)
        self.indices = np.concatenate(self.indices) if self.indices else np.zeros(0, dtype=np.int32)
        self.data = np.concatenate(self.data) if self.data else np.zeros(0)
        self.size = self.data.size  # (the numbers kept: the budget's)
        return self

    def moved(self, mask):
        """The rows with an entry in ``mask``'s columns."""
        counts = np.concatenate([[0], np.cumsum(mask[self.indices])])
        return counts[self.indptr[1:]] > counts[self.indptr[:-1]]

    def column(self, at):
        """``{row: entry}`` of column ``at``'s entries that are not 0."""
        where = np.flatnonzero(self.indices == at)
        return dict(zip((np.searchsorted(self.indptr, where, side="right") - 1).tolist(), self.data[where]))


def moved(J, mask):
    """The rows of ``J`` (an array or ``Rows``) with an entry not 0 (NaN: connected) in ``mask``'s columns."""
    if isinstance(J, Rows):
        return J.moved(mask)
    with np.errstate(invalid="ignore"):
        return (J[:, mask] != 0).any(axis=1)


def column(J, at):
    """``{row: entry}`` of ``J``'s column ``at`` entries that are not 0."""
    if isinstance(J, Rows):
        return J.column(at)
    return {int(m): J[m, at] for m in np.flatnonzero(J[:, at])}


def structural(recording, label, position):
    """The Jacobian at other, random arguments (float arrays and numbers replaced, seeded): an entry
    zero here too is zero by the primitive's structure (an index not taken), not by the values (a
    factor that happened to be 0). None if not known."""
    return _made(recording, label, position, _structural)


def _structural(recording, label, position):
    call = recording.calls.get(label)
    if call is None:
        return None
    rng = np.random.default_rng(0)
    args = tuple(_random_like(a, rng) for a in call.args)
    return _jacobian(recording, label, position, args)


def _random_like(value, rng):
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return rng.uniform(0.5, 1.5, value.shape).astype(value.dtype)
    if isinstance(value, (float, np.floating)):
        return type(value)(rng.uniform(0.5, 1.5))
    return value


def recorded_diagonal(recording, query, label, position, parent_value):
    """An element-wise node's local derivatives ``ingrad / outgrad`` read from its recorded ``vjp``
    (no call needed); NaN where the outgrad was 0 (not known). None if not element-wise-shaped."""
    event = query_index(recording, query).vjps.get(label)
    if event is None:
        return None
    outgrad = flat(event.outgrad)
    ingrad = flat(dense(event.ingrads[position], parent_value))
    if outgrad is None or ingrad is None or outgrad.size != ingrad.size:
        return None
    with np.errstate(all="ignore"):
        return np.where(outgrad != 0, ingrad / np.where(outgrad != 0, outgrad, 1), np.nan)


def recorded_take(recording, query, label, parent_value):
    """``container_take``'s connections (``params['W']``, ``layers[-1]``, ``layers[:-1]``: the taken items'
    elements are the container's elements there), read from the recorded VJP's sparse index: the
    container's flat position of each of the node's elements; None if not known."""
    node = flat(recording.nodes[label].value)
    parent = flat(parent_value)
    event = query_index(recording, query).vjps.get(label)
    if event is None or not isinstance(event.ingrads[0], Sparse):
        return None
    items = list(parent_value.items() if isinstance(parent_value, dict) else enumerate(parent_value))
    sizes = [np.size(flat(item)) for _, item in items]
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
    index = event.ingrads[0].index
    if isinstance(parent_value, dict):
        chosen = [i for i, (key, _) in enumerate(items) if str(key) == index]
    else:
        chosen = (positions(index, len(items)) or ([], True))[0]
    if node is None or parent is None or sum(sizes[i] for i in chosen) != node.size or not chosen:
        return None
    return np.concatenate([offsets[i] + np.arange(sizes[i]) for i in chosen])


def recorded_index(recording, query, label, parent_value):
    """An array's ``x[index]`` (its VJP a sparse cotangent, ``untake``): the parent's flat position of each
    of the node's elements, read from the index the recorded VJP kept (``1``, ``1:3``, ``(0, :)``, ``[0 2]``);
    None if not known (no such VJP, an index adtrace kept shortened or does not read)."""
    node, parent = flat(recording.nodes[label].value), flat(parent_value)
    if node is None or parent is None or isinstance(parent_value, (dict, list, tuple)):
        return None
    event = query_index(recording, query).vjps.get(label)
    if event is None:
        return None
    found = event.ingrads[0] if len(event.ingrads) == 1 else None
    index = array_index(found.index) if isinstance(found, Sparse) and found.index is not None else None
    if index is None:
        return None
    try:
        taken = np.arange(parent.size).reshape(np.shape(parent_value))[index].ravel()
    except (IndexError, ValueError, TypeError):
        return None
    return taken if taken.size == node.size else None


def recorded_row(recording, query, label, position, parent_value):
    """A node of one element's local derivatives from a parent (a ``sum``, a ``dot`` to a number), read from
    its recorded VJP: ``ingrad / outgrad``, exact where the outgrad was not 0; None otherwise."""
    if np.size(flat(recording.nodes[label].value)) != 1:
        return None
    event = query_index(recording, query).vjps.get(label)
    if event is None:
        return None
    outgrad = flat(event.outgrad)
    ingrad = flat(dense(event.ingrads[position], parent_value))
    if outgrad is None or ingrad is None or outgrad.size != 1 or outgrad[0] == 0:
        return None
    with np.errstate(all="ignore"):
        return (ingrad / outgrad[0]).reshape(1, -1)

"""A node's local Jacobian, by re-evaluating its VJP rule on unit cotangents.

``record(calls=True)`` keeps each node's primitive call (function, unboxed arguments); autograd's rule
for it is ``primitive_vjps[fun]``, which made the node's ``vjp`` in the first place. Row ``m`` of
``jacobian(...)`` is the rule's VJP of the unit cotangent ``e_m``: ``d node[m] / d parent[:]`` as
the rule computes it (no finite differences, no rounding beyond the rule's own). One VJP per output
element: nodes above ``MAX_ELEMENTS`` elements, recordings without calls, and every Jacobian past
``MAX_VJPS`` VJP calls in one recording get None (the caller then treats the node as connecting every
element to every element, and says so).
"""

import weakref

import numpy as np
from autograd.core import primitive_vjps, vspace

from ..recording.events import VJPCalled
from ..recording.values import Sparse
from .elements import dense, flat, positions
from .reasons import ELEMENTWISE

MAX_ELEMENTS = 4096


MAX_VJPS = 200_000  # VJP calls per recording, all Jacobians together; past it, the rest are not known
_MADE = weakref.WeakKeyDictionary()  # recording -> {(label, position): Jacobian}: each element explained reuses them


def jacobian(recording, label, position):
    """``(out_size, in_size)`` array of ``d label / d parent`` at parent ``position``, or None."""
    return _made(recording, label, position, _jacobian)


def _made(recording, label, position, make):
    """``make(recording, label, position)``, once per recording, within its budget of VJP calls."""
    made = _MADE.setdefault(recording, {"vjps": 0})
    key = (make.__name__, label, position)
    if key not in made:
        node = recording.nodes.get(label)
        cost = np.size(node.value) if node is not None and not isinstance(node.value, (dict, list, tuple)) else 0
        if made["vjps"] + cost > MAX_VJPS:
            return None
        made["vjps"] += cost
        made[key] = make(recording, label, position)
    return made[key]


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
    rows = []
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
                if row is None or row.size != np.size(flat(parent_value)):
                    return None
                rows.append(row)
    except Exception:  # a rule that needs more than its call (or one adtrace cannot replay): unknown
        return None
    J = np.array(rows)
    if node.primitive in ELEMENTWISE and J.shape[0] == J.shape[1]:  # a unit seed's 0s times an infinite
        J = np.diag(np.diagonal(J))  # derivative elsewhere made NaN off the diagonal (sqrt at 0): no connection
    return J


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
    for event in recording.query_events(query):
        if type(event) is VJPCalled and event.node == label:
            outgrad = flat(event.outgrad)
            ingrad = flat(dense(event.ingrads[position], parent_value))
            if outgrad is None or ingrad is None or outgrad.size != ingrad.size:
                return None
            with np.errstate(all="ignore"):
                return np.where(outgrad != 0, ingrad / np.where(outgrad != 0, outgrad, 1), np.nan)
    return None


def recorded_take(recording, query, label, parent_value):
    """``container_take``'s connections (``params['W']``, ``layers[-1]``, ``layers[:-1]``: the taken items'
    elements are the container's elements there), read from the recorded VJP's sparse index; None if
    not known."""
    node = flat(recording.nodes[label].value)
    parent = flat(parent_value)
    for event in recording.query_events(query):
        if type(event) is VJPCalled and event.node == label and isinstance(event.ingrads[0], Sparse):
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
            connections = np.zeros((node.size, parent.size), dtype=bool)
            row = 0
            for i in chosen:
                connections[row + np.arange(sizes[i]), offsets[i] + np.arange(sizes[i])] = True
                row += sizes[i]
            return connections
    return None

"""A node's local Jacobian, by re-evaluating its VJP rule on unit cotangents.

``record(calls=True)`` keeps each node's primitive call (function, unboxed arguments); autograd's rule
for it is ``primitive_vjps[fun]``, which made the node's ``vjp`` in the first place. Row ``m`` of
``jacobian(...)`` is the rule's VJP of the unit cotangent ``e_m``: ``d node[m] / d parent[:]`` as
the rule computes it (no finite differences, no rounding beyond the rule's own). One VJP per output
element: nodes above ``MAX_ELEMENTS`` elements, and recordings without calls, get None (the caller
then treats the node as connecting every element to every element).
"""

import numpy as np
from autograd.core import primitive_vjps, vspace

from .elements import dense, flat

MAX_ELEMENTS = 4096


def jacobian(recording, label, position):
    """``(out_size, in_size)`` array of ``d label / d parent`` at parent ``position``, or None."""
    call = recording.calls.get(label)
    node = recording.nodes.get(label)
    if call is None or node is None or call.fun not in primitive_vjps:
        return None
    value = node.value
    size = int(np.size(value)) if not isinstance(value, (dict, list, tuple)) else None
    if size is None or size > MAX_ELEMENTS:
        return None
    argnum = node.argnums[position]
    parent_value = call.args[argnum]
    rows = []
    try:
        with np.errstate(all="ignore"):
            vjp = primitive_vjps[call.fun]((argnum,), value, call.args, call.kwargs)
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
    return np.array(rows)

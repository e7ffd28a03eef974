"""Shape bookkeeping in the local rules: undoing broadcasting and indexing.

Broadcasting copies an operand along new leading axes and along axes of size 1,
so ``x + y`` with ``x`` of shape ``(3,)`` and ``y`` of shape ``(2, 3)`` uses each
``x[j]`` twice. Its adjoint must add those uses back up::

    unbroadcast(g of shape (2, 3), target_shape=(3,))  ==  sum(g, axis=0)
    unbroadcast(g of shape (2, 3), target_shape=(2, 1)) ==  sum(g, axis=1, keepdims=True)

Indexing ``A[idx]`` picks entries; its adjoint puts the adjoint back where the
entries came from, adding where an index repeats (``untake``). Everything is
written with ``autograd.numpy`` so that, under an outer trace, these operations
become nodes of the outer graph (reverse mode by extending the graph).
"""

import autograd.numpy as anp
from autograd.numpy import numpy_wrapper
import numpy as onp
from autograd.extend import primitive


_SCALARS = frozenset({float, onp.float64})  # a raw scalar (no box of an outer trace): shape (), nothing to sum


def shape_of(x):
    """``anp.shape(x)``; a raw scalar's ``()`` without the call (a scalar program's every node)."""
    return () if type(x) in _SCALARS else anp.shape(x)


def unbroadcast(g, target_shape):
    """Sum ``g`` over the axes broadcasting added to an operand of ``target_shape``."""
    if not target_shape and type(g) in _SCALARS:  # (a raw scalar's: the loops below do nothing)
        return g
    while anp.ndim(g) > len(target_shape):
        g = anp.sum(g, axis=0)  # leading axes the operand did not have
    for axis, size in enumerate(target_shape):
        if size == 1:
            g = anp.sum(g, axis=axis, keepdims=True)  # axes of size 1 that were stretched
    return g


def broadcast_like(g, ans):
    """A tangent of an operand, stretched to the shape of the result ``ans`` (forward mode)."""
    if anp.shape(g) == anp.shape(ans):
        return g
    return g + anp.zeros(anp.shape(ans), anp.result_type(ans))


def repeat_to_shape(g, shape, dtype, axis):
    """Adjoint of a reduction over ``axis``: every reduced entry gets ``g``.

    Returns the repeated ``g`` and how many entries each output entry summed."""
    if shape == ():
        return g, 1
    axes = range(len(shape)) if axis is None else (axis,) if onp.ndim(axis) == 0 else axis
    axes = [a % len(shape) for a in axes]
    kept_shape = tuple(1 if a in axes else n for a, n in enumerate(shape))
    count = int(onp.prod([shape[a] for a in axes]))
    return anp.reshape(g, kept_shape) + onp.zeros(shape, dtype=dtype), count


@primitive
def untake(g, idx, shape, dtype):
    """Dense adjoint of ``A[idx]``: zeros of ``A``'s shape with ``g`` added at ``idx``."""
    if isinstance(idx, list) and (len(idx) == 0 or not isinstance(idx[0], slice)):
        idx = onp.array(idx, dtype="int64")
    out = onp.zeros(shape, dtype=dtype)
    onp.add.at(out, idx, g)
    return out


# The primitives behind anp.where and anp.mean: from autograd 1.9 each is a wrapper (custom_where,
# one that converts lists) around _original_where / _primitive_mean; before, each is the primitive.
WHERE = getattr(anp, "_original_where", anp.where)
MEAN = getattr(numpy_wrapper, "_primitive_mean", anp.mean)

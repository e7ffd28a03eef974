"""Own rules for matrix products: ``dot`` and ``matmul`` (``A @ B``).

For 2-D operands ``C = A @ B`` the partial adjoints are the textbook ones::

    A_bar = C_bar @ B.T        B_bar = A.T @ C_bar

``matmul`` treats a 1-D operand as a row (left) or a column (right) and broadcasts
over leading "batch" axes, so the rule first views both operands as (batches of)
matrices, applies the 2-D formulas, undoes batch broadcasting and views the
result back in the operand's shape. ``dot`` equals ``matmul`` for operands of at
most two dimensions, is a plain product when either operand is a scalar, and
contracts the last axis of A with the second-to-last of B otherwise (``tensordot``).

Forward mode is simpler: a product is linear in each operand, so its tangent share
is the same product with the operand replaced by its tangent.
"""

import autograd.numpy as anp
import numpy as onp

from .rules import defjvp, defvjp
from .shapes import unbroadcast


def swap_last_two(M):
    axes = list(range(anp.ndim(M)))
    axes[-2], axes[-1] = axes[-1], axes[-2]
    return anp.transpose(M, tuple(axes))


def reshaped(x, shape):
    return x if anp.shape(x) == tuple(shape) else anp.reshape(x, shape)


def as_matrices(A, B):
    """The shapes of A and B as (batches of) matrices, and the shape of their product."""
    a_shape, b_shape = anp.shape(A), anp.shape(B)
    a2 = (1,) + a_shape if len(a_shape) == 1 else a_shape  # a vector on the left is a row
    b2 = b_shape + (1,) if len(b_shape) == 1 else b_shape  # a vector on the right is a column
    batch = onp.broadcast_shapes(a2[:-2], b2[:-2])
    return a2, b2, tuple(batch) + (a2[-2], b2[-1])


def matmul_vjp_A(ans, A, B):
    a2, b2, c2 = as_matrices(A, B)
    B2 = reshaped(B, b2)
    return lambda g: reshaped(
        unbroadcast(anp.matmul(reshaped(g, c2), swap_last_two(B2)), a2), anp.shape(A)
    )


def matmul_vjp_B(ans, A, B):
    a2, b2, c2 = as_matrices(A, B)
    A2 = reshaped(A, a2)
    return lambda g: reshaped(
        unbroadcast(anp.matmul(swap_last_two(A2), reshaped(g, c2)), b2), anp.shape(B)
    )


defvjp(anp.matmul, matmul_vjp_A, matmul_vjp_B)


def dot_vjp_A(ans, A, B):
    a, b = anp.ndim(A), anp.ndim(B)
    if a == 0 or b == 0:  # a product with a scalar
        return lambda g: unbroadcast(g * B, anp.shape(A))
    if a <= 2 and b <= 2:
        return matmul_vjp_A(ans, A, B)
    if b == 1:  # an outer product: A_bar[..., k] = g[...] * B[k]
        return lambda g: anp.reshape(g, anp.shape(g) + (1,)) * B
    return lambda g: anp.tensordot(g, swap_last_two(B), b - 1)


def dot_vjp_B(ans, A, B):
    a, b = anp.ndim(A), anp.ndim(B)
    if a == 0 or b == 0:
        return lambda g: unbroadcast(g * A, anp.shape(B))
    if a <= 2 and b <= 2:
        return matmul_vjp_B(ans, A, B)
    if b == 1:
        return lambda g: anp.tensordot(g, A, a - 1)
    contracted = (list(range(a - 1)), list(range(a - 1)))  # the axes of A other than its last
    return lambda g: anp.moveaxis(anp.tensordot(A, g, contracted), 0, -2)


defvjp(anp.dot, dot_vjp_A, dot_vjp_B)

# -------------------- forward mode: products are linear in each operand --------------------

defjvp(anp.matmul, lambda g, ans, A, B: anp.matmul(g, B), lambda g, ans, A, B: anp.matmul(A, g))
defjvp(anp.dot, lambda g, ans, A, B: anp.dot(g, B), lambda g, ans, A, B: anp.dot(A, g))

"""The engine's own JVP rules: the share ``dv_i/dv_k * v_k_dot`` of an input's tangent.

A rule is ``jvp(g, ans, *args, **kwargs)`` where ``g`` is the tangent ``v_k_dot`` of
the input at that argument number; forward mode adds the shares of all input
positions to get ``v_i_dot``. For ``v_i = x * y``::

    defjvp(anp.multiply, lambda g, ans, x, y: g * y, lambda g, ans, x, y: x * g)

so ``x * x`` with tangent 1 gets ``1 * x + x * 1 = 2x``. A tangent has the shape of
its own operand, so the shares of ``add`` and ``subtract`` are stretched to the
shape of the result (``broadcast_like``); the other binary rules multiply by a
full-shaped operand and broadcast by themselves. Operations that are linear in an
argument reuse the operation itself on the tangent (``linear``).
"""

import autograd.numpy as anp
import numpy as onp
from autograd.numpy.numpy_boxes import ArrayBox
from autograd.util import func, subval

from .rules import defjvp
from .shapes import MEAN, WHERE, broadcast_like, untake
from .vjp_rules import balanced_eq, replace_zero


def linear(fun, argnum):
    """The share of an argument ``fun`` is linear in: ``fun`` applied to the tangent."""
    return lambda g, ans, *args, **kwargs: fun(*subval(args, argnum, g), **kwargs)


# -------------------- elementwise binary operations --------------------

defjvp(anp.add, lambda g, ans, x, y: broadcast_like(g, ans), lambda g, ans, x, y: broadcast_like(g, ans))
defjvp(
    anp.subtract, lambda g, ans, x, y: broadcast_like(g, ans), lambda g, ans, x, y: broadcast_like(-g, ans)
)
defjvp(anp.multiply, lambda g, ans, x, y: g * y, lambda g, ans, x, y: x * g)
defjvp(anp.true_divide, lambda g, ans, x, y: g / y, lambda g, ans, x, y: -g * x / y**2)
defjvp(
    anp.power,
    lambda g, ans, x, y: g * y * x ** anp.where(y, y - 1, 1.0),
    lambda g, ans, x, y: g * anp.log(replace_zero(x, 1.0)) * ans,
)
defjvp(
    anp.maximum,
    lambda g, ans, x, y: g * balanced_eq(x, ans, y),
    lambda g, ans, x, y: g * balanced_eq(y, ans, x),
)
defjvp(
    anp.minimum,
    lambda g, ans, x, y: g * balanced_eq(x, ans, y),
    lambda g, ans, x, y: g * balanced_eq(y, ans, x),
)
defjvp(
    WHERE,
    lambda g, ans, c, x, y: onp.zeros(anp.shape(ans), anp.result_type(ans)),  # c: piecewise constant
    lambda g, ans, c, x, y: anp.where(c, broadcast_like(g, ans), 0.0),
    lambda g, ans, c, x, y: anp.where(c, 0.0, broadcast_like(g, ans)),
)

# -------------------- elementwise unary operations --------------------

defjvp(anp.negative, lambda g, ans, x: -g)
defjvp(anp.sin, lambda g, ans, x: g * anp.cos(x))
defjvp(anp.cos, lambda g, ans, x: -g * anp.sin(x))
defjvp(anp.tan, lambda g, ans, x: g / anp.cos(x) ** 2)
defjvp(anp.sinh, lambda g, ans, x: g * anp.cosh(x))
defjvp(anp.cosh, lambda g, ans, x: g * anp.sinh(x))
defjvp(anp.tanh, lambda g, ans, x: g / anp.cosh(x) ** 2)
defjvp(anp.exp, lambda g, ans, x: ans * g)
defjvp(anp.log, lambda g, ans, x: g / x)
defjvp(anp.sqrt, lambda g, ans, x: g * 0.5 * x**-0.5)
defjvp(anp.absolute, lambda g, ans, x: g * replace_zero(x, 0.0) / replace_zero(ans, 1.0))

# -------------------- reductions, reshaping, indexing: all linear --------------------

defjvp(anp.sum, linear(anp.sum, 0))
defjvp(MEAN, linear(MEAN, 0))
defjvp(anp.reshape, linear(anp.reshape, 0))
defjvp(anp.transpose, linear(anp.transpose, 0))
defjvp(func(ArrayBox.__getitem__), linear(func(ArrayBox.__getitem__), 0))
defjvp(untake, linear(untake, 0))

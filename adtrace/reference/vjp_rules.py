"""The engine's own VJP rules: ``v_k_to_i_bar = v_i_bar * dv_i/dv_k`` per primitive.

Each rule is staged like autograd's: ``maker(ans, *args, **kwargs)`` runs when the
node is visited and returns ``lambda g: ...``, a function of the adjoint
``g = v_i_bar``. For ``v_i = sin(v_k)``::

    defvjp(anp.sin, lambda ans, x: lambda g: g * anp.cos(x))

The formulas are the textbook derivatives, written in the same arithmetic order as
autograd's rules so that where both engines sum the same partial adjoints in the
same order the gradients agree bit for bit. They use ``autograd.numpy`` so that an
outer trace records them (``grad(grad(f))``). Binary operations broadcast, so
their rules end with ``unbroadcast``.
"""

import autograd.numpy as anp
import numpy as onp
from autograd.numpy.numpy_boxes import ArrayBox
from autograd.util import func

from .rules import defvjp
from .shapes import MEAN, WHERE, repeat_to_shape, shape_of, unbroadcast, untake


def replace_zero(x, value):
    return anp.where(x, x, value)


def balanced_eq(x, ans, y):
    """1 where ``x`` won the max/min, 1/2 on ties with ``y`` (the subgradient autograd uses)."""
    return (x == ans) / (1.0 + (x == y))


def binary(fun, rule_x, rule_y):
    """Rules ``rule(g, ans, x, y)`` of a broadcasting binary operation; each partial
    adjoint is then summed back to the shape of its own operand."""
    defvjp(
        fun,
        lambda ans, x, y: (lambda g: unbroadcast(rule_x(g, ans, x, y), shape_of(x))),
        lambda ans, x, y: (lambda g: unbroadcast(rule_y(g, ans, x, y), shape_of(y))),
    )


# -------------------- elementwise binary operations --------------------

binary(anp.add, lambda g, ans, x, y: g, lambda g, ans, x, y: g)
binary(anp.subtract, lambda g, ans, x, y: g, lambda g, ans, x, y: -g)
binary(anp.multiply, lambda g, ans, x, y: y * g, lambda g, ans, x, y: x * g)
binary(anp.true_divide, lambda g, ans, x, y: g / y, lambda g, ans, x, y: -g * x / y**2)
binary(
    anp.power,
    lambda g, ans, x, y: g * y * x ** anp.where(y, y - 1, 1.0),
    lambda g, ans, x, y: g * anp.log(replace_zero(x, 1.0)) * ans,
)
binary(
    anp.maximum,
    lambda g, ans, x, y: g * balanced_eq(x, ans, y),
    lambda g, ans, x, y: g * balanced_eq(y, ans, x),
)
binary(
    anp.minimum,
    lambda g, ans, x, y: g * balanced_eq(x, ans, y),
    lambda g, ans, x, y: g * balanced_eq(y, ans, x),
)


# where(c, x, y): the adjoint goes to x where c holds, to y elsewhere; the condition
# is piecewise constant, so its partial adjoint is zero.
defvjp(
    WHERE,
    lambda ans, c, x, y: lambda g: onp.zeros(anp.shape(c), anp.result_type(c)),
    lambda ans, c, x, y: lambda g: unbroadcast(anp.where(c, g, onp.zeros(anp.shape(g))), anp.shape(x)),
    lambda ans, c, x, y: lambda g: unbroadcast(anp.where(c, onp.zeros(anp.shape(g)), g), anp.shape(y)),
)

# -------------------- elementwise unary operations --------------------

defvjp(anp.negative, lambda ans, x: lambda g: -g)
defvjp(anp.sin, lambda ans, x: lambda g: g * anp.cos(x))
defvjp(anp.cos, lambda ans, x: lambda g: -g * anp.sin(x))
defvjp(anp.tan, lambda ans, x: lambda g: g / anp.cos(x) ** 2)
defvjp(anp.sinh, lambda ans, x: lambda g: g * anp.cosh(x))
defvjp(anp.cosh, lambda ans, x: lambda g: g * anp.sinh(x))
defvjp(anp.tanh, lambda ans, x: lambda g: g / anp.cosh(x) ** 2)
defvjp(anp.exp, lambda ans, x: lambda g: ans * g)
defvjp(anp.log, lambda ans, x: lambda g: g / x)
defvjp(anp.sqrt, lambda ans, x: lambda g: g * 0.5 * x**-0.5)
# d|x|/dx = x / |x| (0 at x = 0); written as autograd writes it, for real inputs.
defvjp(anp.absolute, lambda ans, x: lambda g: g * replace_zero(x, 0.0) / replace_zero(ans, 1.0))

# -------------------- reductions and reshaping --------------------


def sum_maker(ans, x, axis=None, keepdims=False, dtype=None, **kwargs):
    shape, x_dtype = anp.shape(x), anp.result_type(x)
    return lambda g: repeat_to_shape(g, shape, x_dtype, axis)[0]


def mean_maker(ans, x, axis=None, keepdims=False, **kwargs):
    shape, x_dtype = anp.shape(x), anp.result_type(x)

    def vjp(g):
        g_repeated, count = repeat_to_shape(g, shape, x_dtype, axis)
        return g_repeated / count

    return vjp


def transpose_maker(ans, x, axes=None):
    inverse = None if axes is None else tuple(onp.argsort(axes))
    return lambda g: anp.transpose(g, inverse)


defvjp(anp.sum, sum_maker)
defvjp(MEAN, mean_maker)  # anp.mean converts lists, then calls this
defvjp(anp.reshape, lambda ans, x, shape, order=None: lambda g: anp.reshape(g, anp.shape(x), order=order))
defvjp(anp.transpose, transpose_maker)

# -------------------- indexing --------------------


def getitem_maker(ans, A, idx):
    shape, dtype = anp.shape(A), anp.result_type(A)
    return lambda g: untake(g, idx, shape, dtype)


defvjp(func(ArrayBox.__getitem__), getitem_maker)
defvjp(untake, lambda ans, g, idx, shape, dtype: lambda h: h[idx])  # untake is linear in g

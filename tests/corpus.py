"""Functions every engine-facing test runs: the recorder's corpus.

Each case is one differentiation (``operator`` applied to ``fun`` at ``x``); ``run(case)`` performs
it with autograd and returns its result. Cases cover scalar and array inputs, broadcasting, fan-out,
``x[i]`` (sparse contributions), dot and reductions, a primitive with three boxed arguments
(generator VJP), ``argmax`` (notrace), higher order, ``jacobian``, ``make_jvp``,
``elementwise_grad``, containers and custom primitives with ``defvjp``.
"""

from dataclasses import dataclass, field
from typing import Any, Callable

import autograd.numpy as anp
import numpy as np
from autograd import elementwise_grad, grad, hessian, jacobian, make_jvp
from autograd.extend import defvjp, primitive


@primitive
def logsumexp(x):
    """A custom primitive with a staged rule, as in autograd's tutorial."""
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


defvjp(logsumexp, lambda ans, x: lambda g: g * np.exp(x - ans))


@primitive
def fma3(a, b, c):
    """a*b + c: three boxed arguments, so autograd's defvjp returns a generator VJP."""
    return a * b + c


defvjp(
    fma3,
    lambda ans, a, b, c: lambda g: g * b,
    lambda ans, a, b, c: lambda g: g * a,
    lambda ans, a, b, c: lambda g: g,
)


@dataclass(frozen=True)
class Case:
    name: str
    fun: Callable
    x: Any
    operator: str = "grad"  # grad | grad_of_grad | hessian | jacobian | make_jvp | elementwise_grad
    tags: tuple = field(default=())


def _vec(*values):
    return np.array(values, dtype=float)


W = np.arange(12.0).reshape(3, 4) / 10.0 - 0.5
M = np.arange(6.0).reshape(2, 3) / 5.0

CASES = [
    Case("square", lambda x: x * x, 3.0, tags=("scalar", "fan_out")),
    Case("cubic_poly", lambda x: 3.0 * x**3 - 2.0 * x + 1.0, 1.5, tags=("scalar",)),
    Case("sin_times_exp", lambda x: anp.sin(x) * anp.exp(x), 0.7, tags=("scalar",)),
    Case("tanh_chain", lambda x: anp.tanh(anp.tanh(anp.tanh(x))), 0.3, tags=("scalar",)),
    Case("log_sqrt", lambda x: anp.log(anp.sqrt(x) + 1.0), 2.0, tags=("scalar",)),
    Case("rational", lambda x: (x + 1.0) / (x * x + 2.0), -0.4, tags=("scalar",)),
    Case("fractional_power", lambda x: x**2.5, 1.3, tags=("scalar",)),
    Case("identity", lambda x: x, 2.0, tags=("scalar",)),
    Case(
        "fan_out_three",
        lambda x: (lambda y: y * y + y + anp.cos(y))(anp.sin(x)),
        0.9,
        tags=("scalar", "fan_out"),
    ),
    Case("sum_of_squares", lambda x: anp.sum(x * x), _vec(1.0, 2.0, 3.0), tags=("array",)),
    Case(
        "triple_square_sum",
        lambda x: anp.sum(x * x + x * x + x * x),
        _vec(1.0, 2.0),
        tags=("array", "mut_add"),
    ),
    Case(
        "broadcast_row",
        lambda x: anp.sum((x + 1.0) * W),
        _vec(0.1, 0.2, 0.3, 0.4),
        tags=("array", "broadcast"),
    ),
    Case(
        "broadcast_scalar",
        lambda x: anp.sum(x * anp.arange(5.0) + x),
        1.5,
        tags=("scalar", "broadcast"),
    ),
    Case("getitem_pair", lambda x: x[0] * x[1] + x[0], _vec(2.0, 5.0), tags=("array", "sparse")),
    Case(
        "getitem_slices",
        lambda x: anp.sum(x[1:] * x[:-1]),
        _vec(1.0, -2.0, 3.0, 0.5),
        tags=("array", "sparse"),
    ),
    Case("dot_tanh", lambda x: anp.sum(anp.tanh(anp.dot(W, x))), _vec(0.5, -1.0, 2.0, 0.1), tags=("array",)),
    Case("gram_mean", lambda x: anp.mean(anp.dot(x, x.T)), M, tags=("array",)),
    Case("max_reduction", lambda x: anp.max(x * x), _vec(0.5, -3.0, 2.0), tags=("array",)),
    Case("norm", lambda x: anp.sqrt(anp.sum(x**2)), _vec(3.0, 4.0), tags=("array",)),
    Case(
        "abs_maximum",
        lambda x: anp.sum(anp.abs(x) + anp.maximum(x, 0.25)),
        _vec(-1.0, 0.5, 2.0),
        tags=("array",),
    ),
    Case(
        "reshape_transpose",
        lambda x: anp.sum(anp.reshape(x, (2, 3)).T * anp.arange(6.0).reshape(3, 2)),
        np.linspace(-1.0, 1.0, 6),
        tags=("array",),
    ),
    Case("mean_exp", lambda x: anp.mean(anp.exp(x)), _vec(0.1, 0.2, 0.3), tags=("array",)),
    Case(
        "einsum_three_operands",
        lambda x: anp.einsum("i,i,i->", x, x, x),
        _vec(1.0, 2.0, 3.0),
        tags=("array", "generator_vjp"),
    ),
    Case(
        "custom_three_boxed",
        lambda x: anp.sum(fma3(x, anp.sin(x), x * x)),
        _vec(0.3, 0.6),
        tags=("array", "generator_vjp", "custom"),
    ),
    Case(
        "argmax_notrace",
        lambda x: x[anp.argmax(x)] * 2.0 + anp.sum(x),
        _vec(1.0, 7.0, 3.0),
        tags=("array", "notrace", "sparse"),
    ),
    Case("custom_logsumexp", lambda x: logsumexp(x * 2.0), _vec(0.0, 1.0, -1.0), tags=("array", "custom")),
    Case("tuple_input", lambda t: t[0] * t[1] + anp.sin(t[0]), (2.0, 3.0), tags=("container", "sparse")),
    Case(
        "dict_input",
        lambda d: d["a"] * anp.sum(d["b"] ** 2),
        {"a": 1.5, "b": _vec(1.0, 2.0)},
        tags=("container", "sparse"),
    ),
    Case(
        "grad_of_grad",
        lambda x: x**3 + anp.sin(x),
        0.8,
        operator="grad_of_grad",
        tags=("scalar", "higher_order"),
    ),
    Case(
        "grad_of_grad_fan_out",
        lambda x: anp.tanh(x) * anp.tanh(x) * x,
        0.4,
        operator="grad_of_grad",
        tags=("scalar", "higher_order", "fan_out"),
    ),
    Case(
        "hessian_quadratic",
        lambda x: anp.sum(anp.sin(x) * x * x),
        _vec(0.2, 0.7),
        operator="hessian",
        tags=("array", "higher_order"),
    ),
    Case(
        "jacobian_r3_r2",
        lambda x: anp.array([x[0] * x[1], anp.sin(x[2]) + x[0]]),
        _vec(1.0, 2.0, 0.5),
        operator="jacobian",
        tags=("array", "queries"),
    ),
    Case(
        "jacobian_vector_map",
        lambda x: anp.tanh(anp.dot(W, x)),
        _vec(0.1, 0.2, 0.3, 0.4),
        operator="jacobian",
        tags=("array", "queries"),
    ),
    Case("jvp_square_sin", lambda x: x * x + anp.sin(x), 3.0, operator="make_jvp", tags=("scalar", "forward")),
    Case(
        "jvp_array",
        lambda x: anp.exp(x) * anp.sum(x),
        _vec(0.5, 1.0),
        operator="make_jvp",
        tags=("array", "forward"),
    ),
    Case(
        "elementwise_tanh",
        lambda x: anp.tanh(x) * 2.0,
        _vec(-1.0, 0.0, 1.0),
        operator="elementwise_grad",
        tags=("array",),
    ),
]


def run(case):
    """Apply the case's operator with autograd and return its result."""
    f, x = case.fun, case.x
    if case.operator == "grad":
        return grad(f)(x)
    if case.operator == "grad_of_grad":
        return grad(grad(f))(x)
    if case.operator == "hessian":
        return hessian(f)(x)
    if case.operator == "jacobian":
        return jacobian(f)(x)
    if case.operator == "make_jvp":
        return make_jvp(f)(x)(np.ones_like(x) if np.ndim(x) else 1.0)
    if case.operator == "elementwise_grad":
        return elementwise_grad(f)(x)
    raise ValueError(f"unknown operator {case.operator!r} in case {case.name!r}")


def flatten(result):
    """The leaves of a result (arrays, scalars, containers) as a list of numpy arrays."""
    if isinstance(result, dict):
        return [a for k in sorted(result) for a in flatten(result[k])]
    if isinstance(result, (list, tuple)):
        return [a for r in result for a in flatten(r)]
    return [np.asarray(result)]


def bit_identical(a, b):
    """Same structure, dtypes, shapes and bytes."""
    la, lb = flatten(a), flatten(b)
    return len(la) == len(lb) and all(
        x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes() for x, y in zip(la, lb)
    )

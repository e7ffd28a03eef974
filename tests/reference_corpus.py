"""The reference engine's corpus: the recorder's cases plus cases of its own.

``EXTRA_CASES`` add what the reference engine must show on top of ``tests/corpus.py``:
broadcasting of a matrix with a row vector and with size-1 axes, vector plus scalar,
shared subexpressions, a graph on which the lecture's depth-first order and autograd's
``toposort`` differ (``orders_differ``), matrix products of every rank combination, reductions with
axes, ``where``/``minimum``/``tan``, chains without fan-out (where results must be
bit-identical to autograd's), and higher order through indexing, ``power`` with a
traced exponent and ``abs``. ``run_reference(case)`` applies the case's operator with
the reference engine, ``numeric_result(case)`` with central finite differences, and
``autograd_graph(fun, x)`` gives autograd's own graph as ``adtrace.record()`` records it.
"""

import autograd.numpy as anp
import numpy as np
from autograd.core import make_vjp, vspace
from autograd.misc import flatten as vspace_flatten

import adtrace
import adtrace.reference as ref
from corpus import CASES, Case

A = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])  # (2, 3)
B = np.arange(12.0).reshape(3, 4) / 7.0 - 0.6  # (3, 4)
T3 = np.arange(24.0).reshape(2, 3, 4) / 10.0 - 1.0  # (2, 3, 4)


def _vec(*values):
    return np.array(values, dtype=float)


EXTRA_CASES = [
    Case("matrix_plus_row", lambda r: anp.sum(anp.tanh(A + r) * A), _vec(0.1, -0.2, 0.3), tags=("array", "broadcast")),
    Case("row_into_matrix", lambda X: anp.sum(anp.sin(X + _vec(1.0, 2.0, 3.0)) * X), A, tags=("array", "broadcast")),
    Case("size_one_axis", lambda c: anp.sum(anp.exp(c * A)), _vec(0.3, -0.4).reshape(2, 1), tags=("array", "broadcast")),
    Case("vector_plus_scalar", lambda v: anp.sum((v + 2.0) ** 2 - v / 4.0), _vec(1.0, -1.0, 0.5), tags=("array", "broadcast")),
    Case("scalar_into_matrix", lambda s: anp.sum(anp.cos(s * A - s)), 0.7, tags=("scalar", "broadcast")),
    Case(
        "shared_tanh",
        lambda x: (lambda h: anp.sum(h * h + h) + anp.dot(h, h))(anp.tanh(x)),
        _vec(0.2, -0.5, 1.0),
        tags=("array", "fan_out"),
    ),
    Case("dot_vector_matrix", lambda x: anp.sum(anp.dot(x, B) ** 2), _vec(0.3, -0.1, 0.8), tags=("array",)),
    Case("dot_scalar", lambda s: anp.sum(anp.dot(s, A) * anp.dot(A, s)), 1.3, tags=("scalar",)),
    Case("matmul_matrix", lambda X: anp.sum(anp.tanh(X @ B)), A, tags=("array",)),
    Case("matmul_vector", lambda v: anp.sum(anp.sin(A @ v) + v @ anp.transpose(A) @ _vec(1.0, 2.0)), _vec(0.1, 0.4, -0.3), tags=("array",)),
    Case("matmul_batched", lambda X: anp.sum(anp.matmul(T3, X) ** 2), B.T[:, :2], tags=("array", "broadcast")),
    Case("dot_high_rank", lambda X: anp.sum(anp.dot(T3, X) * 0.5), B.T[:, :3].copy(), tags=("array",)),
    Case(
        "axis_reductions",
        lambda X: anp.sum(anp.mean(X, axis=0) * anp.sum(X * X, axis=1, keepdims=True)),
        A,
        tags=("array", "broadcast"),
    ),
    Case("transpose_axes", lambda X: anp.sum(anp.transpose(X, (2, 0, 1)) * anp.arange(24.0).reshape(4, 2, 3)), T3, tags=("array",)),
    Case(
        "where_minimum_tan",
        lambda x: anp.sum(anp.where(x > 0, x * x, -x) + anp.minimum(x, 0.5) + anp.tan(x)),
        _vec(-0.5, 0.25, 1.0),
        tags=("array",),
    ),
    Case(
        "orders_differ",
        lambda x: (lambda a, b: b * (a * b))(x * x, anp.sin(x)),
        0.8,
        tags=("scalar", "fan_out", "orders_differ"),
    ),
    Case("hyperbolic", lambda x: anp.sum(anp.sinh(x) * anp.cosh(x) - x), _vec(0.4, -1.2), tags=("array",)),
    Case("chain_scalar", lambda x: anp.exp(anp.sin(anp.log(anp.sqrt(x)))), 2.5, tags=("scalar", "chain")),
    Case("chain_array", lambda x: anp.sum(anp.tanh(anp.cos(-x) / 3.0)), _vec(0.1, 0.9, 2.0), tags=("array", "chain")),
    Case("hessian_getitem", lambda x: anp.sum(x[1:] * x[:-1] ** 2), _vec(1.0, -2.0, 0.5), operator="hessian", tags=("array", "sparse", "higher_order")),
    Case("grad_of_grad_power", lambda x: x**x + anp.abs(x) * anp.sqrt(x), 1.7, operator="grad_of_grad", tags=("scalar", "higher_order")),
    Case("grad_of_grad_tanh_div", lambda x: anp.tanh(x) / (1.0 + x * x), 0.6, operator="grad_of_grad", tags=("scalar", "higher_order")),
    Case("hessian_dot", lambda x: anp.dot(x, anp.dot(A.T @ A, x)) + anp.sum(anp.maximum(x, 0.0) ** 3), _vec(0.5, -1.0, 2.0), operator="hessian", tags=("array", "higher_order")),
    Case("jacobian_broadcast", lambda x: anp.reshape(x, (3, 1)) * x + anp.mean(x), _vec(1.0, 2.0, -1.0), operator="jacobian", tags=("array", "broadcast")),
    Case("jvp_matrix", lambda X: anp.tanh(X @ B) - X.sum(), A, operator="make_jvp", tags=("array", "forward")),
    Case("elementwise_broadcast", lambda x: anp.exp(x) * anp.sin(x) + 1.0, _vec(0.3, 0.6, 0.9), operator="elementwise_grad", tags=("array",)),
]

ALL_CASES = CASES + EXTRA_CASES


def run_reference(case):
    """Apply the case's operator with the reference engine (hessian = jacobian(grad))."""
    f, x = case.fun, case.x
    if case.operator == "grad":
        return ref.grad(f)(x)
    if case.operator == "grad_of_grad":
        return ref.grad(ref.grad(f))(x)
    if case.operator == "hessian":
        return ref.jacobian(ref.grad(f))(x)
    if case.operator == "jacobian":
        return ref.jacobian(f)(x)
    if case.operator == "make_jvp":
        return ref.make_jvp(f)(x)(np.ones_like(x) if np.ndim(x) else 1.0)
    if case.operator == "elementwise_grad":
        return ref.elementwise_grad(f)(x)
    raise ValueError(f"unknown operator {case.operator!r} in case {case.name!r}")


def numeric_jacobian(fun, x, eps=1e-6):
    """Central differences: ``(f(x + eps e_c) - f(x - eps e_c)) / 2 eps`` per input entry."""
    x = np.asarray(x, dtype=float)
    columns = []
    for c in np.ndindex(*x.shape):
        step = np.zeros_like(x)
        step[c] = eps
        up, down = fun(x + step), fun(x - step)
        columns.append((np.asarray(up) - np.asarray(down)) / (2 * eps))
    out_shape = np.shape(fun(x))
    return np.stack(columns, axis=-1).reshape(out_shape + x.shape)


def numeric_result(case):
    """The case's result by finite differences (second derivatives: of the reference gradient).
    A container input (tuple, list, dict) is differentiated along autograd's flattening of it."""
    f, x = case.fun, case.x
    if isinstance(x, (tuple, list, dict)):
        if case.operator != "grad":
            raise ValueError(f"case {case.name!r}: a container input is checked under grad only")
        flat, unflatten = vspace_flatten(x)
        return unflatten(numeric_jacobian(lambda v: f(unflatten(v)), flat))
    if case.operator in ("grad", "jacobian"):
        return numeric_jacobian(f, x)
    if case.operator in ("grad_of_grad", "hessian"):
        return numeric_jacobian(ref.grad(f), x)
    J = numeric_jacobian(f, x)
    in_axes = np.ndim(x)
    if case.operator == "make_jvp":
        return (f(x), np.tensordot(J, np.ones(np.shape(x)), in_axes))
    if case.operator == "elementwise_grad":
        out_axes = J.ndim - in_axes
        return np.sum(J, axis=tuple(range(out_axes)))
    raise ValueError(f"unknown operator {case.operator!r} in case {case.name!r}")


# -------------------- autograd's own graph, labelled the recorder's way --------------------


def autograd_graph(fun, x):
    """autograd's graph of ``fun`` at ``x`` as the recorder sees it: ``label -> parent labels``
    (reachable nodes only), the labels of ``toposort``'s visit order, and every node's label in
    creation order. One ``make_vjp`` and one backward query with a seed of ones."""
    with adtrace.record(capture="structure") as rec:
        vjp, ans = make_vjp(fun, x)
        vjp(vspace(ans).ones())
    (query,) = rec.queries
    end = rec.query_events(query)[0].end
    return rec.graph(end), rec.visit_order(query), list(rec.nodes)

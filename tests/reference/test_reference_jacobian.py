"""Jacobians from basis vectors: reverse rows, forward columns, and hessian."""

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import adtrace.reference as ref

W = np.arange(12.0).reshape(3, 4) / 10.0 - 0.5

FUNCTIONS = [
    ("r3_to_r2", lambda x: anp.array([x[0] * x[1], anp.sin(x[2]) + x[0]]), np.array([1.0, 2.0, 0.5])),
    ("vector_map", lambda x: anp.tanh(anp.dot(W, x)), np.array([0.1, 0.2, 0.3, 0.4])),
    ("matrix_in_matrix_out", lambda X: anp.exp(X) @ W, np.arange(6.0).reshape(2, 3) / 6.0),
    ("scalar_in", lambda s: anp.sin(s * np.arange(3.0)), 0.7),
    ("scalar_out", lambda x: anp.sum(x**2), np.array([1.0, -2.0])),
]


@pytest.mark.parametrize("name, f, x", FUNCTIONS, ids=[f[0] for f in FUNCTIONS])
def test_rows_and_columns_give_autograds_jacobian(name, f, x):
    expected = autograd.jacobian(f)(x)
    rows, columns = ref.jacobian(f)(x), ref.jacobian_forward(f)(x)
    assert rows.shape == columns.shape == expected.shape == np.shape(f(x)) + np.shape(x)
    np.testing.assert_allclose(rows, expected, rtol=1e-12)
    np.testing.assert_allclose(columns, expected, rtol=1e-12)


def test_jacobian_argnum():
    f = lambda x, y: x * anp.sin(y)
    x, y = np.array([1.0, 2.0]), np.array([0.3, 0.4])
    np.testing.assert_allclose(ref.jacobian(f, 1)(x, y), autograd.jacobian(f, 1)(x, y), rtol=1e-12)
    np.testing.assert_allclose(ref.jacobian_forward(f, 1)(x, y), autograd.jacobian(f, 1)(x, y), rtol=1e-12)


def test_hessian_is_jacobian_of_grad():
    f = lambda x: anp.sum(anp.sin(x) * x * x) + x[0] * x[1] ** 2
    x = np.array([0.2, 0.7])
    H = ref.hessian(f)(x)
    np.testing.assert_allclose(H, autograd.hessian(f)(x), rtol=1e-12)
    np.testing.assert_allclose(H, H.T, rtol=1e-12)


def test_empty_input_gives_empty_jacobian():
    f = lambda x: anp.sum(x) + 1.0
    assert ref.jacobian_forward(f)(np.zeros(0)).shape == (0,)

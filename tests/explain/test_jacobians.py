"""A node's local Jacobian from its own VJP rule, and the recorded diagonal without calls."""

import autograd.numpy as np
from autograd import grad, jacobian as autograd_jacobian

import adtrace
from adtrace.explain import jacobians
from adtrace.explain.jacobians import MAX_ELEMENTS, diagonal, jacobian, recorded_diagonal

W = np.array([[1.0, -2.0, 0.5], [3.0, 0.0, -1.0]])


def f(x):
    return np.sum(np.tanh(np.dot(W, x)))


def test_the_jacobian_of_a_dot_is_its_matrix_and_of_tanh_its_diagonal():
    x = np.array([0.3, -0.2, 0.1])
    with adtrace.record(capture="full", calls=True) as rec:
        grad(f)(x)
    assert np.array_equal(jacobian(rec, "v1_dot", 0), W)
    assert np.allclose(jacobian(rec, "v2_tanh", 0), autograd_jacobian(np.tanh)(np.dot(W, x)), rtol=1e-15)


def test_without_calls_or_above_the_size_there_is_none(monkeypatch):
    x = np.array([0.3, -0.2, 0.1])
    with adtrace.record(capture="full") as rec:
        grad(f)(x)
    assert jacobian(rec, "v1_dot", 0) is None
    query = rec.user_query()
    diagonal = recorded_diagonal(rec, query, "v2_tanh", 0, np.dot(W, x))
    assert np.allclose(diagonal, 1 / np.cosh(np.dot(W, x)) ** 2, rtol=1e-15)
    with adtrace.record(capture="full", calls=True) as rec:
        grad(f)(x)
    monkeypatch.setattr(jacobians, "MAX_ELEMENTS", 1)
    assert MAX_ELEMENTS > 1 and jacobian(rec, "v1_dot", 0) is None


def test_past_the_budget_of_vjp_calls_a_jacobian_is_not_known(monkeypatch):
    x = np.array([0.3, -0.2, 0.1])
    with adtrace.record(capture="full", calls=True) as rec:
        grad(f)(x)
    monkeypatch.setattr(jacobians, "MAX_VJPS", 3)  # the dot's 2 rows fit, the tanh's 2 more do not
    assert jacobian(rec, "v1_dot", 0) is not None
    assert jacobian(rec, "v2_tanh", 0) is None


def test_an_elementwise_jacobian_has_nothing_off_its_diagonal_even_at_an_infinite_derivative():
    """sqrt's rule on the unit seed e_0 at [1, -2, 0] makes [0.5, 0 * nan, 0 * inf] = [0.5, nan, nan]:
    element 0 of the output does not read elements 1 and 2."""
    with np.errstate(all="ignore"), adtrace.record(capture="full", calls=True) as rec:
        grad(lambda x: np.sum(np.sqrt(x)))(np.array([1.0, -2.0, 0.0]))
    J = jacobian(rec, "v1_sqrt", 0)
    assert np.array_equal(J, np.diag(np.diagonal(J)), equal_nan=True)
    assert J[0, 0] == 0.5 and np.isnan(J[1, 1]) and J[2, 2] == np.inf


def test_an_elementwise_nodes_derivatives_are_its_diagonal_of_one_vjp():
    with np.errstate(all="ignore"), adtrace.record(capture="full", calls=True) as rec:
        grad(lambda x: np.sum(np.sqrt(x)))(np.array([1.0, -2.0, 0.0]))
    assert np.array_equal(diagonal(rec, "v1_sqrt", 0), np.diagonal(jacobian(rec, "v1_sqrt", 0)), equal_nan=True)


def test_the_numbers_kept_are_bounded(monkeypatch):
    W = np.array([[1.0, 2.0], [3.0, 4.0]])
    with adtrace.record(capture="full", calls=True) as rec:
        grad(lambda x: np.sum(np.tanh(np.dot(W, x))))(np.array([0.3, -0.2]))
    monkeypatch.setattr(jacobians, "MAX_ENTRIES", 3)  # the dot's 2 x 2 do not fit: not known (said so), not made
    assert jacobian(rec, "v1_dot", 0) is None
    assert diagonal(rec, "v2_tanh", 0) is not None  # 2 numbers fit


def test_a_relu_above_max_elements_is_still_followed_element_by_element():
    """A relu of more elements than MAX_ELEMENTS: its diagonal (one VJP) says it cut, where the recorded
    VJP (an outgrad of 0 there, from h ** 2) cannot."""
    from adtrace.explain import explain
    x = np.linspace(-1.0, 1.0, MAX_ELEMENTS + 2)
    (e,) = explain(lambda x: np.sum(np.maximum(x, 0.0) ** 2), x, wrt="x[0]")
    assert [(c.primitive, c.reason, c.fraction) for c in e.causes] == [("maximum", "relu-off", 1.0)]


def test_a_large_jacobian_kept_as_rows_says_what_the_dense_one_does(monkeypatch):
    """Above DENSE entries a dot's Jacobian keeps only its rows' entries not 0: same connections, same columns."""
    from adtrace.explain.jacobians import Rows, column, moved
    A = np.array([[1.0, 0.0, 2.0], [0.0, 0.0, -1.0]])
    with adtrace.record(capture="full", calls=True) as rec:
        grad(lambda x: np.sum(np.tanh(np.dot(A, x))))(np.array([0.3, -0.2, 0.5]))
    dense = jacobian(rec, "v1_dot", 0)
    monkeypatch.setattr(jacobians, "DENSE", 1)
    jacobians._MADE.pop(rec)
    rows = jacobian(rec, "v1_dot", 0)
    assert isinstance(rows, Rows) and rows.size == 3  # the 3 entries not 0 of 6
    for mask in ([True, False, False], [False, True, False], [False, False, True]):
        assert moved(rows, np.array(mask)).tolist() == moved(dense, np.array(mask)).tolist()
    assert all(column(rows, at) == column(dense, at) for at in range(3))

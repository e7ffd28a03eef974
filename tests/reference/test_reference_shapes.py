"""Undoing broadcasting and indexing in the adjoint rules."""

import numpy as np
import pytest

from adtrace.reference.shapes import broadcast_like, repeat_to_shape, unbroadcast, untake

G = np.arange(6.0).reshape(2, 3)


@pytest.mark.parametrize(
    "target, expected",
    [
        ((2, 3), G),
        ((3,), G.sum(axis=0)),  # a row vector broadcast against a matrix
        ((1, 3), G.sum(axis=0, keepdims=True)),
        ((2, 1), G.sum(axis=1, keepdims=True)),
        ((), G.sum()),  # a scalar
        ((1,), np.array([G.sum()])),
    ],
)
def test_unbroadcast_sums_the_stretched_axes(target, expected):
    result = unbroadcast(G, target)
    assert np.shape(result) == target
    np.testing.assert_array_equal(result, expected)


def test_broadcast_like_stretches_a_tangent_to_the_result():
    np.testing.assert_array_equal(broadcast_like(np.array([1.0, 2.0, 3.0]), G), [[1, 2, 3], [1, 2, 3]])
    same = np.ones((2, 3))
    assert broadcast_like(same, G) is same


@pytest.mark.parametrize(
    "axis, kept, count",
    [(None, (1, 1), 6), (0, (1, 3), 2), (1, (2, 1), 3), (-1, (2, 1), 3), ((0, 1), (1, 1), 6)],
)
def test_repeat_to_shape_is_the_adjoint_of_a_reduction(axis, kept, count):
    g = np.arange(1.0, 1.0 + np.prod(kept)).reshape(kept)
    repeated, n = repeat_to_shape(np.squeeze(g) if axis is not None else g.sum(), (2, 3), float, axis)
    assert n == count and repeated.shape == (2, 3)
    np.testing.assert_array_equal(repeated, np.broadcast_to(g, (2, 3)))


def test_untake_adds_where_an_index_repeats():
    result = untake(np.array([1.0, 2.0, 4.0]), [0, 2, 0], (3,), np.float64)
    np.testing.assert_array_equal(result, [5.0, 0.0, 2.0])
    np.testing.assert_array_equal(untake(np.array([7.0, 8.0]), 1, (3, 2), float), [[0, 0], [7, 8], [0, 0]])
    np.testing.assert_array_equal(untake(np.ones(2), slice(1, None), (3,), float), [0, 1, 1])


def test_an_empty_list_index_gets_a_zero_adjoint():
    """``x[[]]`` selects nothing: its adjoint is zeros of x's shape (and the rest of the gradient)."""
    import autograd
    import autograd.numpy as anp

    import adtrace.reference as ref

    def f(x):
        return anp.sum(x[[]]) + anp.sum(x * x)

    x = np.array([1.0, 2.0, 3.0])
    assert np.array_equal(ref.grad(f)(x), autograd.grad(f)(x)) and np.array_equal(ref.grad(f)(x), 2 * x)

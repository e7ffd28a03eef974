"""The reference engine's own rules for products: its gradient is autograd's for every pair of
ranks ``dot`` and ``matmul`` take (scalars, vectors, matrices, stacks)."""

import itertools

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import adtrace.reference as ref

SHAPES = {0: (), 1: (3,), 2: (2, 3), 3: (4, 2, 3)}  # A: its last axis is the contracted one (3)


def operands(a, b):
    rng = np.random.default_rng(a * 4 + b)
    shape_b = {0: (), 1: (3,), 2: (3, 2), 3: (2, 3, 2)}[b]  # B: its second to last axis (or only one)
    return rng.standard_normal(SHAPES[a]), rng.standard_normal(shape_b)


@pytest.mark.parametrize("a, b", list(itertools.product(range(4), repeat=2)))
def test_dot_gradients_are_autograds_at_every_rank(a, b):
    A, B = operands(a, b)

    def f(A, B):
        return anp.sum(anp.sin(anp.dot(A, B)))

    for argnum in (0, 1):
        got, want = ref.grad(f, argnum)(A, B), autograd.grad(f, argnum)(A, B)
        assert np.shape(got) == np.shape(want) and np.allclose(got, want, rtol=1e-12, atol=0), (a, b, argnum)

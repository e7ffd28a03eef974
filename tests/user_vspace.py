"""A user's own vector space, as autograd's examples/rkhs.py registers one: ``==`` is identity."""

import numpy as np
from autograd.core import VSpace


class Pair:
    """A value of a user's own vector space (as autograd's examples/rkhs.py registers one)."""

    def __init__(self, a, b):
        self.a, self.b = a, b


class PairSpace(VSpace):
    def __init__(self, value):
        self.size = 2

    def zeros(self):
        return Pair(0.0, 0.0)

    def randn(self):
        return Pair(*np.random.randn(2))

    def _add(self, x, y):
        return Pair(x.a + y.a, x.b + y.b)

    def _scalar_mul(self, x, c):
        return Pair(x.a * c, x.b * c)

    def _inner_prod(self, x, y):
        return x.a * y.a + x.b * y.b


PairSpace.register(Pair)

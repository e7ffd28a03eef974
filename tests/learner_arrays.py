"""Tensor-valued classes of micrograd's shape, written as a tutorial writes them: numpy arrays as
``data`` and ``grad``, elementwise ``+`` and ``*`` with broadcasting (the backward sums the
gradient back to the input's shape: ``unbroadcast``), ``@``, ``sum()`` (``Tensor``'s along an axis
too, still written ``'sum'``), ``relu`` and ``tanh``.

``Tensor`` is correct; ``NoTransposeTensor``'s ``@`` backward forgets a transpose
(``self.grad += out.grad @ other.data``, right only for a symmetric ``other``);
``MeanTensor`` has a ``mean()`` whose op adtrace has no rule for (its backward is correct), and
keeps each ``.grad`` in its data's dtype: ``grad = (grad + c).astype(dtype)``, a new array that is
not ``grad + c`` itself, so adtrace cannot tell what the write added (not known).
Each class is written whole, as a learner writes it (no shared base). In the first two, as in
micrograd, ``.grad`` starts as the number 0 and becomes an array at the first ``+=``.
"""

import numpy as np


def unbroadcast(grad, shape):
    """Sum ``grad`` over the axes numpy broadcast to reach ``shape``."""
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    for axis, n in enumerate(shape):
        if n == 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad


class Tensor:

    def __init__(self, data, _children=(), _op=''):
        self.data = np.asarray(data, dtype=float)
        self.grad = 0.0  # a number until the first write adds an array to it (as micrograd starts it)
        self._backward = lambda: None
        self._prev = set(_children)
        self._op = _op

    def __add__(self, other):
        other = other if isinstance(other, Tensor) else Tensor(other)
        out = Tensor(self.data + other.data, (self, other), '+')

        def _backward():
            self.grad += unbroadcast(out.grad, self.data.shape)
            other.grad += unbroadcast(out.grad, other.data.shape)
        out._backward = _backward
        return out

    def __mul__(self, other):
        other = other if isinstance(other, Tensor) else Tensor(other)
        out = Tensor(self.data * other.data, (self, other), '*')

        def _backward():
            self.grad += unbroadcast(other.data * out.grad, self.data.shape)
            other.grad += unbroadcast(self.data * out.grad, other.data.shape)
        out._backward = _backward
        return out

    def __matmul__(self, other):
        out = Tensor(self.data @ other.data, (self, other), '@')

        def _backward():
            self.grad += out.grad @ other.data.T
            other.grad += self.data.T @ out.grad
        out._backward = _backward
        return out

    def sum(self, axis=None):
        out = Tensor(self.data.sum(axis=axis), (self,), 'sum')

        def _backward():
            g = out.grad if axis is None else np.expand_dims(out.grad, axis)
            self.grad += np.ones_like(self.data) * g
        out._backward = _backward
        return out

    def relu(self):
        out = Tensor(np.maximum(self.data, 0), (self,), 'ReLU')

        def _backward():
            self.grad += (out.data > 0) * out.grad
        out._backward = _backward
        return out

    def tanh(self):
        t = np.tanh(self.data)
        out = Tensor(t, (self,), 'tanh')

        def _backward():
            self.grad += (1 - t ** 2) * out.grad
        out._backward = _backward
        return out

    def backward(self):
        topo, visited = [], set()

        def build_topo(v):
            if v not in visited:
                visited.add(v)
                for child in v._prev:
                    build_topo(child)
                topo.append(v)
        build_topo(self)
        self.grad = np.ones_like(self.data)
        for v in reversed(topo):
            v._backward()


class NoTransposeTensor:
    """As ``Tensor``, but ``@``'s backward forgets to transpose ``other``."""

    def __init__(self, data, _children=(), _op=''):
        self.data = np.asarray(data, dtype=float)
        self.grad = 0.0  # a number until the first write adds an array to it (as micrograd starts it)
        self._backward = lambda: None
        self._prev = set(_children)
        self._op = _op

    def __add__(self, other):
        out = NoTransposeTensor(self.data + other.data, (self, other), '+')

        def _backward():
            self.grad += unbroadcast(out.grad, self.data.shape)
            other.grad += unbroadcast(out.grad, other.data.shape)
        out._backward = _backward
        return out

    def __matmul__(self, other):
        out = NoTransposeTensor(self.data @ other.data, (self, other), '@')

        def _backward():
            self.grad += out.grad @ other.data  # the bug: other.data.T
            other.grad += self.data.T @ out.grad
        out._backward = _backward
        return out

    def sum(self):
        out = NoTransposeTensor(self.data.sum(), (self,), 'sum')

        def _backward():
            self.grad += np.ones_like(self.data) * out.grad
        out._backward = _backward
        return out

    def tanh(self):
        t = np.tanh(self.data)
        out = NoTransposeTensor(t, (self,), 'tanh')

        def _backward():
            self.grad += (1 - t ** 2) * out.grad
        out._backward = _backward
        return out

    def backward(self):
        topo, visited = [], set()

        def build_topo(v):
            if v not in visited:
                visited.add(v)
                for child in v._prev:
                    build_topo(child)
                topo.append(v)
        build_topo(self)
        self.grad = np.ones_like(self.data)
        for v in reversed(topo):
            v._backward()


class MeanTensor:
    """Elementwise ``*`` and a ``mean()``: an op adtrace has no rule for. Each write keeps ``.grad`` in
    the data's dtype (a copy of the sum: what it added is not known to adtrace)."""

    def __init__(self, data, _children=(), _op=''):
        self.data = np.asarray(data, dtype=float)
        self.grad = np.zeros_like(self.data)
        self._backward = lambda: None
        self._prev = set(_children)
        self._op = _op

    def __mul__(self, other):
        out = MeanTensor(self.data * other.data, (self, other), '*')

        def _backward():
            self.grad = (self.grad + other.data * out.grad).astype(self.data.dtype)
            other.grad = (other.grad + self.data * out.grad).astype(other.data.dtype)
        out._backward = _backward
        return out

    def mean(self):
        out = MeanTensor(self.data.mean(), (self,), 'mean')

        def _backward():
            self.grad = (self.grad + np.ones_like(self.data) * out.grad / self.data.size).astype(self.data.dtype)
        out._backward = _backward
        return out

    def backward(self):
        topo, visited = [], set()

        def build_topo(v):
            if v not in visited:
                visited.add(v)
                for child in v._prev:
                    build_topo(child)
                topo.append(v)
        build_topo(self)
        self.grad = np.ones_like(self.data)
        for v in reversed(topo):
            v._backward()

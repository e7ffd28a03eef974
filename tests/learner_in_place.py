"""Tensor classes whose ``_backward`` writes ``.grad`` without assigning it, or starts it as None.

``InPlaceTensor`` is correct and writes every ``.grad`` in place: ``np.add(grad, c, out=grad)`` and
``np.add(c, grad, out=grad)`` (``+``), ``grad[...] += c`` (``*``), ``np.add.at(grad, idx, c)``
(indexing), ``grad += c`` (``sum``). ``SliceBugTensor`` has the ``=`` bug through a slice in ``+``
(``self.grad[:] = out.grad``: drops what was there). ``LazyTensor`` starts each ``.grad`` as None
(``if self.grad is None: self.grad = g.copy() else: self.grad = self.grad + g``) and its ``sum``
keeps what it read of ``out.grad`` (``out.seen``).
"""

import numpy as np


class InPlaceTensor:

    def __init__(self, data, _children=(), _op=''):
        self.data = np.asarray(data, dtype=float)
        self.grad = np.zeros_like(self.data)
        self._backward = lambda: None
        self._prev = set(_children)
        self._op = _op

    def __add__(self, other):
        out = InPlaceTensor(self.data + other.data, (self, other), '+')

        def _backward():
            np.add(self.grad, out.grad, out=self.grad)
            np.add(out.grad, other.grad, out=other.grad)
        out._backward = _backward
        return out

    def __mul__(self, other):
        out = InPlaceTensor(self.data * other.data, (self, other), '*')

        def _backward():
            self.grad[...] += other.data * out.grad
            other.grad[...] += self.data * out.grad
        out._backward = _backward
        return out

    def __getitem__(self, idx):
        out = InPlaceTensor(self.data[idx], (self,), 'getitem')

        def _backward():
            np.add.at(self.grad, idx, out.grad)
        out._backward = _backward
        return out

    def sum(self):
        out = InPlaceTensor(self.data.sum(), (self,), 'sum')

        def _backward():
            self.grad += out.grad * np.ones_like(self.data)
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


class SliceBugTensor:

    def __init__(self, data, _children=(), _op=''):
        self.data = np.asarray(data, dtype=float)
        self.grad = np.zeros_like(self.data)
        self._backward = lambda: None
        self._prev = set(_children)
        self._op = _op

    def __add__(self, other):
        out = SliceBugTensor(self.data + other.data, (self, other), '+')

        def _backward():
            self.grad[:] = out.grad  # the bug: replaces what was there
            other.grad[:] = out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        out = SliceBugTensor(self.data * other.data, (self, other), '*')

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def sum(self):
        out = SliceBugTensor(self.data.sum(), (self,), 'sum')

        def _backward():
            self.grad += out.grad * np.ones_like(self.data)
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


class LazyTensor:

    def __init__(self, data, _children=(), _op=''):
        self.data = np.asarray(data, dtype=float)
        self.grad = None
        self._backward = lambda: None
        self._prev = tuple(_children)
        self._op = _op

    def _accumulate(self, g):
        if self.grad is None:
            self.grad = g.copy()
        else:
            self.grad = self.grad + g

    def __add__(self, other):
        out = LazyTensor(self.data + other.data, (self, other), '+')

        def _backward():
            self._accumulate(out.grad)
            other._accumulate(out.grad)
        out._backward = _backward
        return out

    def __mul__(self, other):
        out = LazyTensor(self.data * other.data, (self, other), '*')

        def _backward():
            self._accumulate(other.data * out.grad)
            other._accumulate(self.data * out.grad)
        out._backward = _backward
        return out

    def sum(self):
        out = LazyTensor(self.data.sum(), (self,), 'sum')

        def _backward():
            out.seen = out.grad  # keeps what it read
            self._accumulate(np.ones_like(self.data) * out.grad)
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
        for v in topo:
            v.grad = None
        self.grad = np.ones_like(self.data)
        for v in reversed(topo):
            v._backward()

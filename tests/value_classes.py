"""Value classes of micrograd's shape, written as learners write them, and a sink that logs events.

``Value`` is the class built in the course video ("The spelled-out intro to neural networks and
backpropagation"), with ``tanh`` and ``exp``; ``BuggyValue`` has the classic bug in ``__add__``'s
backward (``self.grad = ...`` instead of ``+=``); ``MiniValue`` makes values of its own subclass;
``SlotValue`` keeps its attributes in ``__slots__``; ``ArrayValue`` holds numpy arrays and
accumulates its gradients in place.
"""

import math

import numpy as np


class Value:

    def __init__(self, data, _children=(), _op='', label=''):
        self.data = data
        self.grad = 0.0
        self._backward = lambda: None
        self._prev = set(_children)
        self._op = _op
        self.label = label

    def __repr__(self):
        return f"Value(data={self.data})"

    def __add__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data + other.data, (self, other), '+')

        def _backward():
            self.grad += 1.0 * out.grad
            other.grad += 1.0 * out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data * other.data, (self, other), '*')

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def __pow__(self, other):
        assert isinstance(other, (int, float)), "only supporting int/float powers for now"
        out = Value(self.data**other, (self,), f'**{other}')

        def _backward():
            self.grad += other * (self.data ** (other - 1)) * out.grad
        out._backward = _backward
        return out

    def __rmul__(self, other):  # other * self
        return self * other

    def __truediv__(self, other):  # self / other
        return self * other**-1

    def __neg__(self):  # -self
        return self * -1

    def __sub__(self, other):  # self - other
        return self + (-other)

    def __radd__(self, other):  # other + self
        return self + other

    def tanh(self):
        x = self.data
        t = (math.exp(2*x) - 1)/(math.exp(2*x) + 1)
        out = Value(t, (self, ), 'tanh')

        def _backward():
            self.grad += (1 - t**2) * out.grad
        out._backward = _backward
        return out

    def exp(self):
        x = self.data
        out = Value(math.exp(x), (self, ), 'exp')

        def _backward():
            self.grad += out.data * out.grad
        out._backward = _backward
        return out

    def backward(self):
        topo = []
        visited = set()

        def build_topo(v):
            if v not in visited:
                visited.add(v)
                for child in v._prev:
                    build_topo(child)
                topo.append(v)
        build_topo(self)

        self.grad = 1.0
        for node in reversed(topo):
            node._backward()


class BuggyValue:
    """The classic bug: ``__add__``'s backward assigns instead of accumulating (the rest as in Value)."""

    def __init__(self, data, _children=(), _op=''):
        self.data = data
        self.grad = 0.0
        self._backward = lambda: None
        self._prev = set(_children)
        self._op = _op

    def __add__(self, other):
        other = other if isinstance(other, BuggyValue) else BuggyValue(other)
        out = BuggyValue(self.data + other.data, (self, other), '+')

        def _backward():
            self.grad = 1.0 * out.grad
            other.grad = 1.0 * out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        other = other if isinstance(other, BuggyValue) else BuggyValue(other)
        out = BuggyValue(self.data * other.data, (self, other), '*')

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def backward(self):
        topo = []
        visited = set()

        def build_topo(v):
            if v not in visited:
                visited.add(v)
                for child in v._prev:
                    build_topo(child)
                topo.append(v)
        build_topo(self)

        self.grad = 1.0
        for node in reversed(topo):
            node._backward()


class MiniValue:
    """micrograd's ``+``, ``*`` and ``backward()``, making values of the class they are called on
    (so that a test can subclass it)."""

    def __init__(self, data, _children=(), _op=''):
        self.data, self.grad, self._backward = data, 0.0, lambda: None
        self._prev, self._op = set(_children), _op

    def __add__(self, other):
        out = type(self)(self.data + other.data, (self, other), '+')

        def _backward():
            self.grad += out.grad
            other.grad += out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        out = type(self)(self.data * other.data, (self, other), '*')

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def topological_order(self):
        topo, visited = [], set()

        def build_topo(v):
            if v not in visited:
                visited.add(v)
                for child in v._prev:
                    build_topo(child)
                topo.append(v)
        build_topo(self)
        return topo

    def backward(self):
        topo = self.topological_order()
        self.grad = 1.0
        for v in reversed(topo):
            v._backward()


class ZeroingValue(MiniValue):
    """``MiniValue`` whose ``backward()`` zeroes every gradient before it seeds (a write by no ``_backward``)."""

    def backward(self):
        topo = self.topological_order()
        for v in topo:
            v.grad = 0.0
        self.grad = 1.0
        for v in reversed(topo):
            v._backward()


class CubeValue(MiniValue):
    """``MiniValue`` with ``cube``, an op adtrace knows no rule for."""

    def cube(self):
        out = type(self)(self.data ** 3, (self,), "cube")

        def _backward():
            self.grad += 3 * self.data ** 2 * out.grad
        out._backward = _backward
        return out


class ChainedValue(MiniValue):
    """A class whose ``backward()`` first runs the passes of the values in ``first`` (a
    regularizer's graph, say): a pass run inside another's ``backward()``."""

    first = ()

    def backward(self):
        for other in self.first:
            other.backward()
        super().backward()


class SlotValue:
    __slots__ = ("data", "grad", "_backward", "_prev", "_op")

    def __init__(self, data, _children=(), _op=''):
        self.data, self.grad, self._backward = data, 0, lambda: None
        self._prev, self._op = set(_children), _op

    def __add__(self, other):
        out = SlotValue(self.data + other.data, (self, other), '+')

        def _backward():
            self.grad += out.grad
            other.grad += out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        out = SlotValue(self.data * other.data, (self, other), '*')

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
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
        self.grad = 1
        for v in reversed(topo):
            v._backward()


class ArrayValue:
    """numpy arrays as data; gradients start as zeros and are accumulated in place."""

    def __init__(self, data, _children=(), _op=''):
        self.data = np.asarray(data, dtype=float)
        self.grad = np.zeros_like(self.data)
        self._backward = lambda: None
        self._prev = set(_children)
        self._op = _op

    def __mul__(self, other):
        out = ArrayValue(self.data * other.data, (self, other), '*')

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
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


class EventLog:
    """A sink that keeps every callback as a tuple ``(callback, *arguments)``."""

    def __init__(self):
        self.events = []

    def __getattr__(self, callback):
        if callback.startswith("_"):
            raise AttributeError(callback)
        return lambda *arguments: self.events.append((callback, *arguments))

    def of(self, callback):
        return [event[1:] for event in self.events if event[0] == callback]

    def kinds(self):
        return [event[0] for event in self.events]

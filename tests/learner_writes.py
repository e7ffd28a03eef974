"""Value classes whose ``_backward`` writes ``.grad`` each way learners write it (issue 26, item 3).

``SignedValue`` (Python floats) and ``SignedArray`` (numpy arrays) accumulate correctly in every
form: ``grad += c`` (``*``), ``grad = c + grad`` (``+``'s second argument), ``grad -= c``
(``-``'s), ``grad = grad + c`` and ``grad = grad - c`` (``__rsub__``, ``2.0 - x``); ``SignedArray``
updates in place where the form is augmented (``+=``, ``-=``) and makes a new array where it is not;
its ops take arrays of one shape (``2.0 - x`` makes the number an array of ``x``'s shape).
``AssignValue`` and ``AssignArray`` have the ``=`` bug in every op: each write assigns its contribution.
"""

import numpy as np

# numpy 2 keeps float32 * 1.0 a float32 (NEP 50); numpy 1.x makes it a float64, which adtrace tracks as a float.
FLOAT32_KEPT = type(np.float32(1.0) * 1.0) is np.float32
# A numpy scalar adtrace does not track whose products stay its own type under either: a .grad of it that a
# _backward reads and adds to is "not known".
UNTRACKED = np.float32 if FLOAT32_KEPT else np.longdouble


class SignedValue:

    def __init__(self, data, _children=(), _op=''):
        self.data = data
        self.grad = 0.0
        self._backward = lambda: None
        self._prev = set(_children)
        self._op = _op

    def __add__(self, other):
        out = SignedValue(self.data + other.data, (self, other), '+')

        def _backward():
            self.grad += out.grad
            other.grad = out.grad + other.grad
        out._backward = _backward
        return out

    def __sub__(self, other):
        out = SignedValue(self.data - other.data, (self, other), '-')

        def _backward():
            self.grad += out.grad
            other.grad -= out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        out = SignedValue(self.data * other.data, (self, other), '*')

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def __rsub__(self, other):  # other - self, other a number
        other = SignedValue(other)
        out = SignedValue(other.data - self.data, (other, self), '-')

        def _backward():
            other.grad = other.grad + out.grad
            self.grad = self.grad - out.grad
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
        self.grad = 1.0
        for v in reversed(topo):
            v._backward()


class SignedArray:

    def __init__(self, data, _children=(), _op=''):
        self.data = np.asarray(data, dtype=float)
        self.grad = np.zeros_like(self.data)
        self._backward = lambda: None
        self._prev = set(_children)
        self._op = _op

    def __add__(self, other):
        out = SignedArray(self.data + other.data, (self, other), '+')

        def _backward():
            self.grad += out.grad
            other.grad = out.grad + other.grad
        out._backward = _backward
        return out

    def __sub__(self, other):
        out = SignedArray(self.data - other.data, (self, other), '-')

        def _backward():
            self.grad += out.grad
            other.grad -= out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        out = SignedArray(self.data * other.data, (self, other), '*')

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def __rsub__(self, other):  # other - self, other a number: an array of self's shape (no broadcast to undo)
        other = SignedArray(np.full_like(self.data, other))
        out = SignedArray(other.data - self.data, (other, self), '-')

        def _backward():
            other.grad = other.grad + out.grad
            self.grad = self.grad - out.grad
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


class AssignValue:

    def __init__(self, data, _children=(), _op=''):
        self.data = data
        self.grad = 0.0
        self._backward = lambda: None
        self._prev = set(_children)
        self._op = _op

    def __sub__(self, other):
        out = AssignValue(self.data - other.data, (self, other), '-')

        def _backward():
            self.grad = out.grad
            other.grad = -out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        out = AssignValue(self.data * other.data, (self, other), '*')

        def _backward():
            self.grad = other.data * out.grad
            other.grad = self.data * out.grad
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
        self.grad = 1.0
        for v in reversed(topo):
            v._backward()


class AssignArray:

    def __init__(self, data, _children=(), _op=''):
        self.data = np.asarray(data, dtype=float)
        self.grad = np.zeros_like(self.data)
        self._backward = lambda: None
        self._prev = set(_children)
        self._op = _op

    def __sub__(self, other):
        out = AssignArray(self.data - other.data, (self, other), '-')

        def _backward():
            self.grad = out.grad
            other.grad = -out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        out = AssignArray(self.data * other.data, (self, other), '*')

        def _backward():
            self.grad = other.data * out.grad
            other.grad = self.data * out.grad
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

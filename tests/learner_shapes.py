"""Learners' scalar Value classes of every common shape, each written whole as a tutorial writes it,
and each with the classic bug (``__add__``'s backward assigns ``self.grad = ...`` instead of ``+=``).

Each is recorded with no configuration (``record(engine=cls)``):

- ``SlotsValue``: ``__slots__``; a leaf's ``_backward`` is None, ``backward()`` skips it;
- ``ParentsValue``: the children passed as a list ``parents``; leaves have no ``_backward`` at all;
  the order built with a stack (no recursion);
- ``DataclassValue``: a ``@dataclass(eq=False)`` whose ``_prev`` field is given a set;
- ``MethodValue``: ``_backward`` one method dispatching on ``self._op`` (no closure per value);
  the children passed as ``inputs``, a tuple;
- ``SeedValue``: ``backward(self, grad=1.0)`` seeds with its argument; the children passed as ``prev``;
- ``EdgeValue``: the autodidact's edge style, ``parents`` holding ``(value, local derivative)`` pairs and
  ``backward()`` multiplying along them (no closures).

Beside them: ``SetChildrenValue`` passes the children of ``-`` and ``/`` as a set (``{self, other}``), and
``OplessEdgeValue`` is the edge style with no ``_op``.

Their ``Buggy...`` twins differ in one line, marked ``# the bug``. ``Scalar`` keeps everything under
names of its own (``value``, ``g``, ``kids``, ``backprop``, ``kind``, ``backpropagate()``): adtrace cannot
read it, a declaration describes it (``SCALAR_NAMES``: ``declare(Scalar, **SCALAR_NAMES)``).
Independent of the micrograd package.
"""

from dataclasses import dataclass, field
from typing import Callable


class SlotsValue:
    __slots__ = ("data", "grad", "_backward", "_prev", "_op")

    def __init__(self, data, _children=(), _op=''):
        self.data = data
        self.grad = 0.0
        self._backward = None
        self._prev = tuple(_children)
        self._op = _op

    def __add__(self, other):
        other = other if isinstance(other, SlotsValue) else SlotsValue(other)
        out = SlotsValue(self.data + other.data, (self, other), '+')

        def _backward():
            self.grad += out.grad
            other.grad += out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        other = other if isinstance(other, SlotsValue) else SlotsValue(other)
        out = SlotsValue(self.data * other.data, (self, other), '*')

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def backward(self):
        topo, visited = [], set()

        def build(v):
            if v not in visited:
                visited.add(v)
                for child in v._prev:
                    build(child)
                topo.append(v)
        build(self)
        self.grad = 1.0
        for v in reversed(topo):
            if v._backward is not None:
                v._backward()


class BuggySlotsValue:
    __slots__ = ("data", "grad", "_backward", "_prev", "_op")

    def __init__(self, data, _children=(), _op=''):
        self.data = data
        self.grad = 0.0
        self._backward = None
        self._prev = tuple(_children)
        self._op = _op

    def __add__(self, other):
        other = other if isinstance(other, BuggySlotsValue) else BuggySlotsValue(other)
        out = BuggySlotsValue(self.data + other.data, (self, other), '+')

        def _backward():
            self.grad = out.grad  # the bug
            other.grad += out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        other = other if isinstance(other, BuggySlotsValue) else BuggySlotsValue(other)
        out = BuggySlotsValue(self.data * other.data, (self, other), '*')

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def backward(self):
        topo, visited = [], set()

        def build(v):
            if v not in visited:
                visited.add(v)
                for child in v._prev:
                    build(child)
                topo.append(v)
        build(self)
        self.grad = 1.0
        for v in reversed(topo):
            if v._backward is not None:
                v._backward()


class ParentsValue:

    def __init__(self, data, parents=(), op=''):
        self.data = data
        self.grad = 0
        self.parents = list(parents)
        self._op = op

    def __add__(self, other):
        out = ParentsValue(self.data + other.data, [self, other], '+')

        def _backward():
            self.grad += out.grad
            other.grad += out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        out = ParentsValue(self.data * other.data, [self, other], '*')

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def backward(self):
        order, seen, stack = [], set(), [(self, False)]
        while stack:
            v, expanded = stack.pop()
            if expanded:
                order.append(v)
            elif v not in seen:
                seen.add(v)
                stack.append((v, True))
                stack.extend((p, False) for p in v.parents)
        self.grad = 1
        for v in reversed(order):
            if hasattr(v, "_backward"):
                v._backward()


class BuggyParentsValue:

    def __init__(self, data, parents=(), op=''):
        self.data = data
        self.grad = 0
        self.parents = list(parents)
        self._op = op

    def __add__(self, other):
        out = BuggyParentsValue(self.data + other.data, [self, other], '+')

        def _backward():
            self.grad = out.grad  # the bug
            other.grad += out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        out = BuggyParentsValue(self.data * other.data, [self, other], '*')

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def backward(self):
        order, seen, stack = [], set(), [(self, False)]
        while stack:
            v, expanded = stack.pop()
            if expanded:
                order.append(v)
            elif v not in seen:
                seen.add(v)
                stack.append((v, True))
                stack.extend((p, False) for p in v.parents)
        self.grad = 1
        for v in reversed(order):
            if hasattr(v, "_backward"):
                v._backward()


@dataclass(eq=False)
class DataclassValue:
    data: float
    grad: float = 0.0
    _backward: Callable = lambda: None
    _prev: set = field(default_factory=set)
    _op: str = ''

    def __add__(self, other):
        out = DataclassValue(self.data + other.data, _prev={self, other}, _op='+')

        def _backward():
            self.grad += out.grad
            other.grad += out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        out = DataclassValue(self.data * other.data, _prev={self, other}, _op='*')

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def backward(self):
        topo, visited = [], set()

        def build(v):
            if v not in visited:
                visited.add(v)
                for child in v._prev:
                    build(child)
                topo.append(v)
        build(self)
        self.grad = 1.0
        for v in reversed(topo):
            v._backward()


@dataclass(eq=False)
class BuggyDataclassValue:
    data: float
    grad: float = 0.0
    _backward: Callable = lambda: None
    _prev: set = field(default_factory=set)
    _op: str = ''

    def __add__(self, other):
        out = BuggyDataclassValue(self.data + other.data, _prev={self, other}, _op='+')

        def _backward():
            self.grad = out.grad  # the bug
            other.grad += out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        out = BuggyDataclassValue(self.data * other.data, _prev={self, other}, _op='*')

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def backward(self):
        topo, visited = [], set()

        def build(v):
            if v not in visited:
                visited.add(v)
                for child in v._prev:
                    build(child)
                topo.append(v)
        build(self)
        self.grad = 1.0
        for v in reversed(topo):
            v._backward()


class MethodValue:

    def __init__(self, data, inputs=(), op=''):
        self.data = data
        self.grad = 0.0
        self.inputs = tuple(inputs)
        self._op = op

    def __add__(self, other):
        return MethodValue(self.data + other.data, (self, other), '+')

    def __mul__(self, other):
        return MethodValue(self.data * other.data, (self, other), '*')

    def _backward(self):
        if self._op == '+':
            a, b = self.inputs
            a.grad += self.grad
            b.grad += self.grad
        elif self._op == '*':
            a, b = self.inputs
            a.grad += b.data * self.grad
            b.grad += a.data * self.grad

    def backward(self):
        topo, visited = [], set()

        def build(v):
            if v not in visited:
                visited.add(v)
                for child in v.inputs:
                    build(child)
                topo.append(v)
        build(self)
        self.grad = 1.0
        for v in reversed(topo):
            v._backward()


class BuggyMethodValue:

    def __init__(self, data, inputs=(), op=''):
        self.data = data
        self.grad = 0.0
        self.inputs = tuple(inputs)
        self._op = op

    def __add__(self, other):
        return BuggyMethodValue(self.data + other.data, (self, other), '+')

    def __mul__(self, other):
        return BuggyMethodValue(self.data * other.data, (self, other), '*')

    def _backward(self):
        if self._op == '+':
            a, b = self.inputs
            a.grad = self.grad  # the bug
            b.grad += self.grad
        elif self._op == '*':
            a, b = self.inputs
            a.grad += b.data * self.grad
            b.grad += a.data * self.grad

    def backward(self):
        topo, visited = [], set()

        def build(v):
            if v not in visited:
                visited.add(v)
                for child in v.inputs:
                    build(child)
                topo.append(v)
        build(self)
        self.grad = 1.0
        for v in reversed(topo):
            v._backward()


class SeedValue:

    def __init__(self, data, prev=(), op=''):
        self.data = data
        self.grad = 0.0
        self._backward = lambda: None
        self._prev = set(prev)
        self._op = op

    def __add__(self, other):
        out = SeedValue(self.data + other.data, (self, other), '+')

        def _backward():
            self.grad += out.grad
            other.grad += out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        out = SeedValue(self.data * other.data, (self, other), '*')

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def backward(self, grad=1.0):
        topo, visited = [], set()

        def build(v):
            if v not in visited:
                visited.add(v)
                for child in v._prev:
                    build(child)
                topo.append(v)
        build(self)
        self.grad = grad
        for v in reversed(topo):
            v._backward()


class BuggySeedValue:

    def __init__(self, data, prev=(), op=''):
        self.data = data
        self.grad = 0.0
        self._backward = lambda: None
        self._prev = set(prev)
        self._op = op

    def __add__(self, other):
        out = BuggySeedValue(self.data + other.data, (self, other), '+')

        def _backward():
            self.grad = out.grad  # the bug
            other.grad += out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        out = BuggySeedValue(self.data * other.data, (self, other), '*')

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def backward(self, grad=1.0):
        topo, visited = [], set()

        def build(v):
            if v not in visited:
                visited.add(v)
                for child in v._prev:
                    build(child)
                topo.append(v)
        build(self)
        self.grad = grad
        for v in reversed(topo):
            v._backward()


class Scalar:

    def __init__(self, value, kids=(), kind=''):
        self.value = value
        self.g = 0.0
        self.backprop = lambda: None
        self.kids = tuple(kids)
        self.kind = kind

    def __add__(self, other):
        out = Scalar(self.value + other.value, (self, other), '+')

        def backprop():
            self.g += out.g
            other.g += out.g
        out.backprop = backprop
        return out

    def __mul__(self, other):
        out = Scalar(self.value * other.value, (self, other), '*')

        def backprop():
            self.g += other.value * out.g
            other.g += self.value * out.g
        out.backprop = backprop
        return out

    def backpropagate(self):
        topo, visited = [], set()

        def build(v):
            if v not in visited:
                visited.add(v)
                for kid in v.kids:
                    build(kid)
                topo.append(v)
        build(self)
        self.g = 1.0
        for v in reversed(topo):
            v.backprop()


class BuggyScalar:

    def __init__(self, value, kids=(), kind=''):
        self.value = value
        self.g = 0.0
        self.backprop = lambda: None
        self.kids = tuple(kids)
        self.kind = kind

    def __add__(self, other):
        out = BuggyScalar(self.value + other.value, (self, other), '+')

        def backprop():
            self.g = out.g  # the bug
            other.g += out.g
        out.backprop = backprop
        return out

    def __mul__(self, other):
        out = BuggyScalar(self.value * other.value, (self, other), '*')

        def backprop():
            self.g += other.value * out.g
            other.g += self.value * out.g
        out.backprop = backprop
        return out

    def backpropagate(self):
        topo, visited = [], set()

        def build(v):
            if v not in visited:
                visited.add(v)
                for kid in v.kids:
                    build(kid)
                topo.append(v)
        build(self)
        self.g = 1.0
        for v in reversed(topo):
            v.backprop()


SCALAR_NAMES = dict(data="value", grad="g", children="kids", local_backward="backprop", backward="backpropagate",
                    op="kind")



class EdgeValue:
    """The autodidact's style: each value keeps its ``parents`` as ``(value, local derivative)`` pairs,
    ``backward()`` multiplies along them; no closures."""

    def __init__(self, data, parents=(), _op=''):
        self.data = data
        self.grad = 0.0
        self.parents = list(parents)
        self._op = _op

    def __add__(self, other):
        return EdgeValue(self.data + other.data, [(self, 1.0), (other, 1.0)], '+')

    def __mul__(self, other):
        return EdgeValue(self.data * other.data, [(self, other.data), (other, self.data)], '*')

    def backward(self):
        topo, visited = [], set()

        def build(v):
            if v not in visited:
                visited.add(v)
                for parent, _ in v.parents:
                    build(parent)
                topo.append(v)
        build(self)
        self.grad = 1.0
        for v in reversed(topo):
            for parent, local in v.parents:
                parent.grad += local * v.grad


class BuggyEdgeValue:

    def __init__(self, data, parents=(), _op=''):
        self.data = data
        self.grad = 0.0
        self.parents = list(parents)
        self._op = _op

    def __add__(self, other):
        return BuggyEdgeValue(self.data + other.data, [(self, 1.0), (other, 1.0)], '+')

    def __mul__(self, other):
        return BuggyEdgeValue(self.data * other.data, [(self, other.data), (other, self.data)], '*')

    def backward(self):
        topo, visited = [], set()

        def build(v):
            if v not in visited:
                visited.add(v)
                for parent, _ in v.parents:
                    build(parent)
                topo.append(v)
        build(self)
        self.grad = 1.0
        for v in reversed(topo):
            for parent, local in v.parents:
                parent.grad = local * v.grad  # the bug (here in every op's edges)


class SetChildrenValue:
    """Children passed as a set, ``{self, other}``, for ``-`` and ``/``: the set's order is not the
    arguments' (adtrace puts them back in order by the op's forward)."""

    def __init__(self, data, _children=(), _op=''):
        self.data = data
        self.grad = 0.0
        self._backward = lambda: None
        self._prev = set(_children)
        self._op = _op

    def __sub__(self, other):
        out = SetChildrenValue(self.data - other.data, {self, other}, '-')

        def _backward():
            self.grad += out.grad
            other.grad -= out.grad
        out._backward = _backward
        return out

    def __truediv__(self, other):
        out = SetChildrenValue(self.data / other.data, {self, other}, '/')

        def _backward():
            self.grad += out.grad / other.data
            other.grad -= out.grad * self.data / other.data ** 2
        out._backward = _backward
        return out

    def __mul__(self, other):
        out = SetChildrenValue(self.data * other.data, (self, other), '*')

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def backward(self):
        topo, visited = [], set()

        def build(v):
            if v not in visited:
                visited.add(v)
                for child in v._prev:
                    build(child)
                topo.append(v)
        build(self)
        self.grad = 1.0
        for v in reversed(topo):
            v._backward()


class OplessEdgeValue:
    """The edge style with no ``_op`` at all: values keep only data, gradient and their ``(value,
    local derivative)`` pairs."""

    def __init__(self, data, parents=()):
        self.data = data
        self.parents = parents
        self.grad = 0.0

    def __add__(self, other):
        return OplessEdgeValue(self.data + other.data, [(self, 1.0), (other, 1.0)])

    def __mul__(self, other):
        return OplessEdgeValue(self.data * other.data, [(self, other.data), (other, self.data)])

    def backward(self):
        order, seen = [], set()

        def topo(v):
            if id(v) not in seen:
                seen.add(id(v))
                for parent, _ in v.parents:
                    topo(parent)
                order.append(v)
        topo(self)
        self.grad = 1.0
        for v in reversed(order):
            for parent, local in v.parents:
                parent.grad += local * v.grad


SHAPES = [SlotsValue, ParentsValue, DataclassValue, MethodValue, SeedValue, EdgeValue]  # each with no configuration
BUGGY = {SlotsValue: BuggySlotsValue, ParentsValue: BuggyParentsValue, DataclassValue: BuggyDataclassValue,
         MethodValue: BuggyMethodValue, SeedValue: BuggySeedValue, EdgeValue: BuggyEdgeValue}

"""Learners' engines whose every local rule is right and whose gradient is still wrong: bugs of the
whole backward pass (issue 26, item 5), each written whole as a tutorial writes it.

- ``Value``: micrograd's shape, correct, with ``zero_grad()`` (``parameters()``: the values of the graph);
- ``QueueValue``: ``backward()`` visits breadth-first from the output (a queue and a ``seen`` set), not
  in reverse topological order: a value used twice at different depths runs its ``_backward`` before
  every consumer has added into its ``.grad``;
- ``RepeatValue``: its topological sort has no ``visited`` set: a value used twice is listed, and its
  ``_backward`` run, once per use;
- the functions take values of any such class and return the value ``backward()`` is run on:
  ``squares`` (correct: ``h + h * 3``, ``h = x * x``, a value used at two depths), ``backward_twice``
  (runs ``out.backward()`` itself, then returns ``out``: the check's pass is the second over the
  same graph), ``not_zeroed`` (a first loss's pass leaves ``x.grad`` non-zero, the second loss
  starts from it), ``zeroed`` (the same, ``x.grad`` set back to 0 between: correct).
Independent of the micrograd package.
"""


class Value:

    def __init__(self, data, _children=(), _op=''):
        self.data = data
        self.grad = 0.0
        self._backward = lambda: None
        self._prev = set(_children)
        self._op = _op

    def __add__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data + other.data, (self, other), '+')

        def _backward():
            self.grad += out.grad
            other.grad += out.grad
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

    def parameters(self):
        topo, visited = [], set()

        def build_topo(v):
            if v not in visited:
                visited.add(v)
                for child in v._prev:
                    build_topo(child)
                topo.append(v)
        build_topo(self)
        return topo

    def zero_grad(self):
        for v in self.parameters():
            v.grad = 0.0

    def backward(self):
        topo = self.parameters()
        self.grad = 1.0
        for v in reversed(topo):
            v._backward()


class QueueValue:

    def __init__(self, data, _children=(), _op=''):
        self.data = data
        self.grad = 0.0
        self._backward = lambda: None
        self._prev = tuple(_children)
        self._op = _op

    def __add__(self, other):
        other = other if isinstance(other, QueueValue) else QueueValue(other)
        out = QueueValue(self.data + other.data, (self, other), '+')

        def _backward():
            self.grad += out.grad
            other.grad += out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        other = other if isinstance(other, QueueValue) else QueueValue(other)
        out = QueueValue(self.data * other.data, (self, other), '*')

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def backward(self):
        self.grad = 1.0
        queue, seen = [self], {self}
        while queue:  # the bug: breadth-first, not reverse topological
            v = queue.pop(0)
            v._backward()
            for child in v._prev:
                if child not in seen:
                    seen.add(child)
                    queue.append(child)


class RepeatValue:

    def __init__(self, data, _children=(), _op=''):
        self.data = data
        self.grad = 0.0
        self._backward = lambda: None
        self._prev = tuple(_children)
        self._op = _op

    def __add__(self, other):
        other = other if isinstance(other, RepeatValue) else RepeatValue(other)
        out = RepeatValue(self.data + other.data, (self, other), '+')

        def _backward():
            self.grad += out.grad
            other.grad += out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        other = other if isinstance(other, RepeatValue) else RepeatValue(other)
        out = RepeatValue(self.data * other.data, (self, other), '*')

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def backward(self):
        topo = []

        def build_topo(v):  # the bug: no visited set
            for child in v._prev:
                build_topo(child)
            topo.append(v)
        build_topo(self)
        self.grad = 1.0
        for v in reversed(topo):
            v._backward()


def squares(x):
    """``h + h * 3`` with ``h = x * x``: 4 x**2, gradient 8 x; ``h`` is used at two depths."""
    h = x * x
    return h + h * 3


def backward_twice(x):
    """The gradient taken, then the same output returned to be differentiated again."""
    out = x * x * 0.7
    out.backward()
    return out


def not_zeroed(x):
    """A first loss's pass, then a second loss over the same ``x`` without zeroing ``x.grad``."""
    first = x * 3
    first.backward()
    return x * x * 0.7


def zeroed(x):
    """As ``not_zeroed``, with ``x.grad`` set back to 0 between the passes."""
    first = x * 3
    first.backward()
    x.grad = 0.0
    return x * x * 0.7

"""Explaining a value class of numpy arrays element by element: selectors, exact attribution on random array
graphs, each zero and non-finite cause, and "unknown" (not a false cause) where the class's backward is not
its op's rule."""

import random

import numpy as np
import pytest

import adtrace
from adtrace.explain import render_explanations
from adtrace.explain.value_class import NoSuchLeaf
from learner_arrays import MeanTensor, NoTransposeTensor, Tensor
from value_classes import ArrayValue


class Arr:
    """A learner's tensor class with ``log``, ``/``, ``**k`` (``sqrt`` as ``**0.5``), ``relu`` as
    ``np.maximum``; ``BuggyArr``'s ``+`` assigns ``.grad`` (the classic bug)."""

    def __init__(self, data, _children=(), _op=''):
        self.data = np.asarray(data, dtype=float)
        self.grad = np.zeros_like(self.data)
        self._backward = lambda: None
        self._prev = tuple(_children)
        self._op = _op

    def __add__(self, other):
        out = type(self)(self.data + other.data, (self, other), '+')

        def _backward():
            self.grad = self.grad + out.grad
            other.grad = other.grad + out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        out = type(self)(self.data * other.data, (self, other), '*')

        def _backward():
            self.grad = self.grad + other.data * out.grad
            other.grad = other.grad + self.data * out.grad
        out._backward = _backward
        return out

    def __truediv__(self, other):
        with np.errstate(all="ignore"):
            out = type(self)(self.data / other.data, (self, other), '/')

        def _backward():
            with np.errstate(all="ignore"):
                self.grad = self.grad + out.grad / other.data
                other.grad = other.grad - self.data / other.data ** 2 * out.grad
        out._backward = _backward
        return out

    def __pow__(self, k):
        out = type(self)(self.data ** k, (self,), f'**{k}')

        def _backward():
            with np.errstate(all="ignore"):
                self.grad = self.grad + k * self.data ** (k - 1) * out.grad
        out._backward = _backward
        return out

    def log(self):
        with np.errstate(all="ignore"):
            out = type(self)(np.log(self.data), (self,), 'log')

        def _backward():
            with np.errstate(all="ignore"):
                self.grad = self.grad + out.grad / self.data
        out._backward = _backward
        return out

    def relu(self):
        out = type(self)(np.maximum(self.data, 0), (self,), 'ReLU')

        def _backward():
            self.grad = self.grad + (self.data > 0) * out.grad
        out._backward = _backward
        return out

    def sum(self):
        out = type(self)(self.data.sum(), (self,), 'sum')

        def _backward():
            self.grad = self.grad + np.ones_like(self.data) * out.grad
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
        self.grad = np.ones_like(self.data)
        for v in reversed(topo):
            v._backward()


class BuggyArr(Arr):

    def __add__(self, other):
        out = BuggyArr(self.data + other.data, (self, other), '+')

        def _backward():
            self.grad = out.grad  # the bug: self.grad += out.grad
            other.grad = other.grad + out.grad
        out._backward = _backward
        return out


def explained(f, *args, engine=Arr, wrt=None):
    return {e.selector: e for e in adtrace.explain(f, *args, engine=engine, wrt=wrt)}


def reasons(explanation):
    return [c.reason for c in explanation.causes]


def layer(w, x):
    return ((w @ x).relu() * x).sum()


W, X = np.array([[1.0, -2.0], [3.0, 0.5]]), np.array([[1.0], [2.0]])  # w @ x = [-3, 4]: unit 0 is off


# -------------------- elements and where a gradient came from --------------------


def test_elements_are_selected_and_explained_by_default():
    found = explained(layer, W, X, engine=Tensor)
    assert {"w[0, 0]", "w[0, 1]", "w[1, 0]", "w[1, 1]"} & set(found)
    assert found["w[1, 1]"].gradient == 4.0 and found["w[1, 1]"].verdict == "contributions"
    assert found["w[1, 1]"].exact is True and found["w[1, 1]"].attribution[0].share == 4.0
    picked = explained(layer, W, X, engine=Tensor, wrt=["x[1, 0]", "w[0]"])
    assert list(picked) == ["x[1, 0]", "w[0, 0]", "w[0, 1]"]
    assert picked["x[1, 0]"].gradient == 5.0 and len(picked["x[1, 0]"].contributions) == 2  # two writes
    with pytest.raises(NoSuchLeaf, match="shape"):
        adtrace.explain(layer, W, X, engine=Tensor, wrt=["w[2, 0]"])
    with pytest.raises(NoSuchLeaf, match="names no leaf"):
        adtrace.explain(layer, W, X, engine=Tensor, wrt=["z[0]"])


def named_layer(w, x):
    h = (w @ x).relu()
    return (h * x).sum()


def test_a_cause_assigned_to_a_variable_is_named_so():
    found = adtrace.explain(named_layer, W, X, engine=Tensor, wrt=["w[0, 0]"])
    (cause,) = found[0].causes
    assert (cause.primitive, cause.reason, cause.name) == ("ReLU", "relu-off", "h")
    assert f"h@{cause.line}" in render_explanations(found)
    assert cause.line.endswith(f"test_value_arrays.py:{named_layer.__code__.co_firstlineno + 1}")


def test_a_class_accumulating_in_place():
    with adtrace.record(engine=ArrayValue, capture="full", sites=True) as rec:
        a = ArrayValue(np.array([1.0, -2.0]))
        (a * a).backward()
    found = {e.selector: e for e in rec.explain(wrt=["v0_leaf"])}
    assert [found[s].gradient for s in ("v0_leaf[0]", "v0_leaf[1]")] == [2.0, -4.0]
    assert all(e.exact for e in found.values())


def _random_graph(rng, shape):
    """A random program of Tensor ops on two arrays (broadcasting a row, @ with a square, relu, tanh)."""
    ops = [lambda a, b, c: a + b, lambda a, b, c: a * b, lambda a, b, c: a * c, lambda a, b, c: (a @ b).tanh(),
           lambda a, b, c: a.relu() + c, lambda a, b, c: a.tanh() * a]
    picks = [rng.randrange(len(ops)) for _ in range(rng.randint(2, 6))]

    def f(a, b, c):
        values = [a, b]
        for i in picks:
            values.append(ops[i](values[-1], values[-2], c))
        return values[-1].sum()
    return f


def test_attribution_adds_up_exactly_on_random_array_graphs():
    rng, nprng = random.Random(27), np.random.default_rng(27)
    for _ in range(20):
        f = _random_graph(rng, (3, 3))
        args = [nprng.normal(size=(3, 3)), nprng.normal(size=(3, 3)), nprng.normal(size=(1, 3))]
        leaves = [Tensor(a) for a in args]
        f(*leaves).backward()
        for e in adtrace.explain(f, *args, engine=Tensor, wrt=["a", "b", "c"]):
            name, index = e.selector.split("[", 1)
            index = tuple(int(i) for i in index.rstrip("]").split(","))
            truth = np.broadcast_to(leaves["abc".index(name)].grad, args["abc".index(name)].shape)[index]
            assert e.gradient == truth  # the recorded .grad, bit for bit
            total = None
            for c in e.contributions:  # added in the recorded order
                total = c.value if total is None else total + c.value
            assert (total if total is not None else 0.0) == e.gradient and e.exact in (True, None)
            if e.contributions:
                assert e.exact is True and e.rounding is not None
            if e.paths:  # each path's product of the ops' derivatives: they sum to the gradient within rounding
                assert e.paths_sum()[1] is False
            if e.verdict == "zero":  # a true cause: moving the element does not move the output
                assert reasons(e) and set(reasons(e)) <= {"independent", "relu-off"}
                moved = [a.copy() for a in args]
                moved["abc".index(name)][index] += 1e-6
                assert f(*map(Tensor, moved)).data == f(*map(Tensor, args)).data


# -------------------- why zero --------------------


def test_relu_written_with_numpy_cuts_the_off_unit():
    found = explained(layer, W, X, engine=Tensor, wrt=["w[0]"])
    for e in found.values():
        assert (e.verdict, reasons(e)) == ("zero", ["relu-off"])
        cause = e.causes[0]
        assert cause.primitive == "ReLU" and cause.values["input[0]"] == -3.0
        assert cause.line.endswith(f"test_value_arrays.py:{layer.__code__.co_firstlineno + 1}")
    on = explained(lambda w, x: ((w @ x).relu() * x).sum(), -W, X, engine=Tensor, wrt=["w[0, 0]"])["w[0, 0]"]
    assert on.verdict == "contributions"  # the unit on: no cut


def test_a_zero_factor_at_one_element_only():
    found = explained(lambda a, b: (a * b).sum(), np.array([2.0, 3.0]), np.array([0.0, 5.0]), wrt=["a"])
    assert reasons(found["a[0]"]) == ["zero-derivative"] and found["a[0]"].causes[0].values["input[1]"] == 0.0
    assert found["a[1]"].gradient == 5.0 and not found["a[1]"].causes


def test_an_input_not_used_is_independent():
    e = explained(lambda a, b: (a * a).sum(), np.array([1.0, 2.0]), np.array([3.0, 4.0]), wrt=["b[1]"])["b[1]"]
    assert (e.verdict, reasons(e)) == ("zero", ["independent"])


def test_contributions_that_cancel():
    e = explained(lambda a, b, c: (a * b).sum() + (a * c).sum(), np.array([1.0, 2.0]), np.array([1.0, 3.0]),
                  np.array([-1.0, 3.0]), wrt=["a[0]"])["a[0]"]
    assert (e.verdict, reasons(e)) == ("zero", ["cancellation"])
    assert sorted(c.value for c in e.contributions) == [-1.0, 1.0]


def test_the_assignment_bug_is_grad_replaced():
    def f(a, b):
        return (a + b).sum() + (a * b).sum()  # a.grad = 1 + b, but + assigns after * added b

    e = explained(f, np.array([1.0, 2.0]), np.array([0.0, 3.0]), engine=BuggyArr, wrt=["a[1]"])["a[1]"]
    assert "grad-replaced" in reasons(e)
    assert e.gradient == 1.0 and "the lines sum to 4, the recorded gradient is 1" in render_explanations([e])
    right = explained(f, np.array([1.0, 2.0]), np.array([0.0, 3.0]), wrt=["a[1]"])["a[1]"]
    assert "grad-replaced" not in reasons(right) and right.gradient == 4.0


def test_a_backward_that_is_not_its_ops_rule_is_unknown_not_a_false_cause():
    # MeanTensor's mean has no rule here: the zero of x[0] (x * x at 0) passes through it
    e = explained(lambda x: (x * x).mean(), np.array([0.0, 1.0]), engine=MeanTensor, wrt=["x[0]"])["x[0]"]
    assert e.gradient == 0.0 and reasons(e) == ["unknown"]
    # NoTransposeTensor's @ writes out.grad @ x: 0 at w[0, 1] where the derivative is 3 (not @'s rule)
    x = np.array([[1.0, -1.0], [2.0, 1.0]])
    e = explained(lambda w, x: (w @ x).sum(), np.ones((2, 2)), x, engine=NoTransposeTensor, wrt=["w[0, 1]"])["w[0, 1]"]
    assert e.gradient == 0.0 and reasons(e) == ["unknown"]
    right = explained(lambda w, x: (w @ x).sum(), np.ones((2, 2)), x, engine=Tensor, wrt=["w[0, 1]"])["w[0, 1]"]
    assert right.gradient == 3.0
    # the path table shows @'s derivative (2 through out[0], 1 through out[1]), not what the wrong rule wrote
    assert sorted(p.value for p in e.paths) == [1.0, 2.0] and e.paths[0].nodes[0] == "w[0, 1]"
    assert e.to_json()["paths_differ"] is True and right.to_json()["paths_differ"] is False


def test_a_tanh_saturated_through_a_matmul():
    x = np.array([[30.0, 0.0], [30.0, 1.0]])  # tanh(60) is exactly 1.0
    e = explained(lambda w, x: (w @ x).tanh().sum(), np.ones((2, 2)), x, engine=Tensor, wrt=["w[0, 0]"])["w[0, 0]"]
    # w[0, 0] moves out[0, 0] (tanh at 60: saturated) and out[0, 1] only by the factor x[0, 1] = 0
    assert e.gradient == 0.0 and sorted(reasons(e)) == ["tanh-saturated", "zero-derivative"]
    assert {c.primitive for c in e.causes if c.reason == "zero-derivative"} == {"@"}


# -------------------- why NaN or Inf --------------------


def test_log_at_zero():
    e = explained(lambda x: x.log().sum(), np.array([0.0, 2.0]), wrt=["x"])
    assert (e["x[0]"].verdict, reasons(e["x[0]"])[0]) == ("nonfinite", "log-of-zero")
    cause, forward = e["x[0]"].causes
    assert cause.node.endswith("_log") and cause.values["input[0]"] == 0.0 and cause.line and not cause.forward
    assert cause.values["outgrad"] == 1.0 and cause.values["ingrad"] == np.inf
    assert forward.forward and forward.node == cause.node
    assert e["x[1]"].gradient == 0.5 and e["x[1]"].verdict == "contributions"


def test_division_by_zero_and_sqrt_at_zero():
    e = explained(lambda a, b: (a / b).sum(), np.array([1.0, 2.0]), np.array([0.0, 4.0]), wrt=["a[0]"])["a[0]"]
    assert "division-by-zero" in reasons(e) and e.causes[0].values["input[1]"] == 0.0
    s = explained(lambda x: (x ** 0.5).sum(), np.array([0.0, 4.0]), wrt=["x[0]"])["x[0]"]
    assert s.verdict == "nonfinite" and reasons(s)[0] == "sqrt-at-zero"


def test_a_nan_of_log_at_zero_behind_a_relu_off_and_the_first_infinity():
    e = explained(lambda x, y: ((x.log()).relu() * y).sum() + (y / x).sum(), np.array([0.0, 1.0]),
                  np.array([1.0, 1.0]), wrt=["x[0]"])["x[0]"]
    assert e.verdict == "nonfinite" and np.isnan(e.gradient)
    # first non-finite write: y / x at 0; the NaN: log's backward at 0 from relu's .grad 0 there; log(0) forward
    assert reasons(e) == ["division-by-zero", "log-of-zero", "log-of-zero"]
    assert e.causes[1].values["outgrad"] == 0.0 and np.isnan(e.causes[1].values["ingrad"]) and e.causes[2].forward


# -------------------- scale --------------------


def test_scale_per_line_and_per_leaf():
    found = adtrace.explain(layer, W, X, engine=Tensor)
    assert [s.where for s in found.leaves] and {"w", "x"} >= {s.where for s in found.leaves}
    assert found.lines and found.lines[0].largest == 2.0  # the outgrads on layer's line: largest 2


def test_an_element_whose_data_left_the_engine_is_left_trace():
    def g(a, b):
        c = Arr(a.data * 2.0)  # a new value made of a's .data
        a * b  # read, not used: a's paths end at this product
        return (c * b).sum()

    e = explained(g, np.array([1.0, 2.0]), np.array([3.0, 4.0]), wrt=["a[1]"])["a[1]"]
    assert e.gradient == 0.0 and reasons(e) == ["left-trace"]  # the output moves with a[1]

    def h(a, b):
        a * b
        return (b * b).sum()

    e = explained(h, np.array([1.0, 2.0]), np.array([3.0, 4.0]), wrt=["a[1]"])["a[1]"]
    assert reasons(e) == ["independent"]  # moved, the output stays


def test_past_its_budget_of_rule_calls_a_node_is_unknown(monkeypatch):
    from adtrace.explain import value_arrays

    monkeypatch.setattr(value_arrays, "MAX_RULE_CALLS", 1)
    e = explained(layer, W, X, engine=Tensor, wrt=["w[0, 0]"])["w[0, 0]"]
    assert e.gradient == 0.0 and reasons(e) == ["unknown"]  # no Jacobian made: not a cut claimed


def test_without_the_ops_structure_a_zero_entry_is_not_read_as_no_edge(monkeypatch):
    from adtrace.explain import value_arrays

    monkeypatch.setattr(value_arrays.Jacobians, "structure", lambda self, label, position: None)
    e = explained(layer, W, X, engine=Tensor, wrt=["w[0, 0]"])["w[0, 0]"]
    assert reasons(e) == ["unknown"]  # not "independent": relu's 0 could be a cut or no connection


class OpArr(Arr):
    """A class keeping its op in ``op``, not ``_op``: adtrace does not know its ops."""

    def __init__(self, data, _children=(), _op=''):
        super().__init__(data, _children)
        del self._op
        self.op = _op


def divided(x, y):
    return (x / y).sum()


def test_one_over_zero_of_an_op_not_known_is_no_overflow():
    """1/0 in a class whose op adtrace cannot read: the cause is not established (no false ``overflow``)."""
    found = explained(divided, np.array([1.0, 2.0]), np.array([0.0, 4.0]), engine=OpArr, wrt=["x[0]", "y[0]"])
    for selector in ("x[0]", "y[0]"):
        assert found[selector].verdict == "nonfinite"
        assert found[selector].causes and "overflow" not in reasons(found[selector])


def test_a_non_finite_derivative_makes_no_path_to_the_other_elements():
    """A unit cotangent's 0 * inf is no path: an elementwise op's element reads its own element only."""
    s = explained(lambda x: (x ** 0.5).sum(), np.array([0.0, 2.0, 3.0]), wrt=["x[0]"])["x[0]"]
    assert [p.nodes[1].endswith("[0]") for p in s.paths] == [True] and s.paths[0].value == np.inf
    g = explained(lambda x: x.log().sum(), np.array([0.0, 1.0, 2.0]), wrt=["x[0]"])["x[0]"]
    assert len(g.paths) == 1 and g.paths[0].nodes[1].endswith("[0]")
    d = explained(lambda a, b: (a / b).sum(), np.array([1.0, 2.0]), np.array([0.0, 4.0]), wrt=["a[0]"])["a[0]"]
    assert len(d.paths) == 1 and d.paths[0].nodes[1].endswith("[0]")
    # @: w[0, 0] moves out[0, :] only; x's inf at [0, 1] makes no path through out[1, :]
    m = explained(lambda w, x: (w @ x).sum(), np.ones((2, 2)), np.array([[1.0, np.inf], [1.0, 1.0]]),
                  engine=Tensor, wrt=["w[0, 0]"])["w[0, 0]"]
    assert sorted(p.nodes[1].split("[")[1] for p in m.paths) == ["0]", "1]"]  # (flat: out[0, 0], out[0, 1])


def test_a_dead_unit_of_a_wide_layer_is_relu_off():
    """32 x 64 through a 64 x 64 layer: the add's Jacobian is its diagonal (no 2048 x 2048 matrix)."""
    rng = np.random.default_rng(0)
    w1, b1, w2, x = rng.normal(size=(64, 64)), rng.normal(size=(64,)), rng.normal(size=(64, 1)), rng.normal(
        size=(32, 64))
    b1[3] = -5000.0

    def net(w1, b1, w2, x):
        return ((x @ w1 + b1).relu() @ w2).sum()

    e = explained(net, w1, b1, w2, x, engine=Tensor, wrt=["b1[3]"])["b1[3]"]
    assert e.gradient == 0.0 and set(reasons(e)) == {"relu-off"}


class WrongReluArr(Arr):
    """relu's _backward passes the gradient where the input is negative (the wrong mask)."""

    def relu(self):
        out = WrongReluArr(np.maximum(self.data, 0), (self,), 'ReLU')

        def _backward():
            self.grad = self.grad + (self.data < 0) * out.grad
        out._backward = _backward
        return out


class CubeArr(Arr):
    """A ``cube`` op adtrace has no rule for (its _backward right)."""

    def cube(self):
        out = CubeArr(self.data ** 3, (self,), 'cube')

        def _backward():
            self.grad = self.grad + 3 * self.data ** 2 * out.grad
        out._backward = _backward
        return out


def test_unknown_names_the_node_whose_backward_is_not_its_rule():
    c = explained(lambda x: (x.cube() + x).relu().sum(), np.array([0.0, 1.0]), engine=CubeArr, wrt=["x[0]"])["x[0]"]
    assert [(c.reason, c.primitive) for c in c.causes] == [("unknown", "cube")] and "no rule" in c.causes[0].detail
    e = explained(lambda x: x.relu().sum(), np.array([2.0, -1.0]), engine=WrongReluArr, wrt=["x[0]"])["x[0]"]
    (cause,) = e.causes
    assert (cause.reason, cause.primitive) == ("unknown", "ReLU") and "not its op's rule" in cause.detail
    mean = explained(lambda x: (x * x).mean(), np.array([0.0, 1.0]), engine=MeanTensor, wrt=["x[0]"])["x[0]"]
    assert [(c.reason, c.primitive) for c in mean.causes] == [("unknown", "*")]  # (its first node on the way)
    assert "could not read" in mean.causes[0].detail  # MeanTensor's writes are copies: what they added is not known


def test_a_node_too_large_to_follow_is_named_so(monkeypatch):
    from adtrace.explain import value_arrays

    monkeypatch.setattr(value_arrays, "MAX_ENTRIES", 3)  # w @ x's 4 x 4 Jacobian is past it
    e = explained(layer, W, X, engine=Tensor, wrt=["w[0, 0]"])["w[0, 0]"]
    assert [(c.reason, c.primitive) for c in e.causes] == [("unknown", "@")] and "too large to follow" in e.causes[
        0].detail


class PowDivArr(Arr):
    """``x / y`` written ``x * y**-1`` (as micrograd does)."""

    def __truediv__(self, other):
        return self * other ** -1


def test_a_non_finite_value_made_in_a_sibling_branch_is_named():
    e = explained(lambda x, y: (x / y).sum(), np.array([1.0, 2.0]), np.array([0.0, 4.0]), engine=PowDivArr,
                  wrt=["x[0]"])["x[0]"]
    assert reasons(e)[0] == "nonfinite-input" and e.causes[0].primitive == "*"
    (origin,) = [c for c in e.causes if c.forward]
    assert (origin.primitive, origin.reason, origin.values["input[0]"]) == ("**-1", "power-at-zero", 0.0)


def test_an_argument_not_finite_is_the_forward_origin():
    e = explained(lambda x: x.log().sum().log(), np.array([np.nan, 1.0]), wrt=["x[0]"])["x[0]"]
    (origin,) = [c for c in e.causes if c.forward]
    assert origin.reason == "nonfinite-input" and "the input x[0] was already nan" in origin.detail
    assert all("[]" not in c.detail for c in e.causes)  # (a number's element: no empty brackets)

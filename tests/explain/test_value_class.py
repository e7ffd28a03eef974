"""Explaining a value class's pass (micrograd, a learner's ``Value``): each reason on a minimal program,
a micrograd MLP with a dead ReLU unit, and attributions that add up exactly on random graphs."""

import random
from fractions import Fraction

import numpy as np
import pytest
from micrograd.engine import Value
from micrograd.nn import MLP

import adtrace
from adtrace.explain import render_explanations
from adtrace.explain.value_class import NoSuchLeaf
from adtrace.recording.events import NodeCreated
from learner_shapes import SHAPES
from value_classes import Value as CourseValue


class LogValue:
    """A learner's class with ``log`` (micrograd has none)."""

    def __init__(self, data, _children=(), _op=''):
        self.data, self.grad, self._backward, self._prev, self._op = data, 0.0, lambda: None, tuple(_children), _op

    def __mul__(self, other):
        out = LogValue(self.data * other.data, (self, other), '*')

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def log(self):
        with np.errstate(divide="ignore"):
            out = LogValue(np.log(self.data), (self,), 'log')

        def _backward():
            with np.errstate(divide="ignore"):
                self.grad += (1 / self.data) * out.grad
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


def explained(f, *args, engine="micrograd", wrt=None):
    found = adtrace.explain(f, *args, engine=engine, wrt=wrt)
    return {e.selector: e for e in found}


def reasons(explanation):
    return [c.reason for c in explanation.causes]


# -------------------- why zero --------------------


def neuron(w, x, b):
    return (w * x + b).relu()


def test_a_relu_at_or_below_zero_cuts_every_path():
    e = explained(neuron, 0.5, -2.0, 0.2, wrt=["w"])["w"]
    assert (e.verdict, e.gradient, reasons(e)) == ("zero", 0.0, ["relu-off"])
    cause = e.causes[0]
    assert cause.primitive == "ReLU" and cause.fraction == 1.0 and cause.values["input[0]"] == pytest.approx(-0.8)
    assert cause.line.endswith(f"test_value_class.py:{neuron.__code__.co_firstlineno + 1}")


def dead_unit(w, x, b):
    h = (w * x + b).relu()
    return h * 2.0


def test_a_cause_assigned_to_a_variable_is_named_so():
    found = adtrace.explain(dead_unit, 0.5, -2.0, 0.2, engine="micrograd", wrt=["w"])
    (cause,) = found[0].causes
    assert (cause.node, cause.primitive, cause.name) == ("v5_ReLU", "ReLU", "h")  # not v4_add (w * x + b)
    line = f"h@{cause.line}"
    assert line.endswith(f"test_value_class.py:{dead_unit.__code__.co_firstlineno + 1}")
    assert line in render_explanations(found)


def test_a_product_with_a_zero_factor():
    e = explained(lambda a, b: a * b + b, 3.0, 0.0, wrt=["a"])["a"]
    assert reasons(e) == ["zero-derivative"] and e.causes[0].values["input[1]"] == 0.0
    assert e.causes[0].primitive == "*" and e.causes[0].argnum == 0


def test_a_tanh_saturated_to_exactly_one():
    e = explained(lambda x: (x * 2.0).tanh(), 20.0, engine=CourseValue)["x"]
    assert e.verdict == "zero" and reasons(e) == ["tanh-saturated"] and e.causes[0].values["output"] == 1.0


def test_a_value_the_output_does_not_use():
    def f(a, b):
        a * 3.0  # computed, not used
        return b * 2.0

    e = explained(f, 1.0, 1.0, wrt=["a"])["a"]
    assert reasons(e) == ["independent"] and e.causes[0].primitive == "*" and e.causes[0].fraction == 1.0


def test_an_input_never_read_and_one_whose_data_left_the_engine():
    found = explained(lambda a, b, c: Value(c.data) * b, 1.0, 2.0, 3.0)
    assert reasons(found["a"]) == ["independent"] and found["a"].causes[0].primitive == "leaf"
    assert reasons(found["c"]) == ["left-trace"]  # moving c moves the output: its .data was read outside
    assert found["b"].verdict == "contributions" and found["b"].gradient == 3.0
    (cause,) = explained(lambda a, b: Value((a * 2.0).data) * b, 1.0, 2.0, wrt=["a"])["a"].causes
    assert (cause.reason, cause.primitive) == ("left-trace", "*")  # the product whose .data was read


def test_contributions_that_cancel():
    e = explained(lambda a: a - a, 1.5)["a"]
    assert e.verdict == "zero" and reasons(e) == ["cancellation"]
    assert sorted(c.value for c in e.contributions) == [-1.0, 1.0] and e.exact


# -------------------- why NaN or Inf --------------------


def test_x_to_the_minus_one_at_zero():
    with np.errstate(divide="ignore"):
        e = explained(lambda x: x ** -1, np.float64(0.0))["x"]
    assert e.verdict == "nonfinite" and e.gradient == -np.inf
    backward, forward = e.causes
    assert (backward.reason, backward.primitive, backward.forward) == ("power-at-zero", "**-1", False)
    assert backward.values["outgrad"] == 1 and backward.values["ingrad"] == -np.inf
    assert (forward.reason, forward.forward) == ("power-at-zero", True)


def test_zero_times_inf_names_the_infinite_factor_and_the_relu_that_made_nan():
    e = explained(lambda x, k: x.relu() * k, -1.0, np.inf, wrt=["x"])["x"]
    assert np.isnan(e.gradient)
    first, nan = e.causes
    assert (first.primitive, first.reason, first.values["input[1]"]) == ("*", "nonfinite-input", np.inf)
    assert (nan.primitive, nan.reason, nan.values["derivative"]) == ("ReLU", "zero-times-inf", 0.0)


def test_log_at_zero_in_a_learners_class():
    e = explained(lambda x, y: (x * y).log(), np.float64(0.0), np.float64(2.0), engine=LogValue, wrt=["y"])["y"]
    assert e.gradient == -np.inf or np.isnan(e.gradient)
    assert reasons(e)[0] == "log-of-zero" and e.causes[0].primitive == "log"


# -------------------- composite, shapes, exactness --------------------


def test_a_micrograd_mlp_with_a_dead_relu_unit():
    random.seed(1)
    with adtrace.record(engine="micrograd", capture="full", sites=True) as rec:
        model = MLP(2, [3, 1])
        dead = model.layers[0].neurons[1]
        dead.b.data = -100.0
        loss = model([Value(0.5), Value(-1.0)])
        loss.backward()
    params = model.parameters()
    labels = [e.label for e in rec.of_kind(NodeCreated) if not e.parents][:len(params)]
    zero = [label for label, p in zip(labels, params) if p.grad == 0]
    found = {e.selector: e for e in rec.explain(wrt=zero)}
    unit = [labels[params.index(p)] for p in dead.parameters()]
    assert set(unit) <= set(zero)
    relus = {e.causes[0].node for s, e in found.items() if s in unit}
    assert len(relus) == 1 and all(reasons(found[s]) == ["relu-off"] for s in unit)
    out_weight = labels[params.index(model.layers[1].neurons[0].w[1])]  # reads the dead unit's output, 0
    assert reasons(found[out_weight]) == ["zero-derivative"] and found[out_weight].causes[0].values["input[1]"] == 0
    assert all(e.exact for e in found.values() if e.contributions)


@pytest.mark.parametrize("cls", SHAPES, ids=lambda c: c.__name__)
def test_each_learner_shape_is_explained(cls):
    found = explained(lambda a, b, c: a * b + c, 2.0, 0.0, 1.5, engine=cls)
    assert found["a"].verdict == "zero" and reasons(found["a"]) == ["zero-derivative"]
    assert found["b"].gradient == 2.0 and found["b"].exact
    assert found["c"].gradient == 1.0


def test_attribution_adds_up_exactly_on_random_graphs():
    rng = random.Random(27)
    for _ in range(25):
        with adtrace.record(engine="micrograd", capture="full", sites=True) as rec:
            leaves = [Value(rng.uniform(-2, 2)) for _ in range(4)]
            values = list(leaves)
            for _ in range(rng.randint(3, 14)):
                a, b = rng.choice(values), rng.choice(values)
                op = rng.choice(["+", "*", "relu", "**2", "-"])
                values.append(a + b if op == "+" else a * b if op == "*" else a.relu() if op == "relu"
                              else a ** 2 if op == "**2" else a - b)
            out = values[-1] + sum(values[4:-1], Value(0.0)) * 0.5
            out.backward()
        labels = [e.label for e in rec.of_kind(NodeCreated) if not e.parents][:4]
        for leaf, label in zip(leaves, labels):
            (e,) = rec.explain(wrt=[label])
            assert e.gradient == leaf.grad  # the recorded .grad is the live one
            if e.contributions:
                assert e.exact  # added in the recorded order: bit for bit
                assert sum((s.exact for s in e.attribution), Fraction(0)) + e.rounding == Fraction(leaf.grad)


def test_a_selector_naming_no_leaf():
    with pytest.raises(NoSuchLeaf, match="names no leaf"):
        adtrace.explain(neuron, 0.5, -2.0, 0.2, engine="micrograd", wrt=["q"])
    with pytest.raises(NoSuchLeaf, match=r"has shape \(\)"):  # a number's element: said so, not "no leaf"
        adtrace.explain(neuron, 0.5, -2.0, 0.2, engine="micrograd", wrt=["x[0]"])


# -------------------- explain inside an open record() --------------------


def test_explain_inside_an_open_recording_records_nothing_into_it(monkeypatch):
    import autograd.numpy as anp
    from autograd import grad

    import adtrace.explain.jacobians as jacobians

    with adtrace.record(capture="full", sites=True, calls=True) as rec:
        grad(lambda x: anp.sum(anp.maximum(x, 0.0) * anp.sin(x)))(np.array([-1.0, 2.0]))
    original = jacobians._jacobian

    def traced_again(*args, **kwargs):  # stands for a re-run autograd traces (a VJP of boxed arguments)
        grad(anp.sin)(1.0)
        return original(*args, **kwargs)

    monkeypatch.setattr(jacobians, "_jacobian", traced_again)
    jacobians._MADE.pop(rec, None)
    with adtrace.record(capture="full") as outer, adtrace.record(engine="micrograd") as outer_values:
        rec.explain()
        adtrace.explain(lambda x: anp.sum(anp.maximum(x, 0.0)), np.array([-1.0, 2.0]))
        adtrace.explain(neuron, 0.5, -2.0, 0.2, engine="micrograd")
        grad(anp.cos)(1.0)  # the user's own call, after: recorded
    assert [e.primitive for e in outer.of_kind(NodeCreated)] == ["cos"] and outer_values.events == []


def test_by_default_only_the_leaves_the_output_was_computed_from():
    with adtrace.record(engine="micrograd", capture="full") as rec:
        w = Value(2.0)
        (w * 3.0).backward()  # pass 1: its constant 3 is a leaf of the recording, not of pass 2
        w.grad = 0.0
        (w * w).backward()
    assert [e.selector for e in rec.explain()] == ["v0_leaf"]
    (other,) = rec.explain(wrt=["v1_leaf"])  # named, any leaf of the recording
    assert reasons(other) == ["independent"]


def test_a_write_that_replaced_the_grad_does_not_add_up():
    from learner_shapes import BUGGY, SlotsValue

    def f(a):
        return (a + 1.0) * (a + 2.0)  # 5 at 1: each + node's backward writes into a.grad

    e = explained(f, 1.0, engine=BUGGY[SlotsValue])["a"]  # __add__'s backward assigns a.grad
    assert sorted(c.value for c in e.contributions) == [2.0, 3.0] and e.gradient in (2.0, 3.0)
    assert e.exact is False  # 2 + 3 is not the recorded gradient: the first write was thrown away
    assert reasons(e) == ["grad-replaced"] and e.causes[0].primitive == "+" and e.causes[0].values["previous"] != 0
    text = render_explanations([e])
    assert "do NOT add up to the recorded gradient" in text and "rounding" not in text
    right = explained(f, 1.0, engine=SlotsValue)["a"]
    assert (right.gradient, right.exact, right.causes) == (5.0, True, ())


def test_a_write_that_replaced_an_intermediate_grad_is_named_and_the_paths_say_they_disagree():
    from learner_shapes import BUGGY, ParentsValue, SlotsValue

    def g(x):
        a = x * x
        b = a + x
        c = a + b  # c's backward assigns a.grad = 42, then b's assigns it again: 42 lost at a, not at x
        return c * c

    for shape in (SlotsValue, ParentsValue):
        e = explained(g, 3.0, engine=BUGGY[shape])["x"]
        assert e.gradient == 294 and e.exact  # x's own writes add up: the loss was upstream
        assert reasons(e) == ["grad-replaced"] and "v1_mul" in e.causes[0].detail
        assert e.causes[0].primitive == "+" and e.causes[0].values["previous"] == 42
        assert sum(p.value for p in e.paths) == 546  # the derivative, which the table must not pass off as 294
        assert "paths' products sum to 546, not the recorded gradient 294" in render_explanations([e])
        right = explained(g, 3.0, engine=shape)["x"]
        assert (right.gradient, right.causes) == (546, ()) and "not the recorded" not in render_explanations([right])

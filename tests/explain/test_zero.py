"""Why a gradient is zero: each reason on a minimal program, and a dead unit inside an MLP."""

import autograd.numpy as np
import numpy as onp
import pytest
from autograd import grad

import adtrace

from adtrace.explain import explain
from adtrace.explain.explainer import explain_recording


def only(f, x, selector, argnum=0, *more):
    (explanation,) = explain(f, x, *more, wrt=[selector], argnum=argnum)
    assert explanation.verdict == "zero" and explanation.gradient == 0
    return explanation.causes


def reasons(causes):
    return sorted((c.primitive, c.reason) for c in causes)


def test_relu_off_names_the_maximum_its_line_and_the_values():
    def f(x):
        h = np.maximum(x, 0.0)
        return np.sum(h * h)
    (cause,) = only(f, np.array([1.5, -2.0, 3.0]), "x[1]")
    assert (cause.primitive, cause.reason, cause.argnum) == ("maximum", "relu-off", 0)
    assert cause.line.endswith(f":{f.__code__.co_firstlineno + 1}")
    assert cause.values == {"output": 0.0, "input": -2.0}
    assert cause.fraction == 1.0


def test_where_unselected_branch():
    (cause,) = only(lambda x: np.sum(np.where(x > 0, x * 3.0, 1.0)), np.array([1.0, -1.0]), "x[1]")
    assert reasons([cause]) == [("where", "where-unselected-branch")]


def test_clip_saturated():
    (cause,) = only(lambda x: np.sum(np.clip(x, -1.0, 1.0) ** 2), np.array([0.5, 4.0]), "x[1]")
    assert (cause.primitive, cause.reason) == ("clip", "clip-saturated")
    assert cause.values == {"output": 1.0, "input": 4.0}


@pytest.mark.parametrize("f, primitive", [
    (lambda x: np.sum(np.abs(x)), "absolute"),  # abs' is sign: 0 at 0 only
    (lambda x: np.sum(x * np.array([1.0, 0.0])), "multiply"),
])
def test_zero_derivative(f, primitive):
    (cause,) = only(f, np.array([2.0, 0.0]), "x[1]")
    assert (cause.primitive, cause.reason) == (primitive, "zero-derivative")


def test_abs_is_no_cause_away_from_zero():
    (explanation,) = explain(lambda x: np.sum(np.abs(x)), np.array([-2.0, 0.0]), wrt=["x[0]"])
    assert explanation.verdict == "contributions" and explanation.gradient == -1.0


def test_an_index_not_taken_is_independent():
    (cause,) = only(lambda x: x[0] * 2.0, np.array([1.0, 2.0]), "x[1]")
    assert (cause.primitive, cause.reason) == ("ArrayBox.__getitem__", "independent")


def test_an_output_that_does_not_depend_on_the_input_is_independent():
    (cause,) = only(lambda x: np.float64(3.0), 1.5, "x")
    assert (cause.node, cause.reason) == ("v0_root", "independent")


def test_a_value_that_left_the_trace_is_named_where_the_graph_loses_it():
    def f(x):
        y = np.sin(x)
        return x[0] * 1.0 + onp.sum(y._value)  # y's value leaves autograd's trace
    (cause,) = only(f, np.array([1.0, 2.0]), "x[1]")
    assert (cause.primitive, cause.reason) == ("sin", "left-trace")
    assert cause.line.endswith(f":{f.__code__.co_firstlineno + 1}")


def test_a_plain_value_of_the_input_itself_is_left_trace_by_probing():
    (cause,) = only(lambda x: 3.0 * onp.float64(x._value), 1.5, "x")
    assert (cause.node, cause.reason) == ("v0_root", "left-trace")


def test_contributions_that_cancel_are_no_cut():
    (cause,) = only(lambda x: x * 2.0 - x * 2.0, 1.5, "x")
    assert cause.reason == "cancellation"


def test_the_fraction_of_paths_a_cut_cuts():
    def f(x):
        return np.sum(np.maximum(x, 0.0) * 3.0) + np.sum(np.tanh(x) * 0.0)
    causes = only(f, np.array([-1.0, 2.0]), "x[0]")
    assert reasons(causes) == [("maximum", "relu-off"), ("multiply", "zero-derivative")]
    assert sorted(c.fraction for c in causes) == [0.5, 0.5]


def mlp(params, x):
    h = np.maximum(np.dot(params["W1"], x) + params["b1"], 0.0)
    return np.sum(np.dot(params["W2"], h))


@pytest.mark.parametrize("dense", [1 << 20, 1])  # every Jacobian kept as rows of its entries not 0, too
def test_an_mlp_with_a_dead_unit(dense, monkeypatch):
    from adtrace.explain import jacobians
    monkeypatch.setattr(jacobians, "DENSE", dense)
    params = {"W1": np.array([[1.0, 2.0], [-3.0, -1.0], [0.5, 0.5]]), "b1": np.zeros(3),
              "W2": np.array([[1.0, -1.0, 2.0]])}
    x = np.array([1.0, 1.0])  # unit 1: -3 - 1 < 0, dead
    found = explain(mlp, params, x, wrt=["params['W1'][1, 0]", "params['b1'][1]", "params['W1'][0, 1]"])
    dead_weight, dead_bias, alive = found
    for e in (dead_weight, dead_bias):
        assert e.verdict == "zero"
        (cause,) = e.causes
        assert (cause.primitive, cause.reason, cause.fraction) == ("maximum", "relu-off", 1.0)
        assert cause.values["input"] == -4.0
        assert cause.line.endswith(f":{mlp.__code__.co_firstlineno + 1}")
    assert alive.verdict == "contributions" and alive.gradient == 1.0


def recorded_without_calls(f, x):
    with adtrace.record(capture="full", sites=True) as rec:
        grad(f)(x)
    return rec


def test_without_calls_an_elementwise_cut_is_read_from_the_recorded_vjp():
    rec = recorded_without_calls(lambda x: np.sum(np.maximum(x, 0.0) * 2.0), np.array([1.0, -1.0]))
    (e,) = explain_recording(rec, ["x[1]"])
    assert [(c.primitive, c.reason) for c in e.causes] == [("maximum", "relu-off")]


def test_without_calls_a_node_it_cannot_follow_is_named_not_blamed():
    params = {"W1": np.array([[1.0, 2.0], [-3.0, -1.0]]), "b1": np.zeros(2), "W2": np.array([[1.0, -1.0]])}
    rec = recorded_without_calls(lambda p: mlp(p, np.array([1.0, 1.0])), params)
    (e,) = explain_recording(rec, ["params['W1'][1, 0]"])
    assert [(c.primitive, c.reason) for c in e.causes] == [("dot", "unknown")]


def test_a_factor_that_is_zero_in_a_dot_is_a_zero_derivative_not_independence():
    inputs = np.array([[1.0, 0.0], [2.0, 0.0]])  # feature 1 is 0 in every row: W[1, :] multiplies only zeros
    (cause,) = only(lambda W: np.sum(np.tanh(np.dot(inputs, W))), np.ones((2, 3)), "W[1, 2]")
    assert (cause.primitive, cause.reason) == ("dot", "zero-derivative")


def test_an_unused_value_and_a_zero_factor_each_get_their_share():
    inputs = np.array([[1.0, 0.0]])

    def f(W):
        np.dot(np.array([[0.0, 1.0]]), W) * 2.0  # W[1] reaches this, which nothing uses
        return np.sum(np.dot(inputs, W))
    causes = only(f, np.ones((2, 2)), "W[1, 0]")
    assert reasons(causes) == [("dot", "zero-derivative"), ("multiply", "left-trace")]
    assert sorted(c.fraction for c in causes) == [0.5, 0.5]


def test_layers_taken_from_nested_tuples_are_followed_without_calls():
    layers = ((np.array([[1.0, -2.0]]), np.array([0.0])), (np.array([[3.0]]), np.array([0.0])))

    def f(params):
        W1, W2 = params[0][0], params[1][0]  # the layer's tuple gets one sparse cotangent: its outgrad
        return np.sum(np.dot(W2, np.maximum(np.dot(W1, np.array([1.0, 1.0])), 0.0)))
    rec = recorded_without_calls(f, layers)
    (e,) = explain_recording(rec, ["x[0][0][0, 1]"])
    assert [(c.primitive, c.reason) for c in e.causes] == [("maximum", "relu-off")]


def test_a_product_with_zero_shows_the_other_factor():
    def f(params):
        a = np.log(params["a"])  # log(1) = 0 at element 1
        return np.sum(a * params["b"])
    (e,) = explain(f, {"a": np.array([2.0, 1.0]), "b": np.array([2.0, 3.0])}, wrt=["params['b'][1]"])
    (cause,) = e.causes
    assert (cause.primitive, cause.reason, cause.argnum) == ("multiply", "zero-derivative", 1)
    assert cause.values == {"output": 0.0, "input": 3.0, "input[0]": 0.0}  # b[1] = 3 met a[1] = log(1) = 0


def test_a_recording_without_calls_does_not_blame_a_later_node_for_the_first_cut():
    # h**2 has derivative 0 where the relu set h to 0, but the relu cut first. A plain record() reads the
    # maximum's derivative from its values; a where's (its condition not kept, the gradient reaching it 0
    # there) it cannot: it says so, and claims no cut of 100%
    def f(x):
        h = np.maximum(x, 0.0)
        return np.sum(h ** 2)

    def g(x):
        h = np.where(x > 0, x, 0.0)
        return np.sum(h ** 2)
    x = np.array([1.0, -2.0])
    with adtrace.record() as rec:
        grad(f)(x)
    ((relu,),) = [e.causes for e in rec.explain(wrt=["x[1]"])]
    assert (relu.primitive, relu.reason, relu.fraction) == ("maximum", "relu-off", 1.0)
    with adtrace.record() as rec:
        grad(g)(x)
    (plain,) = rec.explain(wrt=["x[1]"])
    assert plain.causes[0].primitive == "where" and plain.causes[0].reason == "unknown"
    assert all(c.fraction is None for c in plain.causes) and len(plain.causes) == 2
    (full,) = only(g, x, "x[1]")
    assert (full.primitive, full.reason, full.fraction) == ("where", "where-unselected-branch", 1.0)


def test_relu_off_only_against_the_constant_0_else_saturated_or_not_selected():
    def capped(x):
        return np.sum(np.minimum(x, 1.0))

    def pairmax(x):
        return np.maximum(x[0], x[1]) * x[2]

    def floor_half(x):
        return np.sum(np.maximum(np.sin(x), 0.5))
    assert reasons(only(capped, np.array([2.0, 0.5]), "x[0]")) == [("minimum", "saturated")]
    assert reasons(only(pairmax, np.array([1.0, 3.0, 2.0]), "x[0]")) == [("maximum", "not-selected")]
    assert reasons(only(floor_half, np.array([0.1, 2.0]), "x[0]")) == [("maximum", "saturated")]
    assert reasons(only(lambda x: np.sum(np.maximum(0.0, x)), np.array([-1.0, 2.0]), "x[0]")) == [
        ("maximum", "relu-off")]


def test_an_element_not_the_maximum_of_np_max_is_not_selected():
    for selector in ("x[0]", "x[2]"):
        (cause,) = only(lambda x: np.max(x), np.array([1.0, 3.0, 2.0]), selector)
        assert (cause.primitive, cause.reason) == ("max", "not-selected")
        assert "not the maximum" in cause.detail


def relu_of_a_product_and_a_sine_made_nothing(x):
    z = x * 2.0
    h = np.maximum(0.0, z - 3.0)  # off at x[0] and x[2]
    u = np.sin(x[0]) * 0.0  # reads x[0] only
    return np.sum(h) + u


def test_without_calls_an_element_gets_its_own_causes_not_another_elements():
    x = np.array([0.5, 2.5, 1.0])
    rec = recorded_without_calls(relu_of_a_product_and_a_sine_made_nothing, x)
    first, third = explain_recording(rec, ["x[0]", "x[2]"])
    with_calls = explain(relu_of_a_product_and_a_sine_made_nothing, x, wrt=["x[2]"])[0]
    assert [(c.node, c.reason, c.fraction) for c in third.causes] == \
        [(c.node, c.reason, c.fraction) for c in with_calls.causes] == [("v3_maximum", "relu-off", 1.0)]
    sine = f":{relu_of_a_product_and_a_sine_made_nothing.__code__.co_firstlineno + 3}"
    assert [s.line for s in third.attribution] == [s.line for s in with_calls.attribution]
    assert not any(s.line.endswith(sine) for s in third.attribution)  # x[0]'s sine: a 0 into x[0], not x[2]
    assert any(s.line.endswith(sine) for s in first.attribution)
    assert first.causes[0].node == "v3_maximum"  # the cut the recording is sure of first
    assert {(c.node, c.reason) for c in first.causes} >= {("v3_maximum", "relu-off"),
                                                          ("v6_multiply", "zero-derivative")}


def test_without_calls_an_element_lost_in_a_node_is_said_lost_there_and_nothing_after_is_blamed():
    M = np.array([[0.0, 1.0], [0.0, 2.0]])  # x[0] read by nothing: its gradient 0 whatever the relu did

    def f(x):
        return np.sum(np.maximum(np.dot(M, x) - 5.0, 0.0))
    rec = recorded_without_calls(f, np.array([1.0, 1.0]))
    for e in explain_recording(rec, ["x[0]", "x[1]"]):
        (cause,) = e.causes
        assert (cause.primitive, cause.reason) == ("dot", "unknown")
        assert f"element {e.selector[1:]}" in cause.detail and "calls=True" in cause.detail


def test_without_calls_a_smooth_node_reached_by_a_gradient_of_0_is_not_named_the_cut_after_it_is():
    # sin's derivative is not known from a plain record (the gradient reaching it was 0): that 0 came from the
    # relu after it, which cuts every path; a where's (piecewise: it may cut too) stays named (test above)
    def f(x):
        s = np.sin(x)
        return np.sum(np.maximum(s * 2.0 - 5.0, 0.0))
    with adtrace.record(capture="full", sites=True) as rec:
        grad(f)(np.array([0.5, 2.5]))
    for e in rec.explain():
        assert [(c.primitive, c.reason, c.fraction) for c in e.causes] == [("maximum", "relu-off", 1.0)]

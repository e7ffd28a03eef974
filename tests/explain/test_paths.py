"""A scalar graph's gradient as a sum over paths, largest first, within rounding of the gradient."""

import math

import autograd.numpy as np

from adtrace.explain import explain
from adtrace.explain import paths as paths_module


def f(x):
    y = x * x  # two paths through the product
    return np.sin(y) + 3.0 * x


def test_paths_are_the_chain_rule_expanded_largest_first():
    (e,) = explain(f, 0.5)
    products = [p.value for p in e.paths]
    assert products == sorted(products, key=abs, reverse=True)
    assert [p.nodes for p in e.paths][0] == ("v0_root", "v3_multiply", "v4_add")  # 3.0
    assert math.isclose(sum(products), e.gradient, rel_tol=4 * np.finfo(float).eps)
    assert sorted(products)[:2] == [math.cos(0.25) * 0.5] * 2  # sin's partial times each of x*x's


def test_a_zero_outgrad_takes_the_partial_from_the_rule():
    (e,) = explain(lambda x: np.tanh(x) * 0.0 + x, 0.5)
    partials = {p.nodes: p.value for p in e.paths}
    assert partials[("v0_root", "v1_tanh", "v2_multiply", "v3_add")] == 0.0
    assert partials[("v0_root", "v3_add")] == 1.0


def test_paths_beyond_the_shown_are_counted_and_summed(monkeypatch):
    monkeypatch.setattr(paths_module, "SHOWN", 1)
    (e,) = explain(f, 0.5)
    assert len(e.paths) == 1 and e.more_paths == 2
    assert math.isclose(e.paths[0].value + e.more_paths_sum, e.gradient, rel_tol=4 * np.finfo(float).eps)


W = np.array([[1.0, 2.0], [0.5, -1.0]])


def g(x):
    return np.sum(np.tanh(np.dot(W, x)) * x)


def test_an_array_graph_gets_element_paths_through_the_jacobians():
    (e,) = explain(g, np.array([0.3, -0.2]), wrt=["x[1]"])
    assert [p.nodes[-1] for p in e.paths] == ["v4_sum[0]"] * 3  # via tanh[0], tanh[1], and x[1] directly
    assert {p.nodes[1] for p in e.paths} == {"v1_dot[0]", "v1_dot[1]", "v3_multiply[1]"}
    assert math.isclose(sum(p.value for p in e.paths), e.gradient, rel_tol=4 * np.finfo(float).eps)


def test_without_the_calls_an_array_graph_gets_no_paths():
    import adtrace
    from autograd import grad
    from adtrace.explain.explainer import explain_recording
    with adtrace.record(capture="full") as rec:
        grad(g)(np.array([0.3, -0.2]))
    (e,) = explain_recording(rec, ["x[1]"])
    assert e.paths == () and e.exact


def test_a_long_chain_is_walked_without_recursion():
    def f(x):
        for _ in range(3000):
            x = np.sin(x) + 0.0
        return x
    (e,) = explain(f, 0.1)
    assert len(e.paths) == 1 and len(e.paths[0].nodes) == 6001
    assert math.isclose(e.paths[0].value, e.gradient, rel_tol=1e-12)


def test_too_many_paths_are_counted_not_listed(monkeypatch):
    monkeypatch.setattr(paths_module, "MAX_PATHS", 2)
    (e,) = explain(f, 0.5)
    assert (e.paths, e.more_paths) == ((), 3)


def test_the_where_trap_is_a_path_of_its_own_element():
    """x[2] = 0: its paths go through sqrt's element 2 (inf), then where's 0 for the unselected branch:
    the path's product is the VJP's 0 * inf, NaN; no path goes through another element of sqrt."""
    def f(x):
        h = np.maximum(x * 2.0, 0.0)
        y = np.where(x > 0, np.sqrt(x), 0.0)
        return np.sum(h) + np.sum(y)
    (e,) = explain(f, np.array([1.0, -2.0, 0.0]), wrt=["x[2]"])
    through_sqrt = [p for p in e.paths if any("sqrt" in node for node in p.nodes)]
    assert [p.nodes[1] for p in through_sqrt] == ["v3_sqrt[2]"]
    assert np.isnan(through_sqrt[0].value)


def test_a_container_input_starts_its_paths_at_the_element_as_written():
    def loss(params):
        return np.sum(np.tanh(params["W"]) * params["b"])
    params = {"W": np.array([0.1, 0.2, 0.3]), "b": np.array([1.0, 2.0, 3.0])}
    (e,) = explain(loss, params, wrt=["params['W'][1]"])
    assert e.paths and {p.nodes[0] for p in e.paths} == {"v0_root['W'][1]"}  # not v0_root[1], a flat index
    (e,) = explain(loss, params, wrt=["params['b'][2]"])
    assert {p.nodes[0] for p in e.paths} == {"v0_root['b'][2]"}

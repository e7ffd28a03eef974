"""explain(f, *args, wrt=...): the argument's name, another argnum, and the probe that tells a
value that left the trace from an output that does not depend on the input."""

import autograd.numpy as np
import numpy as onp
import pytest

from adtrace.explain import explain


def loss(params, x):
    return np.sum(np.dot(params["W"], x)) + params["b"][0]._value  # b leaves the trace


PARAMS = {"W": np.array([[1.0, 2.0]]), "b": np.array([0.5])}


def test_selectors_on_a_dict_argument_named_as_the_function_names_it():
    w, b = explain(loss, PARAMS, np.array([3.0, 4.0]), wrt=["params['W'][0, 1]", "params['b'][0]"])
    assert (w.selector, w.gradient, w.verdict) == ("params['W'][0, 1]", 4.0, "contributions")
    assert (b.selector, b.verdict, [c.reason for c in b.causes]) == ("params['b'][0]", "zero", ["left-trace"])


def test_another_argnum():
    def f(W, x):
        return np.sum(np.dot(W, x))
    (x1,) = explain(f, PARAMS["W"], np.array([3.0, 4.0]), argnum=1, wrt=["x[1]"])
    assert (x1.selector, x1.gradient) == ("x[1]", 2.0)


def test_the_probe_tells_left_trace_from_independent():
    (left,) = explain(lambda x: x._value * 2.0, 1.5)
    (independent,) = explain(lambda x: np.float64(2.0), 1.5)
    assert [c.reason for c in left.causes] == ["left-trace"]
    assert [c.reason for c in independent.causes] == ["independent"]


def test_the_package_is_the_entry_point():
    import adtrace
    import adtrace.explain.zero
    (e,) = adtrace.explain(lambda x: x * 2.0, 1.5)
    assert (e.selector, e.gradient) == ("x", 2.0)
    assert adtrace.explain.zero.why_zero is not None  # its modules stay reachable


def test_a_non_differentiable_primitive_is_named_with_its_line():
    def f(x):
        return np.floor(x) * 2.0 + np.float64(1.0)
    (e,) = explain(f, 1.5)
    (cause,) = e.causes
    assert (cause.primitive, cause.reason) == ("floor", "zero-derivative")
    assert cause.line.endswith(f":{f.__code__.co_firstlineno + 1}")


def test_a_comparison_result_is_named():
    (e,) = explain(lambda x: np.sum((x > 0) * 1.0), np.array([1.0, -1.0]), wrt=["x[0]"])
    assert [(c.primitive, c.reason) for c in e.causes] == [("greater", "comparison")]


def test_an_output_that_changes_from_call_to_call_is_not_called_left_trace():
    calls = [0]

    def counter(x):
        calls[0] += 1
        return float(calls[0])
    noise = onp.random.default_rng(0)
    for f in (counter, lambda x: np.sum(noise.standard_normal(3))):
        (e,) = explain(f, np.array([1.0, 2.0]), wrt=["x[0]"])
        assert [c.reason for c in e.causes] == ["nondeterministic"]


def test_the_function_runs_once_more_at_the_point_and_once_per_element_moved():
    calls = [0]

    def f(x):
        calls[0] += 1
        return np.float64(2.0)
    found = explain(f, np.array([1.0, 2.0, 3.0]))
    assert [c.reason for e in found for c in e.causes] == ["independent"] * 3
    assert calls[0] == 1 + 1 + 3  # recorded, again at the point (escapes, same output), each element moved


def test_a_plain_tuple_or_dict_of_traced_values_is_refused_saying_why():
    for f, kind in ((lambda x: (np.sum(x), np.sum(2 * x)), "tuple"), (lambda x: {"a": np.sum(x)}, "dict")):
        with pytest.raises(ValueError, match=f"returned a {kind} holding traced values"):
            explain(f, np.array([1.0, 2.0]))


def test_a_single_selector_string():
    (e,) = explain(lambda x: np.sum(x * x), np.array([1.0, 2.0]), wrt="x[1]")
    assert (e.selector, e.gradient) == ("x[1]", 4.0)

"""The gradient's scale per source line, in the program's order, and per part of the input: where an
exploding gradient starts."""

import math

import autograd.numpy as np

from adtrace.explain import explain, render_explanations


def exploding(params):
    h = np.tanh(params["W"])
    h = h * 1e3  # the cotangents grow 1e3 times at each of these lines, back to the input
    h = h * 1e3
    return np.sum(h * params["b"])


PARAMS = {"W": np.array([0.1, 0.2]), "b": np.array([1.0, 1.0])}


def test_by_line_in_the_programs_order():
    found = explain(exploding, PARAMS)
    first = exploding.__code__.co_firstlineno
    assert [s.where.rsplit(":", 1)[1] for s in found.lines] == [str(first + k) for k in (1, 2, 3, 4)]
    tanh, times_1e3, again = found.lines[:3]
    assert math.isclose(again.norm, math.sqrt(2))  # d sum(h * b) / dh = b
    assert math.isclose(times_1e3.norm, 1e3 * math.sqrt(2))  # then 1e3 times larger at each line before
    assert tanh.nodes == 2 and math.isclose(tanh.largest, 1e6)  # W's take and tanh; tanh's outgrad is 1e6 * b
    assert tanh.norm > times_1e3.norm > again.norm


def test_by_part_of_the_input():
    found = explain(exploding, PARAMS)
    parts = {s.where: s for s in found.leaves}
    assert set(parts) == {"params['W']", "params['b']"}
    assert parts["params['b']"].largest == np.tanh(0.2) * 1e6
    assert parts["params['W']"].nodes == 2


def test_rendered_after_the_explanations():
    found = explain(exploding, PARAMS)
    text = render_explanations(found, lines=found.lines, leaves=found.leaves)
    assert text.index("## Gradient scale by line") > text.index("## `params")
    assert "| `params['W']` |" in text


def deep(x):
    for _ in range(400):
        x = np.tanh(x) * 8.0  # at 0 each layer multiplies the cotangent by 8: 8**400 overflows
    return np.sum(x)


def test_a_loop_line_shows_where_its_cotangents_grew():
    chain, _ = explain(deep, np.zeros(2), wrt=["x[0]"]).lines
    assert chain.nodes == 800 and chain.nearest_output == 1.0 and chain.nearest_input == np.inf


def test_a_large_but_finite_norm_is_finite():
    found = explain(lambda x: np.sum(np.tanh(x) * 1e200), np.zeros(3), wrt=["x[0]"])
    assert math.isclose(found.lines[0].norm, 1e200 * math.sqrt(3))
    assert math.isclose(found.leaves[0].norm, 1e200 * math.sqrt(3))


def test_a_nan_cotangent_makes_its_line_and_part_nan_not_zero():
    def softmax_entropy(z):
        p = np.exp(z) / np.sum(np.exp(z))
        return -np.sum(p * np.where(p > 0, np.log(p), 0.0))  # p[2] = 0: the where trap's NaN reaches line 2
    found = explain(softmax_entropy, np.array([0.0, 1.0, -800.0]), wrt=["z[2]"])
    first = found.lines[0]
    assert first.where.endswith(f":{softmax_entropy.__code__.co_firstlineno + 1}")
    assert np.isnan(first.norm) and np.isnan(first.largest)
    assert np.isnan(found.leaves[0].norm)

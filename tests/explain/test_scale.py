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

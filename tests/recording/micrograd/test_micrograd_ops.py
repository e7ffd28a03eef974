"""micrograd's operations (``recording/micrograd/ops.py``): each forward and its local derivatives."""

import math
import re

import numpy as np
import pytest

from adtrace.recording.micrograd import ops
from adtrace.recording.micrograd.ops import OPS, power
from readme import readme


@pytest.mark.parametrize("op, inputs, out", [
    ("+", (2.0, 3.0), 5.0), ("-", (2.0, 3.0), -1.0), ("*", (2.0, 3.0), 6.0), ("/", (2.0, 3.0), 2 / 3),
    ("**2", (1.5,), 2.25), ("**-1", (4.0,), 0.25), ("**0.5", (4.0,), 2.0), ("ReLU", (0.7,), 0.7),
    ("ReLU", (-0.7,), 0.0), ("tanh", (0.3,), math.tanh(0.3)), ("exp", (0.3,), math.exp(0.3)),
    ("log", (0.3,), math.log(0.3)),
])
def test_each_rule_is_the_derivative(op, inputs, out):
    forward = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "/": lambda a, b: a / b,
               "ReLU": lambda a: max(a, 0.0), "tanh": math.tanh, "exp": math.exp, "log": math.log}.get(
        op, lambda a: a ** power(op))
    derivatives = OPS.derivatives(op, len(inputs))(out, *inputs)
    assert math.isclose(OPS.forward(op, len(inputs))(*inputs), out, rel_tol=1e-12), op
    h = 1e-6
    for k, d in enumerate(derivatives):
        up = list(inputs)
        down = list(inputs)
        up[k] += h
        down[k] -= h
        assert math.isclose(d, (forward(*up) - forward(*down)) / (2 * h), rel_tol=1e-6, abs_tol=1e-8), (op, k)


def test_rules_are_keyed_by_op_and_arity():
    assert OPS.derivatives("*", 1) is None and OPS.derivatives("**2", 2) is None
    assert OPS.derivatives("sigmoid", 1) is None and OPS.forward("sigmoid", 1) is None and OPS.forward("+", 1) is None
    assert power("**3") == 3 and power("**x") is None and power("*") is None


def test_the_readme_lists_the_ops_with_rules():
    """The README's ``own rules for `+ - * / **k ...``` are the ops with a rule (``relu`` spelled either
    way, ``**k`` any power), as the error message names them."""
    (listed,) = re.findall(r"own rules for `([^`]+)`", " ".join(readme().split()))
    ruled = [op for op in {**ops._OPS, **ops._STRUCTURAL} if op != "relu"]
    assert ops._OPS["relu"] is ops._OPS["ReLU"]
    assert sorted(listed.split()) == sorted(ruled + ["**k"]) == sorted(OPS.known.split(", "))


@pytest.mark.parametrize("op, inputs", [
    ("@", (np.array([[0.5, -1.0, 0.3], [0.2, 0.4, -0.7]]), np.array([[1.0, 2.0], [0.5, -1.0], [0.3, 0.1]]))),
    ("@", (np.array([0.5, -1.0, 0.3]), np.array([[1.0, 2.0], [0.5, -1.0], [0.3, 0.1]]))),
    ("@", (np.array([[1.0, 2.0], [0.5, -1.0]]), np.array([0.3, -0.4]))),
    ("@", (np.array([0.5, -1.0]), np.array([0.3, -0.4]))),
    ("sum", (np.array([[1.0, 2.0], [0.5, -1.0]]),)),
    ("+", (np.array([[1.0, 2.0], [0.5, -1.0]]), np.array([0.3, -0.4]))),
    ("*", (np.array([[1.0], [0.5]]), np.array([0.3, -0.4, 2.0]))),
    ("*", (np.array([1.0, 0.5]), 3.0)),
])
def test_each_vjp_of_arrays_is_the_transposed_derivative(op, inputs):
    """<vjp(g), w> = <g, J w> for random g and w, J w by central differences (the rules are linear in
    w for these ops: exact up to rounding); each partial adjoint has its input's shape (broadcast
    summed back)."""
    rng = np.random.default_rng(0)
    forward = OPS.forward(op, len(inputs))
    out = forward(*inputs)
    g = rng.standard_normal(np.shape(out))
    partials = OPS.vjp(op, len(inputs))(g, out, *inputs)
    for k, (a, partial) in enumerate(zip(inputs, partials)):
        assert np.shape(partial) == np.shape(a), (op, k)
        w = rng.standard_normal(np.shape(a))
        h = 1e-6
        moved = [list(inputs), list(inputs)]
        moved[0][k], moved[1][k] = a + h * w, a - h * w
        numeric = np.sum(g * (forward(*moved[0]) - forward(*moved[1])) / (2 * h))
        assert np.sum(partial * w) == pytest.approx(numeric, rel=1e-7), (op, k)


def test_a_number_s_partial_adjoint_is_the_plain_product():
    assert OPS.vjp("*", 2)(2.0, 6.0, 3.0, 2.0) == (4.0, 6.0) and type(OPS.vjp("+", 2)(1, 2, 1, 1)[0]) is float
    assert OPS.vjp("@", 1) is None and OPS.vjp("sum", 2) is None and OPS.vjp("mean", 1) is None


@pytest.mark.parametrize("op, data, a, b, expected", [
    ("-", 2.0 - 5.0, 5.0, 2.0, (2.0, 5.0)), ("-", 5.0 - 2.0, 5.0, 2.0, (5.0, 2.0)),
    ("/", 2.0 / 5.0, 5.0, 2.0, (2.0, 5.0)), ("/", 5.0 / 2.0, 5.0, 2.0, (5.0, 2.0)),
    ("-", 0.0, 3.0, 3.0, None),      # both orders reproduce it: not known
    ("-", 7.0, 3.0, 1.0, None),      # neither does (the class computes another thing)
    ("max", 3.0, 3.0, 1.0, None),    # no forward here
    ("*", 6.0, 2.0, 3.0, (2.0, 3.0)), ("+", 5.0, 2.0, 3.0, (2.0, 3.0)),  # the order does not matter
])
def test_the_order_of_a_sets_two_children_is_the_one_the_forward_reproduces(op, data, a, b, expected):
    assert OPS.order(op, data, a, b) == expected

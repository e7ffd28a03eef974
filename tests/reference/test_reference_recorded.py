"""The lecture's algorithm over a recorded micrograd graph, and its rules by op."""

import math

import numpy as np
import pytest
from micrograd.engine import Value as MicroValue

import adtrace
from adtrace.reference.recorded import run_recorded
from adtrace.reference.rules import BORROWED, OWN, ROOT
from learner_arrays import MeanTensor, Tensor
from value_classes import BuggyValue, CubeValue, Value


def run(cls, f, *args, capture="auto"):
    with adtrace.record(engine=cls, capture=capture) as rec:
        values = [cls(a) for a in args]
        f(*values).backward()
    return rec, run_recorded(rec, 1), values


def test_x_times_x_lists_both_contributions():
    rec, lecture, (x,) = run(MicroValue, lambda x: x * x, 3.0)
    assert lecture.order == ("v1_mul", "v0_leaf") and lecture.seed == 1
    mul, leaf = lecture.steps
    assert (mul.primitive, leaf.primitive) == ("*", "")  # the op each step's rule is chosen by, as recorded
    assert (mul.rule, mul.partial_adjoints, [c.value for c in mul.contributions]) == (OWN, (1,), [3.0, 3.0])
    assert (leaf.rule, leaf.partial_adjoints, leaf.v_i_bar) == (ROOT, (3.0, 3.0), 6.0) and x.grad == 6.0


def test_the_classic_bug_the_lecture_keeps_both():
    rec, lecture, (a,) = run(BuggyValue, lambda a: a + a, 3.0)
    assert lecture.steps[-1].partial_adjoints == (1.0, 1.0) and lecture.steps[-1].v_i_bar == 2.0
    assert a.grad == 1.0  # the engine lost one


def video_neuron(x1, x2, w1, w2):
    n = x1 * w1 + x2 * w2 + 6.8813735870195432
    e = (2 * n).exp()
    return (e - 1) / (e + 1) + n.tanh() ** 3 - x1 / 7 + (n * 0.1).exp().tanh()


@pytest.mark.parametrize("cls, f, args", [
    (Value, video_neuron, (2.0, 0.0, -3.0, 1.0)),
    (MicroValue, lambda a, b: ((a * b + a ** 2).relu() - b / a) * (-a).relu() + (b - 3).relu(), (-1.5, 2.0)),
])
def test_every_visited_value_sums_to_the_engines_grad(cls, f, args):
    rec, lecture, values = run(cls, f, *args)
    read = {e.node: e.outgrad for e in rec.of_kind("vjp")}
    assert all(step.rule in (OWN, ROOT) for step in lecture.steps)
    for step in lecture.steps:
        assert math.isclose(step.v_i_bar, read[step.label], rel_tol=1e-12, abs_tol=1e-15), step.label
    leaves = [s for s in lecture.steps if s.rule == ROOT]
    assert len(leaves) >= len(values) and sorted(lecture.order) == sorted(rec.graph(lecture.order[0]))


def test_an_op_without_a_rule_borrows_the_engines_contributions():
    rec, lecture, (x,) = run(CubeValue, lambda x: x.cube() * x, 2.0)
    steps = {s.label: s for s in lecture.steps}
    assert steps["v1_cube"].rule == BORROWED and steps["v1_cube"].contributions[0].value == 24.0
    assert steps["v0_leaf"].v_i_bar == x.grad == 32.0


def test_no_values_no_run():
    rec, lecture, _ = run(MicroValue, lambda x: x * x, 3.0, capture="structure")
    assert lecture is None


# ---- arrays: a learner's tensor engine

def test_the_classic_crash_x_times_x_summed_runs_over_arrays():
    """``(x*x).sum()`` with an array ``x`` (raised KeyError: 'v1_mul' when ``sum`` had no rule)."""
    rec, lecture, (x,) = run(Tensor, lambda x: (x * x).sum(), np.array([1.0, 2.0, 3.0]), capture="full")
    assert lecture.order == ("v2_sum", "v1_mul", "v0_leaf")
    assert all(step.rule in (OWN, ROOT) for step in lecture.steps)
    np.testing.assert_array_equal(lecture.steps[-1].v_i_bar, x.grad)
    np.testing.assert_array_equal(x.grad, [2.0, 4.0, 6.0])


def test_a_broadcast_is_summed_back_to_each_input_and_matmul_transposes():
    w, x, b = np.array([[0.5, -1.0, 0.3], [0.2, 0.4, -0.7]]), np.array([[1.0, 2.0], [0.5, -1.0], [0.3, 0.1]]), [0.1]
    rec, lecture, values = run(Tensor, lambda w, x, b: ((w @ x + b).tanh()).sum(), w, x, np.array(b), capture="full")
    read = {e.node: e.outgrad for e in rec.of_kind("vjp")}
    assert {step.primitive for step in lecture.steps} == {"@", "+", "tanh", "sum", ""}
    for step in lecture.steps:
        np.testing.assert_allclose(step.v_i_bar, read[step.label], rtol=1e-12, err_msg=step.label)
        assert np.shape(step.v_i_bar) == np.shape(rec.nodes[step.label].value), step.label


def test_a_contribution_not_known_leaves_the_sums_it_feeds_not_known():
    """``mean`` has no rule, and its write into ``v1_mul``'s array ``.grad`` is a copy of the sum
    (``.astype``: not read as ``grad + c``): its contribution is not known, so neither is any sum
    below it (no KeyError, no guess)."""
    rec, lecture, (x,) = run(MeanTensor, lambda x: (x * x).mean(), np.array([1.0, 2.0]), capture="full")
    steps = {s.label: s for s in lecture.steps}
    assert steps["v2_mean"].rule == BORROWED and steps["v2_mean"].partial_adjoints == (np.array(1.0),)
    assert steps["v1_mul"].partial_adjoints == (None,) and steps["v1_mul"].v_i_bar is None
    assert steps["v0_leaf"].v_i_bar is None and lecture.order == ("v2_mean", "v1_mul", "v0_leaf")


def test_an_op_named_as_a_rule_but_computing_another_borrows():
    """``x.sum(axis=1)`` written ``'sum'``: the rule for all elements does not apply (it raised a
    broadcasting ValueError); the engine's recorded contribution is borrowed."""
    rec, lecture, (x,) = run(Tensor, lambda x: (x.sum(axis=1) * 2.0).sum(), np.arange(6.0).reshape(2, 3),
                             capture="full")
    steps = {s.label: s for s in lecture.steps}
    assert steps["v1_sum"].rule == BORROWED and steps["v3_mul"].rule == OWN
    np.testing.assert_array_equal(steps["v0_leaf"].v_i_bar, x.grad)


def test_a_node_whose_input_an_update_changed_borrows_the_engine_s_contributions_and_says_why():
    """``w.data`` changed by an update after ``w`` was recorded: ``w * x`` is made of the new data, the
    recording keeps the old; the rule at the old data is not the engine's derivative (the lecture said x's
    sum was 0.5, the engine's right .grad 0.45): the step borrows, saying why, and the others keep their rules."""
    with adtrace.record(engine=Value) as rec:
        x, w = Value(2.0), Value(0.5)
        w.data -= 0.05
        (w * x).tanh().backward()
    lecture = run_recorded(rec, 1)
    steps = {step.label: step for step in lecture.steps}
    assert [(label, steps[label].rule) for label in lecture.order] == [
        ("v3_tanh", OWN), ("v2_mul", BORROWED), ("v0_leaf", ROOT), ("v1_leaf", ROOT)]
    assert steps["v2_mul"].borrowed.startswith("v2_mul's inputs as recorded do not give its value")
    assert steps["v0_leaf"].v_i_bar == x.grad and steps["v3_tanh"].borrowed is None

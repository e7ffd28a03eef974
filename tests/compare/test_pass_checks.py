"""Bugs of the whole backward pass named from a recording (issue 26, item 5): a gradient not zero when
the pass began, ``backward()`` run twice over one graph, a visit order that is not reverse topological;
and none named on a right engine of any shape."""

import numpy as np
import pytest

import adtrace
import learner_arrays
import learner_passes
import learner_shapes
import learner_writes
import value_classes
from adtrace.compare.pass_checks import ONE_PASS, REVERSE_TOPOLOGICAL, ZERO_AT_START, pass_findings


def findings(f, *args, cls):
    """The findings of the last pass: ``f``'s values made of leaves of ``cls``, its result's ``backward()``."""
    with adtrace.record(engine=cls, sites=True, capture="full") as rec:
        out = f(*[cls(a) for a in args])
        out.backward()
    return pass_findings(rec, rec.user_query())


def test_a_visit_before_a_consumer_has_added_is_named_with_both_nodes():
    """Breadth-first from the output: ``h = x * x`` (v1) runs its backward with 1, before ``h * 3`` adds 3."""
    found = findings(learner_passes.squares, 1.0, cls=learner_passes.QueueValue)
    assert [(f.test, f.node) for f in found] == [(REVERSE_TOPOLOGICAL, "v1_mul")]
    line = learner_passes.squares.__code__.co_firstlineno + 2
    assert found[0].site == f"tests/learner_passes.py:{line}"
    assert "before its consumer v3_mul had added into it" in found[0].reason
    assert ".grad 1)" in found[0].reason and "contribution 3" in found[0].reason


def test_a_visit_before_a_consumer_has_added_under_capture_structure_shows_no_value():
    """No values recorded: the finding names both nodes and no value (it said ".grad NoneType")."""
    with adtrace.record(engine=learner_passes.QueueValue, capture="structure") as rec:
        learner_passes.squares(learner_passes.QueueValue(1.0)).backward()
    (found,) = pass_findings(rec, rec.user_query())
    assert (found.test, found.node) == (REVERSE_TOPOLOGICAL, "v1_mul")
    assert "ran (visit 1) before its consumer v3_mul had added into it (v3_mul's contribution came after)" \
        in found.reason, found.reason


def test_a_node_visited_twice_in_one_pass_is_named():
    """A topological sort without its ``visited`` set: ``h`` is listed, and run, once per use."""
    found = findings(learner_passes.squares, 1.0, cls=learner_passes.RepeatValue)
    assert [(f.test, f.node) for f in found] == [(REVERSE_TOPOLOGICAL, "v1_mul")]
    assert "ran twice in one pass" in found[0].reason


def test_backward_run_twice_over_one_graph_is_named_at_its_end():
    found = findings(learner_passes.backward_twice, 1.0, cls=learner_passes.Value)
    assert [(f.test, f.node) for f in found] == [(ONE_PASS, "v3_mul")]
    assert "pass 2 seeds v3_mul again after pass 1" in found[0].reason
    assert "v1_mul.grad was 0.7 when pass 2 began" in found[0].reason


def test_a_gradient_left_by_an_earlier_pass_is_named_with_its_value_and_that_pass():
    found = findings(learner_passes.not_zeroed, 1.0, cls=learner_passes.Value)
    assert [(f.test, f.node) for f in found] == [(ZERO_AT_START, "v0_leaf")]
    line = learner_passes.not_zeroed.__code__.co_firstlineno + 2
    assert "v0_leaf.grad was 3 when pass 2 began, not 0" in found[0].reason
    assert f"pass 1 (backward() from v2_mul, made at tests/learner_passes.py:{line})" in found[0].reason



def test_an_argument_the_call_made_a_leaf_is_named_an_input_not_the_line_that_called_adtrace():
    from adtrace.compare.traced_engine_call import trace_engine_call
    from adtrace.recording.callsite import INPUT
    from adtrace.report import render

    call = trace_engine_call(learner_passes.not_zeroed, (1.0,), engine=learner_passes.Value)
    assert [(f.test, f.node, f.site) for f in call.pass_findings] == [(ZERO_AT_START, "v0_leaf", INPUT)]
    assert "at `v0_leaf` (an input): v0_leaf.grad was 3" in render(call)

def test_a_gradient_set_before_the_recording_is_named():
    x = learner_passes.Value(2.0)
    x.grad = 5.0
    with adtrace.record(engine=learner_passes.Value) as rec:
        (x * 3.0).backward()
    found = pass_findings(rec, rec.user_query())
    assert [(f.test, f.node) for f in found] == [(ZERO_AT_START, "u0_unrecorded")]
    assert "was 5 when pass 1 began" in found[0].reason and "before the recording" in found[0].reason


def test_an_array_gradient_not_zeroed_is_named():
    """``ArrayValue`` adds in place: the value before the first write is its result less the contribution."""
    found = findings(array_not_zeroed, [1.0, 2.0], cls=value_classes.ArrayValue)
    assert [(f.test, f.node) for f in found] == [(ZERO_AT_START, "v0_leaf")]
    assert "v0_leaf.grad was [3., 3.] when pass 2 began" in found[0].reason


def array_not_zeroed(x):
    first = x * value_classes.ArrayValue([3.0, 3.0])
    first.backward()
    return x * x


# ---- no false alarm: every right engine of every shape the tests hold

def reused(x):
    h = x * x
    return h * x + h


def scalar_cases():
    yield from ((cls, reused, (1.5,)) for cls in learner_shapes.SHAPES)
    yield from ((cls, reused, (1.5,)) for cls in (value_classes.Value, value_classes.MiniValue,
                                                    value_classes.ZeroingValue, value_classes.SlotValue,
                                                    learner_passes.Value))
    yield learner_writes.SignedValue, lambda x: (0.1 - (x * x - x)) + x, (0.7,)
    yield learner_passes.Value, learner_passes.zeroed, (1.0,)
    yield value_classes.ArrayValue, lambda x: x * x, ([1.0, 2.0],)
    yield learner_writes.SignedArray, lambda x: (2.0 - (x * x - x)) + x, (np.array([0.7, 1.5]),)
    yield learner_arrays.Tensor, lambda w, x, b: ((w @ x + b).tanh()).sum(), (
        np.array([[0.5, -1.0], [0.2, 0.4]]), np.array([[1.0, 2.0], [0.5, -1.0]]), np.array([0.1, -0.2]))
    yield learner_arrays.MeanTensor, lambda x: (x * x).mean(), (np.array([1.0, 2.0, 3.0]),)


@pytest.mark.parametrize("cls, f, args", list(scalar_cases()),
                         ids=lambda v: getattr(v, "__name__", "") if isinstance(v, type) else "")
def test_no_finding_on_a_right_engine_of_any_shape(cls, f, args):
    assert findings(f, *args, cls=cls) == []


def test_no_finding_when_backward_zeroes_before_it_seeds_even_run_twice():
    """``ZeroingValue.backward()`` zeroes every ``.grad`` first: a second pass over one graph is right."""
    def twice(x):
        out = x * x
        out.backward()
        return out

    assert findings(twice, 1.0, cls=value_classes.ZeroingValue) == []
    assert [f.test for f in findings(twice, 1.0, cls=value_classes.MiniValue)] == [ONE_PASS]


def test_no_finding_for_a_pass_run_inside_the_pass_s_own_backward():
    """``ChainedValue``: a regularizer's pass runs inside ``backward()`` and shares a leaf: the sum is meant."""

    class Chained(value_classes.ChainedValue):
        pass

    with adtrace.record(engine=Chained) as rec:
        x = Chained(2.0)
        reg = x * x
        out = x * Chained(3.0) + Chained(1.0)
        out.first = (reg,)
        out.backward()
    assert x.grad == 7.0
    assert pass_findings(rec, rec.user_query()) == []


def test_declared_scalar_has_no_finding():
    from adtrace.recording.micrograd import declare

    engine = declare(learner_shapes.Scalar, **learner_shapes.SCALAR_NAMES)
    with adtrace.record(engine=engine, capture="full") as rec:
        out = reused(learner_shapes.Scalar(1.5))
        out.backpropagate()
    assert rec.user_query() is not None and pass_findings(rec, rec.user_query()) == []


def test_many_values_not_zeroed_are_one_finding_naming_the_first_and_counting_the_others():
    def layer(x):
        weights = [learner_passes.Value(0.1 * i) for i in range(6)]
        first = sum((w * x for w in weights), learner_passes.Value(0.0))
        first.backward()  # every weight's .grad is x now
        return sum((w * w for w in weights), learner_passes.Value(0.0))

    found = findings(layer, 2.0, cls=learner_passes.Value)
    assert [f.test for f in found] == [ZERO_AT_START]
    assert found[0].reason.endswith("; 5 more held a gradient when the pass began: v2_leaf, v3_leaf, v4_leaf, ...")

"""One call traced through an engine of micrograd's shape: the checks, the alignment with the lecture,
the per-node checker, and the report that reads the engine's own statements."""

import re

import numpy as np
import pytest
from micrograd.engine import Value as MicroValue

from adtrace.checker.engine_rules import check_engine, check_engine_call
from adtrace.compare.checks import verdict
from adtrace.compare.traced_engine_call import trace_engine_call
from adtrace.report import render
from learner_arrays import MeanTensor, NoTransposeTensor, Tensor
from value_classes import BuggyValue, CubeValue, MiniValue, Value
from view_cases import snapshot_rows


def twice(a):
    return a + a


def neuron(x, w):
    return (x * w + 1).tanh().exp() ** 2 - w / 3


def passed(call):
    return {c.name: c.passed for c in call.checks}


# ---- the checks of a traced call

@pytest.mark.parametrize("engine, f, args", [
    ("micrograd", lambda a, b: ((a * b + a ** 2).relu() - b / a) * 2 + (b - 3).relu(), (-1.5, 2.0)),
    (Value, neuron, (0.5, -0.3)),
    (Value, twice, (3.0,)),
])
def test_a_right_engine_passes_every_check(engine, f, args):
    call = check_engine_call(trace_engine_call(f, args, engine=engine))
    assert all(passed(call).values()) and len(call.checks) == 5, call.checks
    assert {r.status for r in call.alignment} == {"exact"}
    assert call.engine == ("micrograd" if engine == "micrograd" else engine.__qualname__) and call.argnum is None


def test_the_classic_bug_is_caught_named_and_explained():
    call = check_engine_call(trace_engine_call(twice, (3.0,), engine=BuggyValue))
    assert passed(call) == {"reference engine vs BuggyValue, per node": False,
                            "both visit orders are reverse topological": True, "every write into .grad adds": False,
                            "central finite differences": False, "per-node local rules": False}
    writes = next(c for c in call.checks if c.name == "every write into .grad adds")
    assert writes.detail == ("1 of 2 writes lost a contribution; first: v1_add's write into v0_leaf.grad "
                             "(argument 1) replaced 1 by 1; the lecture's node_to_grad[v0_leaf] is [1, 1], sum 2")
    leaf = call.alignment[-1]
    assert (leaf.label, leaf.partial_adjoints, leaf.v_i_bar, leaf.running, leaf.popped, leaf.status) == (
        "v0_leaf", (1.0, 1.0), 2.0, (0.0, 1.0, 1.0), 1.0, "differs")
    first = call.node_checks.first_failure
    assert (first.node, first.argnum, first.test, first.site) == (
        "v1_add", 1, "accumulation", f"tests/compare/test_traced_engine_call.py:{twice.__code__.co_firstlineno + 1}")


def test_an_assignment_over_zero_loses_nothing_and_passes_with_a_note():
    call = check_engine_call(trace_engine_call(lambda a, b: a + b, (3.0, 4.0), engine=BuggyValue))
    assert all(passed(call).values())
    writes = next(c for c in call.checks if c.name == "every write into .grad adds")
    assert "2 assign over a .grad of 0" in writes.detail
    assert [r.status for r in call.node_checks.rows if r.test == "accumulation"] == ["pass", "pass"]


def test_gradients_of_several_arguments_and_central_differences():
    call = trace_engine_call(neuron, (0.5, -0.3), engine=Value)
    x, w = Value(0.5), Value(-0.3)
    neuron(x, w).backward()
    assert call.gradient == (x.grad, w.grad) and call.output == neuron(Value(0.5), Value(-0.3)).data
    fd = next(c for c in call.checks if c.name == "central finite differences")
    assert fd.passed and "relative difference" in fd.detail


def test_a_function_that_returns_no_value_is_refused():
    with pytest.raises(TypeError, match="returned a float, not a Value"):
        trace_engine_call(lambda a: a.data, (1.0,), engine=Value)


# ---- the per-node checker

class WrongMul(MiniValue):
    """``*``'s backward writes ``self.data`` for the first argument (it should be ``other.data``)."""

    def __mul__(self, other):
        out = type(self)(self.data * other.data, (self, other), '*')

        def _backward():
            self.grad += self.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out


def product(a, b):
    c = a + b
    return c * b


def test_a_wrong_derivative_names_the_node_and_argument():
    report = check_engine(product, 2.0, 5.0, cls=WrongMul)
    first = report.first_failure
    assert (first.node, first.primitive, first.argnum, first.test) == ("v3_mul", "*", 0, "local")
    assert first.analytic == 7.0 and first.numeric == pytest.approx(5.0)
    assert first.site == f"tests/compare/test_traced_engine_call.py:{product.__code__.co_firstlineno + 2}"
    assert [(r.node, r.argnum, r.status) for r in report.rows] == [
        ("v2_add", 0, "pass"), ("v2_add", 1, "pass"), ("v3_mul", 0, "FAIL"), ("v3_mul", 1, "pass")]
    assert report.gradient == (7.0, 14.0)  # the engine's: c.grad is 7 (b = 5 is right), into a and b


def test_a_kink_and_an_unknown_op_are_skipped_with_the_reason():
    report = check_engine(lambda a: (a - 3).relu(), 3.0, cls=MicroValue)
    relu = next(r for r in report.rows if r.primitive == "ReLU")
    assert relu.status == "skipped" and "kink" in relu.reason and report.passed

    report = check_engine(lambda a: a.cube(), 2.0, cls=CubeValue)
    assert [(r.status, r.reason.split(" (")[0]) for r in report.rows] == [
        ("skipped", "op 'cube' is not one adtrace knows")]


# ---- the report

def test_the_report_shows_the_engines_own_statements_and_values():
    call = check_engine_call(trace_engine_call(twice, (3.0,), engine=BuggyValue))
    text = render(call)
    rows = snapshot_rows(text)[1]
    assert [statement for statement, _, _ in rows] == [
        "self.grad = 1.0", "for node in reversed(topo):", "node._backward()", "node._backward()",
        "node._backward()", "for node in reversed(topo):", "node._backward()", "def backward(self):"]
    assert [after for _, _, after in rows][3:5] == ["{v1_add:1, v0_leaf:1}"] * 2
    assert "## State snapshot per statement of `BuggyValue.backward`" in text and "backward_pass" not in text
    assert "| 1 -> v0_leaf (replaced) " in text and "1 (replaced: the previous value is lost)" in text
    assert "| `self.grad = 1.0` " in text and "VJPNode" not in text  # the lecture mapping, the call sequence
    assert "**First divergent node: `v0_leaf`**" in text
    assert "| v0_leaf | (leaf) | [1, 1] | 2 | 0 -> 1 -> 1 | 1 | **DIFFERS** | 1 |" in re.sub(" +", " ", text)
    assert "First failing node: `v1_add` (`+`) argument 1, called at tests/compare/test_traced_engine_call.py:" in text



def test_an_argument_the_call_made_a_leaf_has_no_line_of_the_user_and_is_an_input():
    def f(x):
        return x * x + Value(2.0)  # (a leaf the function makes: its own line)

    call = trace_engine_call(f, (3.0,), engine=Value)
    sites = {n.label: n.site for n in call.recording.nodes.values() if not n.parents}
    assert sites["v0_leaf"] is None  # (before: the line of whatever called trace_engine_call)
    assert sites["v2_leaf"].startswith("tests/compare/test_traced_engine_call.py:")
    assert re.search(r"\| \(input\) +\| 1 ", render(call))


def test_a_breadth_first_walk_that_only_visits_a_leaf_early_passes_every_check():
    """``h * x + h``: breadth-first reaches the leaf ``x`` before ``h``'s ``_backward`` adds into it; a
    leaf's local backward does nothing, so the gradient is right. The report failed the order and the
    reference (first divergent node: the leaf) while ``check`` and finite differences passed."""
    from learner_passes import QueueValue

    def f(x, y):
        h = x * y * 2.0
        return h * x + h

    call = trace_engine_call(f, (0.5, 0.8), engine=QueueValue)
    assert [(c.name, verdict(c)) for c in call.checks] == [
        ("reference engine vs QueueValue, per node", "pass"), ("both visit orders are reverse topological", "pass"),
        ("every write into .grad adds", "pass"), ("central finite differences", "pass")]
    assert "valid (a leaf visited before a consumer added into it" in call.checks[1].detail
    assert call.gradient == pytest.approx((2 * 2 * 0.5 * 0.8 + 2 * 0.8, 2 * 0.5 * 0.5 + 2 * 0.5))

# ---- a tensor-valued engine (numpy data and grad, @, sum, broadcasting)

def dense(w, x, b):
    return ((w @ x + b).tanh()).sum()


DENSE_ARGS = (np.array([[0.5, -1.0], [0.2, 0.4]]), np.array([[1.0, 2.0], [0.5, -1.0]]), np.array([0.1, -0.2]))


def test_a_right_tensor_engine_passes_every_check_and_reports():
    call = check_engine_call(trace_engine_call(dense, DENSE_ARGS, engine=Tensor, capture="full"))
    assert all(passed(call).values()) and len(call.checks) == 5, call.checks
    assert {r.status for r in call.alignment} == {"exact"}
    assert [np.shape(g) for g in call.gradient] == [(2, 2), (2, 2), (2,)]
    text = render(call)
    assert "## State snapshot per statement of `Tensor.backward`" in text and "| v3_matmul " in text


def test_x_times_x_summed_reports_under_every_capture():
    """The crash the issue found (``KeyError: 'v1_mul'``), at every capture: under ``auto`` a large
    array is kept as a summary (the lecture cannot add summaries: the sums below are not known, nothing
    divergent; was TypeError: 'ArraySummary' + 'ArraySummary'), under ``structure`` no values."""
    for capture, x in [("auto", np.arange(100.0)), ("full", np.arange(3.0)), ("structure", np.arange(3.0))]:
        call = check_engine_call(trace_engine_call(lambda x: (x * x).sum(), (x,), engine=Tensor, capture=capture))
        checks = passed(call)
        assert checks["central finite differences"] and checks["per-node local rules"], (capture, call.checks)
        assert all(passed for name, passed in checks.items() if name.startswith("reference engine")), call.checks
        if capture == "auto":
            agree = next(c for c in call.checks if c.name.startswith("reference engine"))
            assert "2 not compared (the lecture's sum is not known" in agree.detail, agree.detail
        assert "raised" not in render(call)
        np.testing.assert_array_equal(call.gradient, 2 * x)


def test_a_tensor_engine_missing_a_transpose_is_named_in_the_report():
    call = check_engine_call(trace_engine_call(dense, DENSE_ARGS, engine=NoTransposeTensor, capture="full"))
    checks = passed(call)
    assert not checks["per-node local rules"] and not checks["central finite differences"]
    assert call.node_checks.first_failure.node == "v3_matmul" and call.node_checks.first_failure.argnum == 0
    assert "First failing node: `v3_matmul` (`@`) argument 0" in render(call)


def test_an_op_without_a_rule_is_reported_as_such():
    call = check_engine_call(trace_engine_call(lambda x: (x * x).mean(), (np.array([1.0, 2.0]),), engine=MeanTensor))
    agree = next(c for c in call.checks if c.name.startswith("reference engine"))
    assert agree.passed and "2 not compared (the lecture's sum is not known" in agree.detail, agree.detail
    text = render(call)
    assert "op 'mean' is not one adtrace knows" in text
    assert "| v0_leaf | (leaf) | [None, None] | not known |" in re.sub(" +", " ", text)
# ---- each way of writing an accumulation (tests/learner_writes.py)

def signed(x):
    return (0.1 - (x * x - x)) + x


def writes_check(call):
    return next(c for c in call.checks if c.name == "every write into .grad adds")


def test_every_form_of_accumulation_adds():
    """``grad -= c`` (``x - x``: was "v1_sub's write into v0_leaf.grad (argument 1) replaced 1 by 0"),
    ``grad = grad - c``, ``grad = c + grad``, ``grad = grad + c``, ``grad += c``; on numbers and arrays."""
    from learner_writes import SignedArray, SignedValue

    for engine, f, x in [(SignedValue, lambda a: a - a, 2.0), (SignedValue, signed, 0.7),
                         (SignedArray, signed, [0.7, -0.3])]:
        call = trace_engine_call(f, (x,), engine=engine)
        writes = writes_check(call)
        assert verdict(writes) == "pass" and re.fullmatch(r"(\d+) writes, \1 add", writes.detail), writes
        if engine is SignedValue:
            call = check_engine_call(call)
            assert all(passed(call).values()), call.checks


def test_writes_adtrace_cannot_tell_are_not_known_never_a_pass():
    """numpy float32 data: the second ``+=`` into ``x.grad``, a float32 (not tracked), added or replaced?
    The writes check, the report and the page say "not known"."""
    import numpy as np

    from adtrace.view import page_data
    from learner_writes import SignedValue

    call = trace_engine_call(lambda a: a * a, (np.float32(3.0),), engine=SignedValue)
    writes = writes_check(call)
    assert verdict(writes) == "not known" and writes.skipped, writes
    assert writes.detail.startswith("2 writes, 1 add; 1 not known: added or replaced (first: v1_mul's write into "
                                    "v0_leaf.grad (argument 1)"), writes.detail
    assert "| every write into .grad adds | not known | 2 writes" in re.sub(" +", " ", render(call))
    assert render(call).count(" (not known: added or replaced)") == 2  # the call sequence and the snapshots
    (page_pass,) = page_data(call=call)["passes"]
    assert sum("(not known: added or replaced)" in r for r in page_pass["steps"]["result"] if r) == 1


def test_the_assignment_bug_on_arrays_is_named():
    from learner_writes import AssignArray

    call = trace_engine_call(lambda a: a * a - a, ([3.0, 2.0],), engine=AssignArray)
    writes = writes_check(call)
    assert verdict(writes) == "FAIL" and writes.detail.startswith(
        "2 of 4 writes lost a contribution; first: v1_mul's write into v0_leaf.grad (argument 0) replaced "
        "[-1., -1.] by [3., 2.]"), writes


def test_a_learners_class_is_named_by_its_own_name_not_micrograds():
    """The check, the report and the page of a learner's class name the class, where micrograd's own
    ``Value`` is "micrograd"; the recording's engine (the protocol's name) stays "micrograd"."""
    from adtrace.report import render
    from adtrace.view import page_data

    call = trace_engine_call(twice, (3.0,), engine=BuggyValue)
    report = render(call)
    assert call.recording.engine == "micrograd" and call.engine == "BuggyValue"
    assert "reference engine vs BuggyValue, per node" in [c.name for c in call.checks]
    assert "micrograd" not in report and "| engine " in report and "BuggyValue: `BuggyValue.backward`" in report
    assert "BuggyValue statement (BuggyValue.backward)" in report and "runs (BuggyValue)" in report
    assert dict(page_data(call=call)["summary"])["engine"].startswith("BuggyValue: BuggyValue.backward")


def test_a_bug_of_the_whole_pass_fails_a_check_named_by_it_and_a_right_pass_adds_no_check():
    import learner_passes

    def checks(f, cls):
        return {c.name: c for c in trace_engine_call(getattr(learner_passes, f), (1.0,), engine=cls).checks}

    order = checks("squares", learner_passes.QueueValue)["both visit orders are reverse topological"]
    assert not order.passed and "v1_mul's local backward ran (visit 1, .grad 1) before its consumer v3_mul" in (
        order.detail)
    twice = checks("backward_twice", learner_passes.Value)["backward() ran once over the graph"]
    assert not twice.passed and "pass 2 seeds v3_mul again after pass 1" in twice.detail
    zero = checks("not_zeroed", learner_passes.Value)["every .grad was 0 when the pass began"]
    assert not zero.passed and "v0_leaf.grad was 3 when pass 2 began" in zero.detail
    right = checks("squares", learner_passes.Value)
    assert list(right) == ["reference engine vs Value, per node", "both visit orders are reverse topological",
                           "every write into .grad adds", "central finite differences"]
    assert all(c.passed for c in right.values())
# ---- what the lecture cannot compare: children given as a set, ops without a rule

def _set_children(x, y):
    a = x - y
    b = y / x
    return (a / b - (b - a)) * x - y / a


def _reference_check(call):
    return next(c for c in call.checks if c.name.startswith("reference engine vs"))


def test_children_given_as_a_set_are_compared_in_argument_order():
    import learner_shapes
    call = check_engine_call(trace_engine_call(_set_children, (0.4, 1.3), engine=learner_shapes.SetChildrenValue))
    assert [verdict(c) for c in call.checks] == ["pass"] * 5, call.checks
    assert "not compared" not in _reference_check(call).detail


def test_a_set_whose_argument_order_is_lost_is_not_compared_never_failed():
    """At ``x == y``, ``x - y`` is 0 either way: its children are not compared, and nothing fails."""
    import learner_shapes
    call = check_engine_call(trace_engine_call(lambda x, y: (x - y) * x, (1.5, 1.5),
                                               engine=learner_shapes.SetChildrenValue))
    check = _reference_check(call)
    assert verdict(check) == "pass" and "argument order lost" in check.detail, check
    assert [r.status for r in call.alignment if r.label in ("v0_leaf", "v1_leaf")] == ["not compared"] * 2
    assert all(verdict(c) != "FAIL" for c in call.checks)
    assert "| arg ?: v" in render(call)  # (the report's graph: argument position not known)


def test_when_every_op_is_borrowed_from_the_engine_the_reference_check_is_not_known():
    """A class without ``_op``: the lecture has no rule for any node and borrows every contribution
    from the recording; comparing them with themselves would say pass: it says not known."""
    import learner_shapes
    call = trace_engine_call(lambda a, b: (a + b) * a, (3.0, 4.0), engine=learner_shapes.OplessEdgeValue)
    check = _reference_check(call)
    assert verdict(check) == "not known" and "borrowed from the engine's own recording" in check.detail, check
    assert {r.status for r in call.alignment if r.label != "v3_op"} == {"not compared"}


@pytest.mark.parametrize("cls, valid", [("Value", True), ("QueueValue", False)])
def test_the_visit_order_is_checked_under_capture_structure_too(cls, valid):
    """No values recorded: the lecture's order over the recorded graph is still known, and so is whether
    the engine's visits are reverse topological (the check was left out, while the report said it ran)."""
    import learner_passes

    call = trace_engine_call(learner_passes.squares, (1.0,), engine=getattr(learner_passes, cls), capture="structure")
    (order,) = [c for c in call.checks if c.name == "both visit orders are reverse topological"]
    assert order.passed is valid, order
    assert ("ran (visit 1) before its consumer v3_mul" in order.detail) is not valid


def test_a_training_step_inside_f_is_no_divergence_of_a_right_engine():
    """``f`` takes a step (``w.data -= lr * w.grad``) before its loss: the recording keeps ``w``'s first data,
    the loss is made of the new. The lecture borrows the engine's contributions there, saying why; the
    report's reference check was a FAIL ("first divergent node: v0_leaf") on a right engine."""
    def step_then_loss(x):
        w = Value(0.5)
        (w * 2.0).backward()
        w.data -= 0.1 * w.grad
        w.grad = 0.0
        return (w * x).tanh()

    call = trace_engine_call(step_then_loss, (0.7,), engine=Value)
    assert all(passed(call).values()), call.checks
    agree = next(c for c in call.checks if c.name.startswith("reference engine"))
    assert "inputs as recorded do not give its value" in agree.detail, agree.detail

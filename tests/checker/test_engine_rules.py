"""The micrograd checker at every magnitude: an op's contribution off by 2x or by 1e-4 (relative)
fails, off by 1e-8 passes (rtol 1e-5), for derivatives and inputs of about 1e-300, 1e155 and
1e300; the step scales with the input."""

import math
import re

import numpy as np
import pytest

from adtrace.checker import FAIL, PASS, SKIPPED
from adtrace.checker.engine_rules import check_engine
from learner_arrays import MeanTensor, NoTransposeTensor, Tensor
import learner_shapes
from restored import assert_restored
from value_classes import Value

FACTORS = {"2x": 2.0, "1e-4": 1 + 1e-4, "1e-8": 1 + 1e-8}
EXPECTED = {"2x": FAIL, "1e-4": FAIL, "1e-8": PASS}


def engine_off_by(factor):
    """The course's Value with exp's and mul's contributions multiplied by ``factor``."""

    class Off(Value):
        def __mul__(self, other):
            other = other if isinstance(other, Value) else Off(other)
            out = Off(self.data * other.data, (self, other), '*')

            def _backward():
                self.grad += other.data * out.grad * factor
                other.grad += self.data * out.grad * factor
            out._backward = _backward
            return out

        def exp(self):
            out = Off(math.exp(self.data), (self,), 'exp')

            def _backward():
                self.grad += out.data * out.grad * factor
            out._backward = _backward
            return out

    return Off


def statuses(report):
    return sorted({r.status for r in report.rows if r.test == "local"})


@pytest.mark.parametrize("error", FACTORS)
@pytest.mark.parametrize("x", [-690.0, 357.0, 690.0], ids=["1e-300", "1e155", "1e300"])
def test_derivatives_of_every_magnitude(x, error):
    report = check_engine(lambda a: a.exp(), x, cls=engine_off_by(FACTORS[error]))
    assert statuses(report) == [EXPECTED[error]], report.rows


@pytest.mark.parametrize("error", FACTORS)
@pytest.mark.parametrize("x", [1e-300, 1e155, 1e300])
def test_inputs_of_every_magnitude(x, error):
    """a * b with a of every size and b = 0.75: the derivatives 0.75 and a."""
    report = check_engine(lambda a, b: a * b, x, 0.75, cls=engine_off_by(FACTORS[error]))
    assert statuses(report) == [EXPECTED[error]], report.rows


def test_the_step_scales_with_the_input():
    """a * a at 3e5: a step of 1e-6 whatever the input loses the derivative in a * a's rounding
    (9e10 has a spacing of 1.5e-5) and a right rule FAILs."""
    from micrograd.engine import Value as MicroValue

    for x in (3e5, -3e5, 1e9):
        report = check_engine(lambda a: a * a, x, cls=MicroValue)
        assert report.passed and statuses(report) == [PASS], report.rows


def test_every_row_shows_the_tolerance_its_status_follows_from():
    for error in FACTORS:
        for row in check_engine(lambda a: a.exp(), 360.0, cls=engine_off_by(FACTORS[error])).rows:
            assert (row.difference <= row.tolerance) == (row.status == PASS)
            assert "rtol 1e-05" in row.reason and "tolerance" in row.reason


def test_the_derivative_is_along_the_step_actually_taken():
    """a + b at a = 1e8 + 0.3, b = -1e8: the sum 0.3 is small, so the capped step 1e-4 is kept, and
    a + 5e-5 rounds to a grid of 1.5e-8: the step taken is 1.3e-4 off the one asked for. Read as
    the derivative along 1, the right rule FAILed (relative difference 1.3e-4; 1.4e-3 at 3e9)."""
    from micrograd.engine import Value as MicroValue

    for a, b in [(1e8 + 0.3, -1e8), (3e9 + 0.7, -3e9)]:
        report = check_engine(lambda a, b: a + b, a, b, cls=MicroValue)
        assert report.passed and statuses(report) == [PASS], report.rows

    class AddOff(Value):
        def __mul__(self, other):  # (micrograd's shape: the class's own operations make its values)
            other = other if isinstance(other, Value) else AddOff(other)
            return AddOff(self.data * other.data, (self, other), '*')

        def __add__(self, other):
            out = AddOff(self.data + other.data, (self, other), '+')

            def _backward():
                self.grad += out.grad * (1 + 1e-4)
                other.grad += out.grad * (1 + 1e-4)
            out._backward = _backward
            return out

    wrong = check_engine(lambda a, b: a + b, 1e8 + 0.3, -1e8, cls=AddOff)
    assert statuses(wrong) == [FAIL], wrong.rows


def test_a_point_at_the_edge_of_the_domain_is_skipped_with_that_reason():
    """exp at 709.7827 (e^x overflows just past it): no derivative to compare with, so the node is
    skipped, saying why."""
    from value_classes import Value

    report = check_engine(lambda a: a.exp(), 709.7827, cls=Value)
    assert [(r.status, r.reason) for r in report.rows] == [
        ("skipped", "not finite next to the point (outside the op's domain)")], report.rows


def test_a_power_next_to_zero_is_checked():
    """a ** 0.5 at 1e-300: a trial step left of 0 is NaN (numpy's arithmetic; Python's is a complex
    number, which stopped the check with a TypeError); the step that stays right of it checks the rule."""
    from value_classes import Value

    report = check_engine(lambda a: a ** 0.5, 1e-300, cls=Value)
    assert statuses(report) == [PASS], report.rows


# ---- a tensor-valued engine: each array node by a random-direction inner product

def layer(w, x, b):
    return ((w @ x + b).tanh()).sum()


LAYER_ARGS = (np.array([[0.5, -1.0], [0.2, 0.4]]), np.array([[1.0, 2.0], [0.5, -1.0]]), np.array([0.1, -0.2]))


def test_a_right_tensor_engine_passes_every_array_node():
    """``@``, a row broadcast in ``+`` (summed back in the backward), ``tanh``, ``sum``: no false alarm."""
    report = check_engine(layer, *LAYER_ARGS, cls=Tensor)
    assert [(r.primitive, r.argnum, r.status) for r in report.rows] == [
        ("@", 0, PASS), ("@", 1, PASS), ("+", 0, PASS), ("+", 1, PASS), ("tanh", 0, PASS), ("sum", 0, PASS)]
    assert all(r.difference <= r.tolerance for r in report.rows) and report.passed


def test_a_matmul_backward_missing_a_transpose_is_named():
    report = check_engine(layer, *LAYER_ARGS, cls=NoTransposeTensor)
    first = report.first_failure
    assert (first.node, first.primitive, first.argnum, first.test) == ("v3_matmul", "@", 0, "local")
    assert first.site == f"tests/checker/test_engine_rules.py:{layer.__code__.co_firstlineno + 1}"
    assert "random direction" in first.reason and first.difference > first.tolerance
    assert [r.node for r in report.rows if r.status == FAIL] == ["v3_matmul"]


def test_an_op_without_a_rule_and_an_unknown_contribution_are_skipped_with_the_reason():
    """``mean`` has no rule here; every write copies ``grad + c`` (``.astype``: not read as
    ``grad + c``), so its contributions are not known: nothing to check, nothing wrongly failed."""
    report = check_engine(lambda x: (x * x).mean(), np.array([1.0, 2.0, 3.0]), cls=MeanTensor)
    assert [(r.primitive, r.argnum, r.test, r.status) for r in report.rows] == [
        (op, k, test, SKIPPED) for op, k in [("*", 0), ("*", 1), ("mean", 0)] for test in ("local", "accumulation")]
    assert [r.reason.split(" (")[0] for r in report.rows if r.test == "local"] == [
        "contribution not known", "contribution not known", "op 'mean' is not one adtrace knows"]
    assert all(r.reason.startswith("not known whether this write added to") for r in report.rows
               if r.test == "accumulation")
    assert report.first_failure is None
    np.testing.assert_allclose(report.gradient[0], [2 / 3, 4 / 3, 2.0])


def test_a_contribution_of_the_wrong_shape_fails_at_its_node():
    """``@`` into a 2x2 ``w`` from a vector ``x``: without the transpose the learner's ``g @ x`` is a
    number, which ``+=`` broadcasts over ``w.grad`` silently."""
    report = check_engine(lambda w, x: (w @ x).sum(), LAYER_ARGS[0], np.array([0.3, -0.4]), cls=NoTransposeTensor)
    first = report.first_failure
    assert (first.node, first.argnum) == ("v2_matmul", 0) and "shape ()" in first.reason, report.rows


def test_an_op_named_as_adtrace_s_but_computing_another_is_not_checked_by_its_rule():
    """``x.sum(axis=1)`` written ``'sum'`` (adtrace's ``sum`` adds every element): its row says so, and
    the nodes around it are checked (no false alarm)."""
    report = check_engine(lambda x: (x.sum(axis=1) * 2.0).sum(), np.arange(6.0).reshape(2, 3), cls=Tensor)
    rows = {(r.node, r.argnum): r for r in report.rows}
    assert rows[("v1_sum", 0)].status == SKIPPED and rows[("v1_sum", 0)].reason.startswith(
        "op 'sum' here is not the one adtrace knows (its value has shape (2,)")
    assert [rows[key].status for key in [("v3_mul", 0), ("v3_mul", 1), ("v4_sum", 0)]] == [PASS] * 3
    assert report.first_failure is None


def test_relu_of_an_array_passes_off_its_kink_and_is_skipped_at_it():
    report = check_engine(lambda x: x.relu().sum(), np.array([-1.0, 0.5, 2.0]), cls=Tensor)
    assert [(r.primitive, r.status) for r in report.rows] == [("ReLU", PASS), ("sum", PASS)], report.rows
    report = check_engine(lambda x: x.relu().sum(), np.array([-1.0, 0.0, 2.0]), cls=Tensor)
    relu = next(r for r in report.rows if r.primitive == "ReLU")
    assert relu.status == SKIPPED and "kink" in relu.reason and report.first_failure is None
# ---- learners' classes of every common shape (tests/learner_shapes.py), recorded with no configuration

def reused(a, b):
    """``a`` reaches the result twice: an assignment in ``__add__``'s backward loses ``mul``'s contribution."""
    return (a + b) * a


def declared(cls):
    from adtrace.recording.micrograd import declare

    return declare(cls, **learner_shapes.SCALAR_NAMES)


@pytest.mark.parametrize("good, bad", [(cls, learner_shapes.BUGGY[cls]) for cls in learner_shapes.SHAPES] + [
    (lambda: declared(learner_shapes.Scalar), lambda: declared(learner_shapes.BuggyScalar))],
    ids=[cls.__name__ for cls in learner_shapes.SHAPES] + ["declared Scalar"])
def test_each_learners_shape_is_recorded_reported_viewed_and_checked_and_its_bug_named(good, bad):
    from adtrace.checker.engine_rules import check_engine_call
    from adtrace.compare.traced_engine_call import trace_engine_call
    from adtrace.report import render
    from adtrace.view import call_page

    for engine, right in ((good, True), (bad, False)):
        engine = engine if isinstance(engine, type) else engine()
        cls = engine if isinstance(engine, type) else engine.cls
        before = dict(vars(cls))
        call = check_engine_call(trace_engine_call(reused, (3.0, 4.0), engine=engine))
        assert_restored(cls, before)
        checks = {c.name: c.passed for c in call.checks}
        assert checks["both visit orders are reverse topological"], call.checks  # every value visited once
        assert all(checks.values()) == right and checks["every write into .grad adds"] == right, call.checks
        assert call.gradient == ((10.0, 3.0) if right else (3.0, 3.0))
        assert [e.node for e in call.recording.of_kind("toposort")][:2] == ["v3_mul", "v2_add"]
        assert "every write into .grad adds" in render(call) and "v2_add" in call_page(call)
        rec = call.recording  # each event mapped to the statement of the class's own backward()
        assert rec.statement(rec.of_kind("vjp")[0]) in ("v._backward()", "v.backprop()",
                                                        "for parent, local in v.parents:")
        assert rec.statement(rec.of_kind("backward_start")[0]) in ("self.grad = 1.0", "self.grad = 1",
                                                                    "self.grad = grad", "self.g = 1.0")
        report = check_engine(reused, 3.0, 4.0, cls=engine)
        assert_restored(cls, before)
        first = report.first_failure
        if right:
            assert first is None and {r.status for r in report.rows} == {PASS} and len(report.rows) == 4
        else:
            assert (first.node, first.test, first.site) == (
                "v2_add", "accumulation", f"tests/checker/test_engine_rules.py:{reused.__code__.co_firstlineno + 2}")
# ---- each way of writing an accumulation (tests/learner_writes.py)

def signed(x):
    return (0.1 - (x * x - x)) + x


def test_every_form_of_accumulation_passes_with_no_false_alarm():
    """``grad -= c`` in ``__sub__`` was read as an assignment: "replaced 1 by 0" for ``x - x``."""
    from learner_writes import SignedValue

    for f, x in [(signed, 0.7), (lambda a: a - a, 2.0)]:
        report = check_engine(f, x, cls=SignedValue)
        assert report.passed and statuses(report) == [PASS], report.rows
        assert [r for r in report.rows if r.test == "accumulation"] == []


@pytest.mark.parametrize("cls, x", [("AssignValue", 3.0), ("AssignArray", [3.0, 2.0])])
def test_the_assignment_bug_is_named_on_numbers_and_arrays(cls, x):
    import learner_writes

    report = check_engine(lambda a: a * a - a, x, cls=getattr(learner_writes, cls))
    lost = [r for r in report.rows if r.test == "accumulation" and r.status == FAIL]
    assert [(r.node, r.argnum) for r in lost] == [("v1_mul", 0), ("v1_mul", 1)], report.rows  # over -1, then 3
    assert re.match(r"v0_leaf\.grad = \[?3\.?,? .*replaced \[?-1\.?,? .*instead of adding to it", lost[0].reason)
    assert [(r.node, r.argnum, r.status) for r in report.rows if r.test == "accumulation" and r.status != FAIL] == [
        ("v2_sub", 0, PASS), ("v2_sub", 1, PASS)]  # assignments over 0: nothing lost


def test_an_array_the_assignment_bug_dropped_is_named_on_one_line():
    """A 2-D ``.grad``: its rows side by side (``str(array)`` put a newline between them)."""
    import learner_writes

    report = check_engine(lambda a: a * a - a, np.array([[3.0, 2.0], [1.0, 4.0]]), cls=learner_writes.AssignArray)
    first = report.first_failure
    assert first.test == "accumulation" and "\n" not in first.reason, first.reason
    assert first.reason.startswith("v0_leaf.grad = [[3., 2.], [1., 4.]] replaced [[-1., -1.], [-1., -1.]]")


def test_every_form_on_arrays_is_an_accumulation():
    """In place and not: each contribution known exactly, so every node is checked (none skipped)."""
    from learner_writes import SignedArray

    report = check_engine(signed, [0.7, -0.3], cls=SignedArray)
    assert report.passed and statuses(report) == [PASS] and len(report.rows) == 8, report.rows
    assert [r for r in report.rows if r.test == "accumulation"] == [], report.rows


def test_a_write_adtrace_cannot_tell_is_not_known_never_a_pass():
    """numpy float32 data: x.grad is a float32 after the first write (0.0 + float32), and float32 is not
    tracked: the second ``+=`` added or replaced? Skipped, saying so; the other argument is checked."""
    import numpy as np
    from learner_writes import SignedValue

    report = check_engine(lambda a: a * a, np.float32(3.0), cls=SignedValue)
    (unknown,) = [r for r in report.rows if r.test == "accumulation"]
    assert (unknown.node, unknown.argnum, unknown.status) == ("v1_mul", 1, SKIPPED)
    assert unknown.reason.startswith("not known whether this write added to v0_leaf.grad or replaced it")
    assert report.failures == [] and [(r.argnum, r.status) for r in report.rows if r.test == "local"] == [
        (0, PASS), (1, SKIPPED)]


# ---- bugs of the whole pass (tests/learner_passes.py): every local rule right, the gradient wrong

@pytest.mark.parametrize("f, cls, test, node, gradient", [
    ("squares", "QueueValue", "reverse topological", "v1_mul", 2.0),
    ("backward_twice", "Value", "one pass", "v3_mul", 4.2),
    ("not_zeroed", "Value", "zero at start", "v0_leaf", 4.4),
])
def test_a_bug_of_the_whole_pass_is_the_first_failure_and_every_local_rule_still_passes(f, cls, test, node, gradient):
    import learner_passes

    report = check_engine(getattr(learner_passes, f), 1.0, cls=getattr(learner_passes, cls))
    first = report.first_failure
    assert (first.test, first.node, first.status, first.argnum) == (test, node, FAIL, None)
    assert first.primitive == {"v0_leaf": "(leaf)"}.get(node, "*")  # (no empty cell)
    if node == "v0_leaf":  # the argument check_engine made a leaf: an input, not this test's line that called it
        assert first.site == "(input)"
    assert statuses(report) == [PASS] and report.gradient[0] == pytest.approx(gradient)
    assert [r.test for r in report.failures] == [test]


def test_a_lost_contribution_is_still_named_beside_a_gradient_not_zeroed():
    """The ``=`` bug in ``+`` and ``x.grad`` left by a first pass: both rows, the pass's first."""
    from value_classes import BuggyValue

    def second_loss(x):
        first = x * 3.0
        first.backward()
        h = x * 2.0
        return h + h

    report = check_engine(second_loss, 3.0, cls=BuggyValue)
    assert [(r.test, r.node) for r in report.failures] == [("zero at start", "v0_leaf"), ("accumulation", "v5_add")]
def _set_children(x, y):
    a = x - y
    b = y / x
    c = a - b
    d = (c / a) - (b / y)
    e = d - x
    return (e / b) * (a - c) - (y / e)


def test_children_given_as_a_set_are_checked_in_argument_order():
    """``{self, other}`` for ``-`` and ``/``: each node's children put back in argument order (the
    set's order swaps them at random: 11 such nodes), every row checked and passing."""
    cls = learner_shapes.SetChildrenValue
    before = dict(vars(cls))
    report = check_engine(_set_children, 0.4, 1.3, cls=cls)
    assert_restored(cls, before)
    local = [r for r in report.rows if r.test == "local"]
    assert len(local) == 24 and {r.status for r in local} == {PASS}, [r.reason for r in local if r.status != PASS]


def test_a_set_whose_argument_order_is_not_decidable_is_not_known_never_a_fail():
    """At ``x == y`` both ``x - y`` and ``y - x`` give 0: that node's order is lost, said, not failed."""
    report = check_engine(lambda x, y: (x - y) * x, 1.5, 1.5, cls=learner_shapes.SetChildrenValue)
    rows = {(r.node, r.argnum): r for r in report.rows if r.test == "local"}
    assert [rows[("v2_sub", k)].status for k in (0, 1)] == [SKIPPED, SKIPPED]
    assert rows[("v2_sub", 0)].reason == "not known (children given as a set: argument order lost)"
    assert report.recording.nodes["v2_sub"].argnums == (None, None)
    assert report.first_failure is None and [rows[("v3_mul", k)].status for k in (0, 1)] == [PASS, PASS]


# ---- writes without .grad = (tests/learner_in_place.py)

def test_the_assignment_through_a_slice_is_not_known_never_a_pass():
    """``self.grad[:] = out.grad`` in ``+`` drops what was there: its writes are said not known
    (the contributions unseen before: the check passed them)."""
    from learner_in_place import SliceBugTensor

    report = check_engine(lambda x, y: (x * y + x).sum(), [0.5, -1.0, 2.0], [1.5, 0.25, -0.75], cls=SliceBugTensor)
    unknown = [(r.node, r.argnum) for r in report.rows if r.test == "accumulation" and r.status == SKIPPED]
    assert unknown == [("v3_add", 0), ("v3_add", 1)], report.rows
    assert all(r.status != PASS for r in report.rows if r.node == "v3_add"), report.rows


def test_a_grad_that_starts_as_none_is_accumulated_every_node_checked():
    """``if self.grad is None: self.grad = g.copy() else: self.grad = self.grad + g``: every write adds
    (the first to nothing), so every node is checked and none is skipped."""
    from learner_in_place import LazyTensor

    report = check_engine(lambda x, y: (x * y + x).sum(), [0.5, -1.0, 2.0], [1.5, 0.25, -0.75], cls=LazyTensor)
    assert report.passed and statuses(report) == [PASS] and len(report.rows) == 5, report.rows


def test_a_value_an_op_without_op_made_is_not_called_a_leaf():
    """The edge style with no ``_op`` (every op ''): a pass finding at a value an op made shows its op as
    recorded (''), as the graph does, not "(leaf)", which only a value made without children is."""
    from learner_shapes import OplessEdgeValue

    def twice(x):
        out = x * x
        out.backward()
        return out

    first = check_engine(twice, 1.5, cls=OplessEdgeValue).first_failure
    assert (first.test, first.node, first.primitive) == ("one pass", "v1_op", "")


@pytest.mark.parametrize("cls, x", [(Value, 2.0), (Tensor, np.array([2.0, -1.0]))], ids=["Value", "Tensor"])
def test_a_value_an_update_changed_is_not_checked_at_the_data_it_was_made_with(cls, x):
    """A training step inside ``f`` (``w.data -= lr * w.grad``, then the gradients zeroed): the loss after
    it is ``w * x`` at the new ``w``, and its ``_backward`` is right. adtrace keeps ``w``'s data as it was
    made: the derivative at that data is not the one used, so the row is not known (it was a FAIL:
    "times the op's derivative 0.5")."""
    def step_then_loss(x):
        w = cls(np.full_like(x, 0.5) if isinstance(x, np.ndarray) else 0.5)
        loss = w * x
        loss.backward()
        w.data = w.data - 0.1 * w.grad
        w.grad, x.grad = w.grad * 0, x.grad * 0
        return w * x

    report = check_engine(step_then_loss, x, cls=cls)
    assert report.failures == [], report.failures
    (moved,) = [r for r in report.rows if r.status == SKIPPED]
    assert (moved.node, moved.argnum) == ("v3_mul", 1) and moved.reason.startswith("not known: the op of its inputs")
    assert [(r.node, r.argnum, r.status) for r in report.rows if r.node == "v3_mul" and r.argnum == 0] == [
        ("v3_mul", 0, PASS)]


def test_a_function_returning_no_value_of_the_class_is_told_so_as_the_report_tells_it():
    """``f`` returned ``.data`` (a float): nothing to run ``backward()`` on; it said "'float' object has no
    attribute 'backward'", as if ``f`` had raised it. The class is restored all the same."""
    before = dict(vars(Value))
    with pytest.raises(TypeError, match=r"^data_of returned a float, not a Value: nothing to call backward\(\) on$"):
        check_engine(data_of, 2.0, cls=Value)
    assert_restored(Value, before)


def data_of(x):
    return (x * x).data

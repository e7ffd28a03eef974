"""Why a gradient is NaN or infinite: the first non-finite value of the backward pass and its
cause, on a minimal program each, and the three composites of issue 27."""

import autograd.numpy as np
import pytest

from adtrace.explain import explain


def causes_of(f, x, selector):
    (explanation,) = explain(f, x, wrt=[selector])
    assert explanation.verdict == "nonfinite"
    return explanation.causes


def test_the_where_trap_names_the_unselected_branch_not_the_where():
    def f(x):
        safe = np.where(x > 0, np.log(x), 0.0)
        return np.sum(safe)
    backward, forward = causes_of(f, np.array([1.0, 0.0]), "x[1]")
    assert (backward.primitive, backward.reason, backward.forward) == ("log", "where-unselected-branch", False)
    assert backward.values["outgrad"] == 0.0 and backward.values["input[0]"] == 0.0
    assert np.isnan(backward.values["ingrad"])
    assert "log-of-zero" in backward.detail
    assert backward.line.endswith(f":{f.__code__.co_firstlineno + 1}")
    assert (forward.primitive, forward.reason, forward.forward) == ("log", "log-of-zero", True)


def test_the_double_where_fix_has_nothing_to_explain():
    def f(x):
        safe_x = np.where(x > 0, x, 1.0)
        return np.sum(np.where(x > 0, np.log(safe_x), 0.0))
    (explanation,) = explain(f, np.array([1.0, 0.0]), wrt=["x[1]"])
    assert explanation.verdict == "zero"
    assert [c.reason for c in explanation.causes] == ["where-unselected-branch"]


@pytest.mark.parametrize("f, x, primitive, reason", [
    (lambda x: np.sqrt(x), np.float64(0.0), "sqrt", "sqrt-at-zero"),
    (lambda x: np.log(x) * 0.0 + x, np.float64(0.0), "log", "log-of-zero"),
    (lambda x: 1.0 / x * 0.0 + x, np.float64(0.0), "divide", "division-by-zero"),
    (lambda x: x ** 0.5, np.float64(0.0), "power", "power-at-zero"),
    (lambda x: np.exp(x) * 0.0 + x, 1000.0, "exp", "overflow"),
])
def test_each_boundary(f, x, primitive, reason):
    backward = causes_of(f, x, "x")[0]
    assert (backward.primitive, backward.reason) == (primitive, reason)


def test_norm_squared_at_zero():
    (backward,) = causes_of(lambda x: np.linalg.norm(x) ** 2, np.zeros(3), "x[0]")
    assert (backward.primitive, backward.reason) == ("norm", "norm-at-zero")
    assert backward.values["outgrad"] == 0.0  # d(n**2)/dn = 2n = 0: the VJP's 0 * x / 0


def test_the_first_origin_not_the_last_symptom():
    """The NaN of sqrt at 0 flows through tanh and exp before reaching x: those VJPs merely carry it."""
    def f(x):
        return np.exp(np.tanh(np.sqrt(x)))
    causes = causes_of(f, np.float64(0.0), "x")
    assert [c.primitive for c in causes] == ["sqrt"]


def test_a_softmax_whose_log_of_zero_is_masked_by_where():
    def loss(z):
        p = np.exp(z) / np.sum(np.exp(z))
        logp = np.where(p > 0, np.log(p), 0.0)  # p underflows to 0 for the last class
        return -np.sum(p * logp)
    backward, forward = causes_of(loss, np.array([0.0, 1.0, -800.0]), "z[2]")
    assert (backward.primitive, backward.reason) == ("log", "where-unselected-branch")
    assert (forward.primitive, forward.reason, forward.forward) == ("log", "log-of-zero", True)


def test_a_nan_already_in_the_forward_value_is_traced_to_its_first_node():
    def f(x):
        y = np.sqrt(x - 2.0)  # x - 2 < 0: NaN forward
        return np.sin(y) * 3.0
    causes = causes_of(f, 1.0, "x")
    assert [(c.primitive, c.forward) for c in causes][-1] == ("sqrt", True)
    assert causes[-1].values == {"input[0]": -1.0}


def test_every_origin_named_the_one_the_backward_pass_met_first_first():
    import adtrace
    from autograd import grad
    from adtrace.explain.explainer import explain_recording

    def f(x):
        return np.sqrt(x) * 2.0 + np.log(x)
    with np.errstate(all="ignore"), adtrace.record(capture="full", sites=True, calls=True) as rec:
        grad(f)(np.float64(0.0))
    order = [label for label in rec.visit_order(rec.user_query()) if label.endswith(("_sqrt", "_log"))]
    (e,) = explain_recording(rec)
    backward = [c for c in e.causes if not c.forward]
    assert [c.node for c in backward] == order and len(order) == 2  # sqrt(0) and log(0): two origins


def test_each_element_gets_the_origin_on_its_own_paths():
    def f(x):
        return np.sqrt(x[0]) + np.log(x[1])
    first, second = explain(f, np.array([0.0, 0.0]), wrt=["x[0]", "x[1]"])
    assert [c.primitive for c in first.causes if not c.forward] == ["sqrt"]
    assert [c.primitive for c in second.causes if not c.forward] == ["log"]


def program_of_the_lead(x):
    h = np.maximum(x * 2.0, 0.0)
    y = np.where(x > 0, np.sqrt(x), 0.0)
    return np.sum(h) + np.sum(y)


def test_causes_are_read_at_the_explained_element():
    """x[2] = 0: sqrt's derivative is inf there (0 * inf in the unselected branch), its value sqrt(0) = 0
    finite; x[1] = -2: sqrt(-2) is NaN in the forward pass already. Each is read at its own element."""
    at_minus_two, at_zero = explain(program_of_the_lead, np.array([1.0, -2.0, 0.0]), wrt=["x[1]", "x[2]"])
    (backward,) = at_zero.causes  # no forward origin: nothing on x[2]'s paths was non-finite forward
    assert (backward.primitive, backward.reason) == ("sqrt", "where-unselected-branch")
    assert backward.values["input[0]"] == 0.0 and backward.values["derivative"] == np.inf
    assert "sqrt-at-zero" in backward.detail and "0 * a non-finite derivative" in backward.detail
    assert "the branch v4_where (y) did not select" in backward.detail  # the where's value is the user's y
    backward, forward = at_minus_two.causes
    assert backward.values["input[0]"] == -2.0 and "sqrt-of-negative" in backward.detail
    assert (forward.primitive, forward.reason, forward.values) == ("sqrt", "sqrt-of-negative", {"input[0]": -2.0})


@pytest.mark.parametrize("f, x, reason", [
    (lambda x: np.sin(np.log(x)), -1.0, "log-of-negative"),
    (lambda x: np.sin(np.sqrt(x)), -1.0, "sqrt-of-negative"),
    (lambda x: np.sin(x ** (1.0 / 3.0)), -8.0, "power-of-negative"),
    (lambda x: np.sin((x - 1.0) / (x - 1.0)), 1.0, "division-by-zero"),
    (lambda x: np.sin(np.arcsin(x)), 2.0, "domain-error"),
    (lambda x: np.exp(x) * 2.0, 1000.0, "overflow"),
])
def test_each_forward_origin_says_what_happened(f, x, reason):
    forward = [c for c in causes_of(f, np.float64(x), "x") if c.forward]
    assert [c.reason for c in forward] == [reason]


def test_a_nan_made_of_infinities_names_both_the_overflow_and_the_subtraction():
    causes = causes_of(lambda x: np.sin(np.exp(x) - np.exp(2.0 * x)), np.float64(1000.0), "x")
    assert [(c.primitive, c.reason) for c in causes if c.forward] == [("exp", "overflow"),
                                                                      ("subtract", "inf-minus-inf")]


def test_an_infinite_derivative_at_a_finite_value_is_no_overflow():
    (backward, *_) = causes_of(lambda x: np.arcsin(x), np.float64(1.0), "x")
    assert backward.reason == "infinite-derivative"


def test_a_nan_in_the_input_itself_is_its_own_forward_origin():
    causes = causes_of(lambda x: np.sum(np.sin(x) * 2.0), np.array([1.0, np.nan]), "x[1]")
    forward = [c for c in causes if c.forward]
    assert [(c.node, c.reason) for c in forward] == [("v0_root", "nonfinite-input")]
    assert np.isnan(forward[0].values["input"]) and "element 1" in forward[0].detail


def test_the_where_named_is_the_nearest_one_downstream():
    def f(x):
        safe = np.where(x > 0, np.log(x), 0.0)  # v1_log, v2_where: the trap
        for _ in range(8):
            safe = np.sin(safe)
        return np.sum(np.where(safe > 5.0, safe, 1.0))  # v11_where, after it ("v11" < "v2" as text)
    (backward, _) = causes_of(f, np.array([1.0, 0.0]), "x[1]")
    assert "the branch v2_where (safe) did not select" in backward.detail


def test_the_where_trap_is_worded_alike_with_or_without_the_calls():
    """A plain record() (the report's) cannot re-evaluate the derivative; explain can: same words, and
    the derivative in the values when known."""
    import adtrace
    from autograd import grad
    x = np.array([1.0, -2.0, 0.0])
    details = []
    for kwargs in ({}, {"capture": "full", "sites": True, "calls": True}):
        with np.errstate(all="ignore"), adtrace.record(**kwargs) as rec:
            grad(program_of_the_lead)(x)
        (e,) = rec.explain(wrt=["x[2]"])
        details.append(e.causes[0].detail.split("did not select")[1])  # (the where's name needs sites=True)
    assert details[0] == details[1] and "0 * a non-finite derivative" in details[0]

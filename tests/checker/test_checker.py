"""The per-node checker names the wrong node, its argument and its line; no false alarms."""

import inspect
import warnings

import autograd.numpy as anp
import numpy as np
import pytest
from autograd import grad
from autograd.extend import defvjp, primitive
from autograd.misc.fixed_points import fixed_point

import adtrace
from adtrace.checker import FAIL, PASS, SKIPPED
from readme import stated
from primitives import cube
from reference_corpus import ALL_CASES


def line_of(fragment, function):
    """The line number of the first source line of ``function`` containing ``fragment``."""
    lines, start = inspect.getsourcelines(function)
    return start + next(i for i, line in enumerate(lines) if fragment in line)


def site_line(row):
    return int(row.site.rsplit(":", 1)[1])


# -------------------- wrong rules inside a composite --------------------


@primitive
def wrong_sign_sin(x):
    return np.sin(x)


defvjp(wrong_sign_sin, lambda ans, x: lambda g: -g * np.cos(x))


def composite_sign(x):
    y = x * 2.0
    z = wrong_sign_sin(y)
    return anp.sum(z * x)


def test_wrong_sign_is_named_with_argnum_and_line():
    report = adtrace.check(composite_sign, np.array([0.3, 0.7]))
    first = report.first_failure
    assert (first.node, first.primitive, first.argnum, first.test) == ("v2_wrong_sign_sin", "wrong_sign_sin", 0, "vjp")
    assert site_line(first) == line_of("wrong_sign_sin(y)", composite_sign)
    assert first.site.startswith("tests/checker/test_checker.py:") or first.site.startswith("test_checker")
    assert np.isclose(first.analytic, -first.numeric)  # exactly the sign
    assert [r.node for r in report.failures] == ["v2_wrong_sign_sin"]


@primitive
def scaled_product(a, b):
    return a * b**2


# the two argument rules swapped: d/da is b**2 and d/db is 2ab
defvjp(scaled_product, lambda ans, a, b: lambda g: g * 2 * a * b, lambda ans, a, b: lambda g: g * b**2)


def composite_swapped(x):
    return anp.sum(anp.tanh(scaled_product(x, x + 1.0)))


def test_swapped_argument_rules_are_named_per_argnum():
    report = adtrace.check(composite_swapped, np.array([0.5, -0.25]))
    failing = {(r.node, r.argnum) for r in report.failures}
    assert failing == {("v2_scaled_product", 0), ("v2_scaled_product", 1)}
    assert report.first_failure.argnum == 0
    assert site_line(report.first_failure) == line_of("scaled_product(x, x + 1.0)", composite_swapped)


@primitive
def add_bias(x, b):
    return x + b


# missing unbroadcast: the rule for the bias hands back a (3, 4) cotangent for a (4,) bias
defvjp(add_bias, lambda ans, x, b: lambda g: g, lambda ans, x, b: lambda g: g)

W = np.arange(12.0).reshape(3, 4) / 10.0


def composite_bias(b):
    return anp.sum(anp.tanh(add_bias(W, b)))


def test_missing_unbroadcast_is_a_vspace_failure():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = adtrace.check(composite_bias, np.array([0.1, 0.2, 0.3, 0.4]))
    first = report.first_failure
    assert (first.node, first.argnum, first.test) == ("v1_add_bias", 1, "vspace")
    assert "shape (3, 4)" in first.reason and "shape (4,)" in first.reason
    assert site_line(first) == line_of("add_bias(W, b)", composite_bias)
    recorded = [r for r in report.rows if r.test == "vspace" and "contribution to v0_root" in r.reason]
    assert recorded, "the recorded contribution of the wrong shape is flagged too"


@primitive
def square_off_above_one(x):
    return x * x


# right below 1, off by a factor 1.5 above: only some inputs show it
defvjp(square_off_above_one, lambda ans, x: lambda g: g * 2 * x * np.where(np.abs(x) > 1.0, 1.5, 1.0))


def composite_factor(x):
    return anp.sum(anp.sin(square_off_above_one(x)))


def test_a_factor_that_shows_only_at_some_inputs():
    assert adtrace.check(composite_factor, np.array([0.2, 0.5])).passed
    report = adtrace.check(composite_factor, np.array([0.2, 1.5]))
    first = report.first_failure
    assert (first.node, first.argnum, first.status) == ("v1_square_off_above_one", 0, FAIL)
    assert site_line(first) == line_of("square_off_above_one(x)", composite_factor)


# -------------------- no false alarms --------------------


@pytest.mark.parametrize("case", ALL_CASES, ids=[c.name for c in ALL_CASES])
def test_no_false_alarm_on_the_corpora(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = adtrace.check(case.fun, case.x)
    assert report.passed, [r for r in report.failures] + [report.nonfinite]
    assert all(r.status in (PASS, SKIPPED) for r in report.rows)
    assert all(r.reason for r in report.rows if r.status == SKIPPED)


def test_the_readme_states_how_many_cases_are_checked():
    assert stated(r"no false alarm on the (\d+) cases of the test corpora") == len(ALL_CASES)


def test_non_differentiable_points_are_skipped_with_a_reason():
    report = adtrace.check(lambda x: anp.sum(anp.abs(x) + anp.maximum(x, 1.0)), np.array([0.0, 1.0, 2.0]))
    skipped = {r.primitive: r.reason for r in report.rows if r.status == SKIPPED}
    assert set(skipped) == {"absolute", "maximum"}
    assert "output element (0,)" in skipped["absolute"] and "output element (1,)" in skipped["maximum"]
    assert report.passed


# -------------------- where a NaN is born --------------------


def nan_gradient(x):
    d = x - x
    return anp.sqrt(d) + x


def test_nan_origin_names_the_first_non_finite_node_and_line():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = adtrace.check(nan_gradient, 2.0)
    assert np.isnan(report.gradient)
    origin = report.nonfinite
    assert (origin.node, origin.primitive, origin.argnum) == ("v2_sqrt", "sqrt", 0)
    assert site_line(origin) == line_of("anp.sqrt(d)", nan_gradient)
    assert report.first_failure is origin


def test_nan_origin_is_read_from_the_users_pass_not_a_nested_one():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = adtrace.check(lambda x: anp.sqrt(x - x) + cube(x), 2.0)
    assert len(report.recording.queries) == 2
    assert (report.nonfinite.node, report.nonfinite.primitive) == ("v2_sqrt", "sqrt")


def iterative_sqrt(a):
    """autograd's examples/fixed_points.py: a solve at tol 1e-4, its VJP a solve at the same tol."""
    return fixed_point(lambda a: lambda x: x - 0.05 * (x**2 - a), a, 10.0, lambda x, y: anp.abs(x - y), 1e-4)


def test_rtol_is_the_tolerance_a_user_states_for_a_rule_approximate_by_design():
    strict = adtrace.check(iterative_sqrt, 2.0)
    assert strict.first_failure.primitive == "fixed_point"
    assert strict.first_failure.reason.startswith(
        "vjp differs from central differences: relative difference 2.8e-03 beyond tolerance 1.0e-05 (rtol 1e-05")
    assert adtrace.check(iterative_sqrt, 2.0, rtol=1e-2).passed


def test_non_finite_forward_value_is_named():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = adtrace.check(lambda x: anp.log(x - 2.0) * x, 1.0)
    assert (report.nonfinite.node, report.nonfinite.reason) == ("v2_log", "its forward value is not finite")


# -------------------- bounding the cost --------------------


def chain(x):
    for _ in range(40):
        x = anp.sin(x) * 1.01
    return x


def test_max_nodes_and_sample_bound_the_work():
    everything = adtrace.check(chain, 0.3)
    assert {r.node for r in everything.rows} and everything.not_checked == 0
    first = adtrace.check(chain, 0.3, max_nodes=5)
    assert len({r.node for r in first.rows}) == 5 and first.not_checked == 75
    sampled = adtrace.check(chain, 0.3, sample=7)
    assert len({r.node for r in sampled.rows}) == 7 and sampled.not_checked == 73
    assert sampled.rows == adtrace.check(chain, 0.3, sample=7).rows  # a fixed sample


def test_call_sites_are_kept_only_when_asked():
    with adtrace.record() as rec:
        grad(chain)(0.3)
    assert rec.calls == {}


S = np.array([[4.0, 1.0], [1.0, 3.0]])


@pytest.mark.parametrize("f, x", [
    (anp.sin, 1 + 1j),
    (lambda z: anp.abs(z) ** 2, np.array([1 + 2j, 0.5 - 1j])),
    (lambda x: anp.real(anp.exp(1j * x)), 0.5),
    (lambda X: anp.sum(anp.linalg.cholesky(0.5 * (X + X.T))), S),
    (lambda x: 1.0 / x, 2.5e-4),
    (anp.sin, 1e6),
    (lambda x: anp.sum(anp.sin(x)), np.array([1000.0, 2.0], dtype=np.float32)),
    (lambda x: anp.sum(anp.exp(x)), np.array([50.0, 700.0])),
    (anp.sum, np.array([])),
], ids=["complex_sin", "complex_abs2", "complex_intermediate", "cholesky", "tiny", "huge", "float32", "exp_large",
        "empty"])
def test_no_false_alarm_at_hard_points(f, x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = adtrace.check(f, x)
    assert report.passed, report.failures


def test_a_matrix_symmetric_to_rounding_is_moved_symmetrically():
    """A covariance off by an ulp from symmetric (numpy 1.x computes gaussian_process's so) is as
    symmetric as rules such as cholesky's assume: no false alarm. One visibly asymmetric is not,
    and cholesky's rule (reading the lower triangle, its VJP symmetric) fails there as before."""
    rounded = S.copy()
    rounded[0, 1] = np.nextafter(rounded[0, 1], 2.0)
    asymmetric = S.copy()
    asymmetric[0, 1] += 1e-6
    f = lambda X: anp.sum(anp.linalg.cholesky(X))
    assert not np.array_equal(rounded, rounded.T)
    assert adtrace.check(f, rounded).passed
    failed = adtrace.check(f, asymmetric)
    assert not failed.passed and failed.first_failure.primitive == "cholesky"


@primitive
def jointly_wrong(a, b):
    return a * b


def _jointly_wrong_rule(argnums, ans, args, kwargs):
    a, b = args
    if argnums == (0, 1):
        return lambda g: (g * a, g * b)  # swapped only when both are asked for, as in the recorded run
    return (lambda g: (g * b,)) if argnums == (0,) else (lambda g: (g * a,))


from autograd.extend import defvjp_argnums  # noqa: E402

defvjp_argnums(jointly_wrong, _jointly_wrong_rule)


def test_a_rule_wrong_only_for_the_joint_call_is_caught():
    report = adtrace.check(lambda x: jointly_wrong(x, anp.sin(x)), 0.7)
    assert report.first_failure.node == "v2_jointly_wrong"


def test_a_wrong_float32_rule_is_not_mistaken_for_a_kink():
    @primitive
    def bad_sin(x):
        return np.sin(x)

    defvjp(bad_sin, lambda ans, x: lambda g: -g * np.cos(x))
    report = adtrace.check(lambda x: anp.sum(bad_sin(x)), np.array([1000.0, 2.0], dtype=np.float32))
    assert report.first_failure.node == "v1_bad_sin" and report.first_failure.status == FAIL


def test_a_call_with_no_node_tested_is_not_a_pass():
    """check_call's summary line: nothing tested is 'skipped' with the reason, never 'pass'."""
    from adtrace.checker import check_call
    from adtrace.compare.traced_call import trace_call

    def first(t):
        return t[0]  # one node, container_take, whose input is a tuple: skipped

    verdict = check_call(trace_call(first, ((1.5, 2.0),)), first).checks[-1]
    assert (verdict.name, verdict.skipped) == ("per-node local rules", True) and "no node" in verdict.detail

    def square(x):
        return x * x

    verdict = check_call(trace_call(square, (3.0,)), square).checks[-1]
    assert (verdict.passed, verdict.skipped, verdict.detail) == (True, False, "1 node tested, all pass")


def test_a_call_with_a_failing_node_fails_and_names_it():
    """check_call's summary line: a wrong rule makes it fail, naming the first failing node."""
    from adtrace.checker import check_call
    from adtrace.compare.traced_call import trace_call

    verdict = check_call(trace_call(composite_sign, (np.array([0.3, 0.7]),)), composite_sign).checks[-1]
    assert (verdict.name, verdict.passed, verdict.skipped) == ("per-node local rules", False, False)
    assert verdict.detail == "first failing node: v2_wrong_sign_sin"


def test_rows_are_in_the_order_the_nodes_were_created():
    """The flags read from the recorded pass sit with their node's other rows, in creation order
    (as the report's table lists them), not after every node's local checks."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = adtrace.check(composite_bias_inside, np.array([0.1, 0.2, 0.3, 0.4]))
    created = list(report.recording.nodes)
    positions = [created.index(r.node) for r in report.rows]
    assert positions == sorted(positions), [(r.node, r.test) for r in report.rows]
    assert len({r.node for r in report.rows}) > 2 and any(r.reason.startswith("contribution to") for r in report.rows)


# -------------------- the tolerance and the step, by what they mean --------------------


@primitive
def exp_off_by_2e_4(x):
    return np.exp(x)


defvjp(exp_off_by_2e_4, lambda ans, x: lambda g: g * ans * (1 + 2e-4))


@primitive
def exp_off_by_1e_8(x):
    return np.exp(x)


defvjp(exp_off_by_1e_8, lambda ans, x: lambda g: g * ans * (1 + 1e-8))


@pytest.mark.parametrize("x", [0.5, -20.0, 20.0, np.array([0.1, 3.0, -2.0])], ids=["0.5", "-20", "20", "vector"])
def test_float64_rules_are_held_to_rtol_1e_5_at_any_magnitude(x):
    """A rule 2e-4 too large fails whatever its derivative's size (e^-20 included); one off by
    1e-8 (rounding) passes."""
    wrong = adtrace.check(lambda x: anp.sum(exp_off_by_2e_4(x)), x)
    assert [(r.primitive, r.test) for r in wrong.failures] == [("exp_off_by_2e_4", "vjp")]
    assert "relative difference 2.0e-04" in wrong.failures[0].reason
    assert adtrace.check(lambda x: anp.sum(exp_off_by_1e_8(x)), x).passed


def test_central_differences_are_accurate_to_rounding():
    """The step (about 1e-6 times the input's size, Richardson-extrapolated) gives <u, J v> to rounding."""
    for f, x in [(anp.sin, 0.3), (anp.exp, 2.0), (lambda x: x**3, 1.5), (anp.tanh, np.linspace(-2, 2, 7))]:
        for row in adtrace.check(lambda x: anp.sum(f(x)), x).rows:
            assert row.status == PASS and abs(row.analytic - row.numeric) <= 1e-8 * abs(row.analytic), (f, x, row)


def test_a_kink_within_the_step_is_skipped_and_one_past_it_is_not():
    """maximum(x, 0.5) at 0.5 + 1e-8 beside an element 1.0 is within the step (about 1e-6, set by the
    largest element) of its kink: the one-sided differences disagree and the node is skipped; abs
    at 1e-8 beside 1.0 is stepped relative to its smaller element too (1e-13) and passes, as at
    2e-5 and alone: it has a derivative there."""
    kinked = [r for r in adtrace.check(lambda x: anp.sum(anp.maximum(x, 0.5) * 1.5), np.array([0.5 + 1e-8, 1.0])).rows
              if r.primitive == "maximum"]
    assert [r.status for r in kinked] == [SKIPPED] and "not differentiable here" in kinked[0].reason
    f = lambda x: anp.sum(anp.abs(x) * 1.5)
    near = [r for r in adtrace.check(f, np.array([1e-8, 1.0])).rows if r.primitive == "absolute"]
    assert [(r.test, r.status) for r in near] == [("vjp", PASS), ("jvp", PASS)]
    past = [r for r in adtrace.check(f, np.array([2e-5, 1.0])).rows if r.primitive == "absolute"]
    assert [(r.test, r.status) for r in past] == [("vjp", PASS), ("jvp", PASS)]
    alone = [r for r in adtrace.check(f, 1e-8).rows if r.primitive == "absolute"]
    assert [(r.test, r.status) for r in alone] == [("vjp", PASS), ("jvp", PASS)]


def test_a_point_at_the_edge_of_the_domain_is_skipped_with_that_reason():
    """sqrt at 0: one side of the point is outside the primitive's domain (nan), so there is no
    central difference to compare with; the row says why, the other nodes are still tested."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        report = adtrace.check(lambda x: anp.sum(anp.sqrt(x) * 2.0), np.array([0.0, 1.0]))
    rows = {r.primitive: r for r in report.rows}
    assert rows["sqrt"].status == SKIPPED
    assert rows["sqrt"].reason == "not finite next to the point (outside the primitive's domain)"
    assert rows["multiply"].status == PASS


def composite_bias_inside(b):
    return anp.sum(anp.tanh(add_bias(W, b * 2.0)))


def test_a_recorded_contribution_of_the_wrong_shape_to_an_inner_node_is_flagged():
    """The recorded pass itself shows the missing unbroadcast: add_bias hands the (3, 4) cotangent
    to b * 2.0, a (4,) node (not only to the root); the flag names the node, the parent, both
    shapes and the user's line."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = adtrace.check(composite_bias_inside, np.array([0.1, 0.2, 0.3, 0.4]))
    flags = [r for r in report.rows if r.test == "vspace" and r.reason.startswith("contribution to")]
    inner = [r for r in flags if "contribution to v1_multiply" in r.reason]
    assert len(inner) == 1, flags
    assert (inner[0].node, inner[0].argnum, inner[0].status) == ("v2_add_bias", 1, FAIL)
    assert inner[0].reason == "contribution to v1_multiply is shape (3, 4) float64, the parent is shape (4,) float64"
    assert site_line(inner[0]) == line_of("add_bias(W, b * 2.0)", composite_bias_inside)


def test_container_values_raise_no_flag():
    """A node whose value is a container (split's list of arrays of different shapes) is neither a
    vector space mismatch nor a non-finite value."""
    def f(x):
        parts = anp.split(x, [1])
        return anp.sum(anp.tanh(parts[1] * 2.0)) + parts[0][0]

    report = adtrace.check(f, np.array([0.1, 0.2, 0.3, 0.4]))
    assert report.passed and not [r for r in report.rows if r.test in ("vspace", "nonfinite")], report.rows


def test_values_numpy_cannot_test_for_finiteness_raise_no_flag():
    """A node whose value is of a user's own vector space (a Pair: numpy cannot say whether it is
    finite) is not taken for a non-finite value."""
    from autograd.extend import Box
    from user_vspace import Pair as UserPair, PairSpace

    class Pair(UserPair):  # (its own type: boxed here only)
        pass

    class PairBox(Box):
        pass

    PairSpace.register(Pair)
    PairBox.register(Pair)

    @primitive
    def make_pair(x):
        return Pair(x, 2.0 * x)

    @primitive
    def pair_sum(p):
        return p.a + p.b

    defvjp(make_pair, lambda ans, x: lambda g: g.a + 2.0 * g.b)
    defvjp(pair_sum, lambda ans, p: lambda g: Pair(g, g))
    report = adtrace.check(lambda x: pair_sum(make_pair(x)) * x, 1.5)
    assert not [r for r in report.rows if r.test == "nonfinite"], report.rows
    assert report.passed


def test_check_takes_root_the_former_name_of_relative_to_with_a_warning(tmp_path):
    with pytest.warns(DeprecationWarning, match="relative_to"):
        report = adtrace.check(lambda x: anp.sin(x) * x, 0.5, root=str(tmp_path))
    assert report.passed


def test_a_wrong_rule_both_engines_share_is_checked_node_by_node_when_finite_differences_fail():
    """Issue 29: a custom primitive's wrong VJP, borrowed by the reference engine: the engines agree,
    finite differences fail; the per-node checker is run then (as ``adtrace report`` does) and names it."""
    from adtrace.checker import check_if_rule_suspected
    from adtrace.compare.checks import verdict
    from adtrace.compare.traced_call import trace_call
    from view_cases import with_a_wrong_rule, wrong_rule_call

    call = wrong_rule_call(check_nodes=False)
    assert {c.name: verdict(c) for c in call.checks} == {
        "reference engine vs autograd, per node": "pass", "both visit orders are reverse topological": "pass",
        "central finite differences": "FAIL"}
    assert check_if_rule_suspected(call, with_a_wrong_rule, limit=3).node_checks is None  # 4 nodes: over the limit
    checked = check_if_rule_suspected(call, with_a_wrong_rule)
    first = checked.node_checks.first_failure
    assert (first.node, first.argnum) == ("v1_double_wrongly", 0)
    assert checked.checks[-1].name == "per-node local rules" and not checked.checks[-1].passed

    def right(x):
        return anp.sin(2 * x) * x

    assert check_if_rule_suspected(trace_call(right, (0.7,)), right).node_checks is None  # nothing fails

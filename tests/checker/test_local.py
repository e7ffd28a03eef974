"""One node's local rules at every magnitude: a rule off by 2x or by 1e-4 (relative) fails, one
off by 1e-8 passes at the default rtol of double precision (1e-5), for derivatives and inputs of
about 1e-300, 1e155 and 1e300; the tolerance follows the dtype (float16, float32)."""

import numpy as np
import pytest
from autograd.extend import defjvp, defvjp, primitive

import adtrace
from adtrace.checker import FAIL, PASS

FACTORS = {"2x": 2.0, "1e-4": 1 + 1e-4, "1e-8": 1 + 1e-8}
EXPECTED = {"2x": FAIL, "1e-4": FAIL, "1e-8": PASS}


def exp_off_by(factor):
    """exp with its VJP and JVP rules multiplied by ``factor``."""

    @primitive
    def exp(x):
        return np.exp(x)

    defvjp(exp, lambda ans, x: lambda g: g * ans * factor)
    defjvp(exp, lambda g, ans, x: g * ans * factor)
    return exp


def wave_off_by(factor):
    """``s * sin(x / s)``: inputs and outputs of the size of ``s``, a derivative of about 1."""

    @primitive
    def wave(x, s):
        return s * np.sin(x / s)

    defvjp(wave, lambda ans, x, s: lambda g: g * np.cos(x / s) * factor)
    defjvp(wave, lambda g, ans, x, s: g * np.cos(x / s) * factor)
    return wave


def wave_like(f, df, factor):
    """``f`` with its VJP and JVP rules (the derivative ``df``) multiplied by ``factor``."""

    @primitive
    def rule(x):
        return f(x)

    defvjp(rule, lambda ans, x: lambda g: g * df(x) * factor)
    defjvp(rule, lambda g, ans, x: g * df(x) * factor)
    return rule


def statuses(report):
    return sorted({(r.test, r.status) for r in report.rows})


@pytest.mark.parametrize("error", FACTORS)
@pytest.mark.parametrize("x", [-690.0, 300.0, 357.0, 360.0, 690.0], ids=["1e-300", "1e130", "1e155", "1e156", "1e300"])
def test_derivatives_of_every_magnitude(x, error):
    """exp at -690 .. 690: derivatives from 1e-300 to 1e300 (a 2x-wrong exp passed at 360 when the
    tolerance's scale overflowed to inf)."""
    report = adtrace.check(exp_off_by(FACTORS[error]), np.array([x, x + 0.5]))
    assert statuses(report) == [("jvp", EXPECTED[error]), ("vjp", EXPECTED[error])], report.rows


@pytest.mark.parametrize("error", FACTORS)
@pytest.mark.parametrize("s", [1e-300, 1e155, 1e300])
def test_inputs_of_every_magnitude(s, error):
    wave = wave_off_by(FACTORS[error])
    report = adtrace.check(lambda x: wave(x, s), np.array([0.3 * s, -1.1 * s]))
    assert statuses(report) == [("jvp", EXPECTED[error]), ("vjp", EXPECTED[error])], report.rows


def test_the_step_is_capped_for_a_function_varying_on_a_scale_of_one_at_a_large_x():
    """sin at 1e6 (and cos there): a step 1e-6 * |x| = 1 would make the truncation error large
    enough to hide a rule 2e-4 wrong; the capped step (1e-4) catches it."""
    sin = wave_off_by(1 + 2e-4)
    report = adtrace.check(lambda x: sin(x, 1.0), np.array([1e6, -1e6 + 0.7]))
    assert statuses(report) == [("jvp", FAIL), ("vjp", FAIL)], report.rows
    assert adtrace.check(lambda x: wave_off_by(1.0)(x, 1.0), np.array([1e6, -1e6 + 0.7])).passed


def test_every_row_shows_the_tolerance_its_status_follows_from():
    for error in FACTORS:
        for row in adtrace.check(exp_off_by(FACTORS[error]), np.array([360.0, 1.0])).rows:
            assert row.tolerance is not None and (row.difference <= row.tolerance) == (row.status == PASS)
            assert "rtol 1e-05" in row.reason and "tolerance" in row.reason


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_the_tolerance_follows_the_dtype(dtype):
    """multiply, exp and tanh on float16 failed at rtol 1e-5 (float16 keeps 3 digits)."""
    import autograd.numpy as anp

    x = np.array([0.3, 0.7, -1.2], dtype=dtype)
    for f in (lambda x: anp.sum(x * x), lambda x: anp.sum(anp.exp(x)), lambda x: anp.sum(anp.tanh(x))):
        report = adtrace.check(f, x)
        assert report.passed and all(r.status == PASS for r in report.rows), report.rows
        rtol = float(np.finfo(dtype).eps) ** (1 / 3)
        assert all(f"rtol {rtol:.3g}" in r.reason for r in report.rows)
    wrong = adtrace.check(lambda x: anp.sum(exp_off_by(2.0)(x)), x)
    assert [r.status for r in wrong.rows if r.primitive == "exp"] == [FAIL, FAIL]


def test_a_rule_wrong_in_one_element_of_many_fails():
    """sin's rule 2x wrong at element 0 of 100,000: the error (about 1 of <u, J v> about 300) was
    within rtol x |u| |J v| (7e4 x 1e-5 = 0.75) and passed."""
    @primitive
    def sine(x):
        return np.sin(x)

    def vjp(ans, x):
        derivative = np.cos(x)
        derivative[0] *= 2.0
        return lambda g: g * derivative

    defvjp(sine, vjp)
    report = adtrace.check(lambda x: sine(x), np.linspace(0.1, 1.0, 100_000))
    assert [r.status for r in report.rows if r.primitive == "sine"] == [FAIL], report.rows


@pytest.mark.parametrize("error", FACTORS)
def test_elements_of_very_different_sizes(error):
    """1/x at [1e-3, 100] and log at [1e-8, 3, 1e8]: the step of the largest element (1e-4) was a
    tenth of the smallest or beyond it, and every row was skipped (a 'kink', out of the domain)."""
    reciprocal = wave_like(lambda x: 1 / x, lambda x: -1 / x ** 2, FACTORS[error])
    logarithm = wave_like(np.log, lambda x: 1 / x, FACTORS[error])
    for f, x in [(reciprocal, [1e-3, 100.0]), (logarithm, [1e-8, 3.0, 1e8])]:
        report = adtrace.check(lambda x: f(x), np.array(x))
        assert statuses(report) == [("jvp", EXPECTED[error]), ("vjp", EXPECTED[error])], report.rows


def test_a_rule_wrong_where_dot_u_jv_cancels_fails():
    """``c * x`` with c chosen against the checker's u (the first node's, seeded by its index 0) so
    that dot(u, J v) is 1e-6 of its terms: a rule 1e-6 wrong in one of them doubles the value and
    was within rtol x the terms (10 x the value); the right rule passes."""
    u = np.random.default_rng(0).standard_normal(2)
    c = np.array([3.0, -3.0 * u[0] / u[1] * (1 + 1e-6)])
    rows = {}
    for name, wrong in [("right", 0.0), ("wrong", 1e-6)]:
        scaled = c * np.array([1.0, 1.0 + wrong])

        @primitive
        def linear(x):
            return c * x

        defvjp(linear, lambda ans, x: lambda g: np.sum(g * scaled))
        rows[name] = [r for r in adtrace.check(lambda x: linear(x).sum(), 0.7).rows if r.primitive == "linear"]
    assert [r.status for r in rows["right"]] == [PASS], rows
    assert [r.status for r in rows["wrong"]] == [FAIL] and "the terms' size" in rows["wrong"][0].reason, rows


@pytest.mark.parametrize("error", FACTORS)
def test_inner_products_of_many_huge_terms(error):
    """exp at 700 to 706 over 400 elements: dot(u, J v) sums 400 terms up to 1e307 and overflowed;
    the right rule was a FAIL ("the analytic side is nan")."""
    report = adtrace.check(exp_off_by(FACTORS[error]), np.linspace(700.0, 706.0, 400))
    assert statuses(report) == [("jvp", EXPECTED[error]), ("vjp", EXPECTED[error])], report.rows


@pytest.mark.parametrize("error", FACTORS)
def test_directions_do_not_push_a_rule_past_the_largest_double(error):
    """exp at 708 to 709.7 (up to 1.6e308): a direction element of 3.8 made u * ans overflow in
    the right rule itself, a FAIL ("the analytic side is nan"); no element of u or v is above 1."""
    report = adtrace.check(exp_off_by(FACTORS[error]), np.linspace(708.0, 709.7, 400))
    assert statuses(report) == [("jvp", EXPECTED[error]), ("vjp", EXPECTED[error])], report.rows

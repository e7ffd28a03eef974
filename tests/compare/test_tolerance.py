"""The one rule every numerical check applies: relative, scaled, with no absolute floor."""

import math

import numpy as np
import pytest

from adtrace.compare.tolerance import FAIL, PASS, UNRESOLVED, agree, agree_arrays, norm, rtol_for


@pytest.mark.parametrize("size", [1e-310, 1e-300, 1.0, 1e155, 1e300, 1.7e308])
def test_relative_at_every_magnitude(size):
    assert agree(2 * size, size, 1e-5).status == FAIL
    assert agree(size * (1 + 1e-4), size, 1e-5).status == FAIL
    assert agree(size * (1 + 1e-8), size, 1e-5).status == PASS
    assert agree(-size, size, 1e-5).status == FAIL  # the difference 2 * size overflows at 1.7e308: no matter


def test_both_exactly_zero_pass_and_zero_against_anything_fails():
    both = agree(0.0, 0.0, 1e-5)
    assert both.status == PASS and both.describe() == "equal (rtol 1e-05)"
    assert agree(1e-320, 0.0, 1e-5).status == FAIL and agree(0.0, 1e-320, 1e-5).status == FAIL


def test_an_error_as_large_as_the_numbers_is_unresolved_never_a_pass():
    verdict = agree(2e-9, 1e-9, 1e-5, error=1e-9)
    assert verdict.status == UNRESOLVED and "below what central differences resolve" in verdict.describe()
    assert agree(2.0, 1.0, 1e-5, error=1e-3).status == FAIL  # an error well below the numbers: resolved


def test_an_unresolved_comparison_shows_the_tolerance_its_reason_gives():
    """Unresolved: the tolerance shown is 10 x the differences' error (as its reason says), plus
    rtol of the larger number, not more."""
    verdict = agree(1e-8, 3e-8, 1e-5, error=1e-3)
    assert verdict.status == UNRESOLVED and "error 1.0e-03 (x 10)" in verdict.describe()
    assert math.isclose(verdict.tolerance, 10 * 1e-3 + 1e-5 * 3e-8, rel_tol=1e-12)


def test_non_finite_sides():
    assert agree(math.nan, 1.0, 1e-5).status == FAIL and agree(math.inf, 1.0, 1e-5).status == FAIL
    assert agree(math.nan, 1.0, 1e-5).describe() == "the analytic side is nan"
    assert agree(1.0, math.inf, 1e-5).status == UNRESOLVED  # the differences overflowed, the rule did not
    assert agree(1.0, 1.0 + 1e-9, 1e-5, scale=math.inf).status == UNRESOLVED  # never an infinite tolerance


def test_the_tolerance_printed_is_the_one_applied():
    for analytic in (1.0 + 1e-6, 1.0 + 3e-5):
        verdict = agree(analytic, 1.0, 1e-5, scale=2e5, error=1e-7)
        assert verdict.passed == (verdict.difference <= verdict.tolerance)
        assert f"tolerance {verdict.relative_tolerance:.1e}" in verdict.describe()
        assert verdict.relative_tolerance == pytest.approx(1e-5 * 1e-5 * 2e5 + 10 * 1e-7, rel=1e-4)
        assert "the terms' size 2.0e+05" in verdict.describe()


def test_the_terms_size_enters_at_rtol_squared():
    """|u| |J v| is about sqrt(n) |<u, J v>| for a random u: at rtol x the terms, a rule 1e-4 wrong
    passed with 100,000 terms; at rtol ** 2 cancellation of 1e5 is still absorbed."""
    assert agree(1.0 + 1e-4, 1.0, 1e-5, scale=316.0).status == FAIL
    assert agree(1.0 + 1e-8, 1.0, 1e-5, scale=1e6).status == PASS
    assert agree(1.0 + 1e-3, 1.0, 1e-5, scale=1e9).status == PASS  # the terms 1e9 times the value


def test_terms_cancelled_beyond_what_rtol_resolves_are_unresolved():
    """rtol ** 2 x the terms (2e10) is 2, above both numbers: a difference of 1.5x would pass."""
    verdict = agree(1.0, 1.5, 1e-5, scale=2e10)
    assert verdict.status == UNRESOLVED and "cancel below" in verdict.describe(), verdict


def test_an_error_above_the_numbers_is_unresolved_whatever_the_terms():
    """The error 0.2 (x 10 = 2) is above both numbers (2 and 1): a 2x difference is not a pass
    because the terms summed were 30."""
    assert agree(2.0, 1.0, 1e-5, scale=30.0, error=0.2).status == UNRESOLVED


def test_arrays_normwise():
    a = np.array([1e-300, 2e-300, 0.0])
    assert agree_arrays(a, a * (1 + 1e-7), 1e-9).status == FAIL
    assert agree_arrays(a, a * (1 + 1e-12), 1e-9).status == PASS
    big = np.array([1e300, -1.7e308])
    assert agree_arrays(big, big * (1 + 1e-12), 1e-9).status == PASS and agree_arrays(big, -big, 1e-9).status == FAIL
    assert agree_arrays(np.zeros(2), np.array([0.0, 1e-320]), 1e-9).status == FAIL
    assert agree_arrays(np.array([np.nan, 1.0]), np.array([np.nan, 1.0]), 1e-9).status == PASS


def test_norm_neither_overflows_nor_underflows():
    assert norm([3e200, 4e200]) == pytest.approx(5e200)
    assert norm([3e-200, 4e-200]) == pytest.approx(5e-200)
    assert norm([0.0, 0.0]) == 0.0


def test_rtol_follows_the_dtype():
    assert rtol_for(np.float64) == 1e-5 and rtol_for(np.complex128) == 1e-5
    assert rtol_for(np.float32) == pytest.approx(4.92e-3, rel=1e-2) and rtol_for(np.complex64) == rtol_for(np.float32)
    assert rtol_for(np.float16) == pytest.approx(9.92e-2, rel=1e-2)


def test_the_unit_is_a_power_of_two_that_exists():
    from adtrace.compare.tolerance import power_of_two_unit

    for largest in (1.7e308, 1e300, 1e-300, 5e-324):
        unit = power_of_two_unit(np.array([largest, -largest / 3]))
        assert math.isfinite(unit) and 1 <= largest / unit < 2 and math.frexp(unit)[0] == 0.5
    assert power_of_two_unit(np.array([3.0, 1e-9])) == 1.0


def test_numbers_from_two_to_the_minus_500_to_two_to_the_500_are_compared_undivided():
    from adtrace.compare.tolerance import power_of_two_unit

    for inside in (2.0 ** -500, 1e-100, 1.0, 2.0 ** 500):
        assert power_of_two_unit(np.array([inside]), np.array([0.0])) == 1.0
    assert power_of_two_unit(np.array([2.0 ** -501])) == 2.0 ** -501
    assert power_of_two_unit(np.array([1.5 * 2.0 ** 500])) == 2.0 ** 500
    assert power_of_two_unit(np.array([3.0 * 2.0 ** 600])) == 2.0 ** 601


def test_arrays_equal_or_of_other_shapes_are_said_so_with_no_figures_made_up():
    from adtrace.compare.tolerance import Agreement

    a = np.array([1.0, np.nan, np.inf])
    assert agree_arrays(a, a.copy(), 1e-9) == Agreement(PASS, 0.0, 0.0, 0.0, 0.0, 1e-9, 0.0)
    assert agree_arrays(a, a.copy(), 1e-9).describe() == "equal (rtol 1e-09)"
    shapes = agree_arrays(np.zeros(2), np.zeros(3), 1e-9)
    assert shapes == Agreement(FAIL, math.inf, 0.0, math.inf, 0.0, 1e-9, 0.0, why="shapes (2,) and (3,)")
    assert shapes.describe() == "shapes (2,) and (3,)"

"""Central differences: the step moves the point exactly, and the step is the one whose error is
smallest relative to the derivative."""

import numpy as np
import pytest

from adtrace.compare.differences import along, exact_direction, steps


def test_the_direction_is_rounded_to_the_points_evaluated():
    point, v = np.array([1e6, 3.0, -7e15]), np.array([0.3, -1.1, 0.7])
    for h in steps(float(np.max(np.abs(point)))):
        w = exact_direction(point, v, h)
        taken = ((point + h / 2 * w) - point) / (h / 2)  # the displacement actually taken, per unit step
        assert np.allclose(taken, w, rtol=1e-15, atol=0)
    found = along(point, v, lambda p: np.sin(p / 1e15))
    assert np.allclose(found.direction, v, rtol=1e-3)  # the capped step (1e-4) would not move -7e15: not taken


def test_steps_are_capped_and_relative_where_far_from_one():
    assert steps(0.0) == [1e-6] and steps(50.0) == [pytest.approx(5e-5)]
    assert steps(1e6) == [pytest.approx(1e-4), pytest.approx(10.0)]
    assert steps(1e-300) == [1e-6, pytest.approx(1e-305)]


@pytest.mark.parametrize("f,df,x", [(np.log, lambda x: 1 / x, 1e300), (np.sin, np.cos, 1e6),
                                    (lambda x: x * x, lambda x: 2 * x, 1e-150), (np.exp, np.exp, 690.0)])
def test_the_best_step_resolves_the_derivative(f, df, x):
    found = along(np.float64(x), np.float64(1.0), f)
    assert float(found.estimate) == pytest.approx(df(x) * float(found.direction), rel=1e-8, abs=0)
    assert found.error(1.0) <= 2e-6 * abs(df(x))  # 10x of it leaves a rule off by 1e-4 failing


@pytest.mark.parametrize("x", [1e-300, 1e-160])
def test_values_that_underflow_have_an_error_of_their_spacing(x):
    """x * x underflows to 0 (or to a few subnormals) at every point evaluated: the differences
    are 0 (or noise), and their error must cover the true 2x (a right rule is not failed)."""
    found = along(np.float64(x), np.float64(1.0), lambda p: p * p)
    assert abs(float(found.estimate) - 2 * x * float(found.direction)) <= found.error(1.0)


def test_no_step_that_moves_the_point_is_none():
    assert along(np.float64(1e300), np.float64(1e-320), np.sin) is None


@pytest.mark.parametrize("x", [1e20, 1e300])
def test_a_step_far_beyond_the_functions_scale_claims_no_accuracy(x):
    """sin at 1e20: only the relative step (1e15) moves the point, and its differences are noise of
    size 1 / h whose fine - coarse is as small: the error must still cover the true cos(x) (else a
    right rule FAILs), so such a step, whose differences do not shrink as h does, is not trusted."""
    found = along(np.float64(x), np.float64(1.0), np.sin)
    assert not abs(float(found.estimate) - np.cos(x) * float(found.direction)) > found.error(1.0)


def test_a_truncation_that_shrinks_as_h_squared_is_trusted():
    """x ** 3 at 0: coarse h^2 and fine h^2 / 4 disagree entirely, yet extrapolate to exactly 0."""
    found = along(np.float64(0.0), np.float64(1.0), lambda p: p ** 3)
    assert float(found.estimate) == 0 and found.error(1.0) < 1e-11


@pytest.mark.parametrize("point", [[1e-8, 3.0, 1e8], [1e-3, 100.0]])
def test_elements_of_very_different_sizes_are_resolved(point):
    """The steps follow the largest element (1e-4 at 1e8 or 100): log at 1e-8 was then stepped out
    of its domain, 1/x at 1e-3 by a tenth of itself (the check was skipped as a kink). A step
    relative to the smallest element is tried too."""
    point, v = np.array(point), np.array([0.7, -1.3, 0.4][:len(point)])
    for f, df in [(np.log, lambda x: 1 / x), (lambda x: 1 / x, lambda x: -1 / x ** 2)]:
        found = along(point, v, f)
        exact = df(point) * found.direction
        assert np.linalg.norm(found.estimate - exact) <= 1e-8 * np.linalg.norm(exact)
        assert np.all(np.abs(found.estimate - exact) <= np.abs(found.truncation) + found.rounding)


def test_each_element_has_the_rounding_of_its_own_values():
    """sqrt at [1e-12, 1e-20, 4]: the step 1e-25 resolves the two small elements; sqrt(4)'s
    rounding (2 eps / 1e-25 = 4e9) charged to every element made them unresolved."""
    point, v = np.array([1e-12, 1e-20, 4.0]), np.array([0.7, -1.3, 0.4])
    found = along(point, v, np.sqrt)
    exact = 0.5 / np.sqrt(point) * found.direction
    u = np.array([1.0, 1.0, 0.0])
    assert abs(float(u @ (found.estimate - exact))) <= found.error(u) <= 1e-4 * abs(float(u @ exact))


def test_the_extrapolation_does_not_overflow_below_the_largest_double():
    """exp at 709.5 (1.35e308): (4 fine - coarse) / 3 overflowed in 4 fine; fine + (fine - coarse) / 3 does not."""
    found = along(np.float64(709.5), np.float64(1.0), np.exp)
    assert float(found.estimate) == pytest.approx(np.exp(709.5) * float(found.direction), rel=1e-8)


def test_the_relative_step_is_added_only_outside_one_thousandth_to_ten_thousand():
    # the bounds themselves are inside: a point of size 1e-3 or 1e4 is stepped by the capped step alone
    assert steps(1e-3) == [1e-6] and steps(5e-3) == [1e-6] and steps(1e4) == [1e-6 * 100]
    assert steps(9.9e-4)[1:] == [1e-5 * 9.9e-4] and steps(1.01e4)[1:] == [1e-5 * 1.01e4]
    # a step of exactly a thousandth of the smallest element is small enough: no step relative to it
    assert steps(1.0, smallest=1e-3) == [1e-6]
    assert steps(1.0, smallest=9e-4) == [1e-6, 1e-5 * 9e-4]


def test_an_error_is_trusted_while_successive_differences_shrink_by_four_within_one():
    from adtrace.compare.differences import _trusted

    def estimates(ratio):  # coarse, fine, h/4, h/8 whose differences shrink by ``ratio``, then by 4
        fine = 1.0
        coarse, quarter = fine + ratio, fine - 1.0
        return np.array([coarse]), np.array([fine]), {4: np.array([quarter]), 8: np.array([quarter - 0.25])}

    for ratio, trusted in ((5.0, True), (3.0, True), (4.0, True), (5.5, False), (2.5, False)):
        coarse, fine, finer = estimates(ratio)
        truncation = fine - coarse
        got = _trusted(truncation, coarse, fine, 0.0, finer.__getitem__)
        assert np.isfinite(got[0]) == trusted, ratio

"""Two kept values the same within rtol: numbers, arrays, containers, summaries, values not kept."""

import numpy as np

from adtrace.recording.values import ArraySummary, Boxed, summarize
from adtrace.diff.values import DIFFERS, NOT_COMPARED, RTOL, SAME, same


def test_numbers_and_arrays_within_rtol_of_the_larger_magnitude():
    assert same(1.0, 1.0 + 1e-12) == SAME and same(1.0, 1.0 + 1e-6) == DIFFERS
    assert same(1.0, 1.0 + 1e-6, rtol=1e-5) == SAME and RTOL == 1e-9  # (the README's default)
    assert same(np.array([1.0, 0.0]), np.array([1.0, 1e-17])) == SAME  # (scaled by the value's largest element)
    assert same(np.array([1e-300, 0.0]), np.array([2e-300, 0.0])) == DIFFERS  # (no absolute floor)
    assert same(np.array(1.0), 1.0) == SAME and same(np.zeros(2), np.zeros(3)) == DIFFERS
    assert same(np.nan, np.nan) == SAME and same(np.inf, 1e308) == DIFFERS


def test_containers_a_tuple_and_a_list_alike_and_boxes_unwrapped():
    assert same((1.0, [2.0]), [1.0, (2.0,)]) == SAME  # (a saved recording reads tuples back as lists)
    assert same({"a": 1.0}, {"a": 1.0, "b": 2.0}) == DIFFERS
    assert same(Boxed(3.0, 1), 3.0) == SAME and same((1.0, 2.0), (1.0, 2.5)) == DIFFERS


def test_a_summary_by_its_statistics_and_a_value_not_kept_not_compared():
    x = np.arange(100.0)
    assert same(summarize(x), x) == SAME and same(summarize(x), x + 1) == DIFFERS
    assert same(ArraySummary((3,), "float64", 0.0, 1.0, 0.5), summarize(x)) == DIFFERS
    assert same(None, 1.0) == NOT_COMPARED and same(None, None) == SAME

"""The reason words for a zero or a non-finite local derivative."""

import numpy as np

from adtrace.explain.reasons import nonfinite_reason, zero_reason


def test_zero_reasons():
    assert [zero_reason(p) for p in ("maximum", "where", "clip", "absolute")] == [
        "relu-off", "where-unselected-branch", "clip-saturated", "zero-derivative"]


def test_nonfinite_reasons_read_the_inputs_at_the_element():
    assert nonfinite_reason("log", 0, {0: 0.0}) == "log-of-zero"
    assert nonfinite_reason("log1p", 0, {0: -1.0}) == "log-of-zero"
    assert nonfinite_reason("divide", 0, {0: 1.0, 1: 0.0}) == "division-by-zero"
    assert nonfinite_reason("divide", 1, {0: 1.0, 1: 0.0}) == "division-by-zero"
    assert nonfinite_reason("power", 0, {0: 0.0, 1: 0.5}) == "power-at-zero"
    assert nonfinite_reason("exp", 0, {0: 1000.0}) == "overflow"
    assert nonfinite_reason("sin", 0, {0: np.inf}) == "nonfinite-input"
    assert nonfinite_reason("sqrt", 0, {0: 4.0}) == "overflow"

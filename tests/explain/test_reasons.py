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
    assert nonfinite_reason("sqrt", 0, {0: 4.0}) == "unknown"  # sqrt of a finite number cannot overflow


def test_a_domain_error_is_no_overflow():
    assert nonfinite_reason("sqrt", 0, {0: -2.0}, np.nan) == "sqrt-of-negative"
    assert nonfinite_reason("log", 0, {0: -1.0}, np.nan) == "log-of-negative"
    assert nonfinite_reason("power", 0, {0: -8.0, 1: 1 / 3}, np.nan) == "power-of-negative"
    assert nonfinite_reason("power", 0, {0: -8.0, 1: 2.0}, np.inf) == "overflow"  # an integer exponent is defined
    assert nonfinite_reason("arccos", 0, {0: 2.0}, np.nan) == "domain-error"
    assert nonfinite_reason("subtract", 0, {0: np.inf, 1: np.inf}, np.nan) == "inf-minus-inf"
    assert nonfinite_reason("multiply", 0, {0: np.inf, 1: 0.0}, np.nan) == "zero-times-inf"
    assert nonfinite_reason("exp", 0, {0: 1000.0}, np.inf, np.inf, np.inf) == "overflow"
    assert nonfinite_reason("arcsin", 0, {0: 1.0}, np.inf, np.inf, np.pi / 2) == "infinite-derivative"


def test_a_cause_not_established_is_unknown_not_overflow():
    """An op adtrace does not know (a class's own op name, or none: '') at 1/0 is no overflow: not known."""
    assert nonfinite_reason("", 0, {0: 1.0, 1: 0.0}, np.inf, None, np.inf) == "unknown"
    assert nonfinite_reason("", 0, {0: 1.0, 1: 0.0}, np.inf) == "unknown"
    assert nonfinite_reason("arctanh", 0, {0: 1.0}, np.inf, None, np.inf) == "unknown"  # a pole, not an overflow
    assert nonfinite_reason("multiply", 0, {0: 1e200, 1: 1e200}, np.inf, None, np.inf) == "overflow"
    assert nonfinite_reason("sin", 0, {0: 1.0}, np.inf, 1e308) == "overflow"  # a finite derivative's product

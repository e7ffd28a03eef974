"""Report checks: engines agree, orders valid, finite differences."""

import numpy as np

from adtrace.compare.checks import finite_differences, orders_valid


def test_finite_differences_pass_and_fail():
    f = lambda x: np.sum(np.sin(x) * x)
    x = np.array([0.3, -1.2, 2.0])
    exact = np.cos(x) * x + np.sin(x)
    assert finite_differences(f, x, 1.0, exact).passed
    assert not finite_differences(f, x, 1.0, exact * 1.01).passed


def test_orders_valid_names_both_orders():
    graph = {"v2_mul": ("v1_sin", "v0_root"), "v1_sin": ("v0_root",), "v0_root": ()}
    ok = orders_valid(["v2_mul", "v1_sin", "v0_root"], graph, ["v2_mul", "v1_sin", "v0_root"], graph)
    assert ok.passed and "same order" in ok.detail
    bad = orders_valid(["v1_sin", "v2_mul", "v0_root"], graph, ["v2_mul", "v1_sin", "v0_root"], graph)
    assert not bad.passed and "toposort: INVALID" in bad.detail

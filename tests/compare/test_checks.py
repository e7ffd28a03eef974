"""Report checks: engines agree, orders valid, finite differences."""

import re

import numpy as np
import pytest

from adtrace.compare.checks import finite_differences, order_valid, orders_valid
from user_vspace import Pair


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


def test_finite_differences_move_a_container_through_its_flattened_vector():
    f = lambda p: np.sum(np.sin(p["w"]) * p["layers"][0][0]) + p["layers"][0][1] ** 2
    p = {"w": np.array([0.3, -1.2]), "layers": [(np.array([2.0, 0.5]), 1.5)]}
    exact = {"w": np.cos(p["w"]) * p["layers"][0][0], "layers": [(np.sin(p["w"]), 3.0)]}
    assert finite_differences(f, p, 1.0, exact).passed
    wrong = {"w": exact["w"], "layers": [(np.sin(p["w"]), 3.1)]}
    assert not finite_differences(f, p, 1.0, wrong).passed


def test_rtol_states_the_tolerance_and_the_relative_difference_is_printed():
    f = lambda x: np.sum(x**2)
    x = np.array([1.0, -2.0, 0.5])
    off = 2 * x * 1.003  # a rule 0.3% off, as an iterative solve at its tolerance
    strict, loose = finite_differences(f, x, 1.0, off), finite_differences(f, x, 1.0, off, rtol=1e-2)
    assert not strict.passed and "relative difference 3.0e-03" in strict.detail and "rtol 1e-05" in strict.detail
    assert loose.passed and "rtol 0.01" in loose.detail


def test_finite_differences_move_a_users_vector_space_through_its_own_operations():
    f = lambda p: np.sin(p.a) * p.b
    p = Pair(0.4, 2.0)
    exact = Pair(np.cos(0.4) * 2.0, np.sin(0.4))
    assert finite_differences(f, p, 1.0, exact).passed and not finite_differences(f, p, 1.0, Pair(exact.a, 0.0)).passed
    state = np.random.get_state()
    finite_differences(f, p, 1.0, exact)
    assert all(np.array_equal(a, b) for a, b in zip(np.random.get_state(), state))  # the user's generator untouched


def test_finite_differences_skip_a_value_without_a_vector_space_and_say_why():
    check = finite_differences(lambda s: 0.0, "text", 1.0, 0.0)
    assert check.skipped and check.passed and "no direction to move the argument along" in check.detail


def test_finite_differences_of_a_complex_argument_follow_autograds_convention():
    """autograd's gradient of a real function of z = x + iy is df/dx - i df/dy: a covector, as
    check_vjp reads it (found by a hostile probe: real(z*z) at 1.5j was a false FAIL)."""
    import autograd.numpy as anp
    from autograd import grad

    for f, z in [(lambda z: anp.sum(anp.real(z * z)), np.array([1.5j, 0.5 + 0.2j])),
                 (lambda z: anp.real(z * z), 1.5j),
                 (lambda z: anp.sum(anp.abs(z) ** 2), np.array([1.0 - 2.0j]))]:
        check = finite_differences(f, z, 1.0, grad(f)(z))
        assert check.passed and not check.skipped, check.detail
    wrong = finite_differences(lambda z: anp.real(z * z), 1.5j, 1.0, np.conj(grad(lambda z: anp.real(z * z))(1.5j)))
    assert not wrong.passed


def test_engines_agree_counts_each_kind_of_node_in_its_detail():
    from adtrace.compare.align import CLOSE, DIFFERS, EXACT, NOT_COMPARED, NodeAlignment
    from adtrace.compare.checks import engines_agree

    def row(label, status, summarized=False):
        return NodeAlignment(label, "sin", None, None, (None,), None, status, None, summarized)

    rows = [row("v4_add", EXACT), row("v3_sin", CLOSE, summarized=True), row("v2_exp", EXACT, summarized=True),
            row("v1_dot", NOT_COMPARED, summarized=True), row("v0_root", EXACT)]
    agree = engines_agree(rows)
    assert agree.passed and agree.detail == (
        "3 nodes exact, 1 within rtol 1e-9 (+ 1e-12 x the largest partial adjoint) (2 compared by summary "
        "statistics only: capture them with capture='full'); 1 not compared (containers above the inline size, "
        "kept as type and length: capture them with capture='full')")
    differs = engines_agree([row("v1_sin", EXACT), row("v0_root", DIFFERS)])
    assert not differs.passed
    assert differs.detail == ("1 node exact, 0 within rtol 1e-9 (+ 1e-12 x the largest partial adjoint); "
                              "first divergent node: v0_root")
    assert not engines_agree([]).passed


def test_finite_differences_step_is_eps_at_least_and_scales_with_the_argument():
    """h = eps * max(1, |x|max): an argument at zero (or small) still moves by eps."""
    f = lambda x: np.sum(np.sin(x))
    for x, h in ((np.zeros(3), "1.0e-06"), (np.array([1e-3, -2e-3]), "1.0e-06"), (np.array([0.5, -40.0]), "4.0e-05")):
        check = finite_differences(f, x, 1.0, np.cos(x))
        assert check.passed and f"(h = {h};" in check.detail, check.detail


@pytest.mark.parametrize("scale", [1e-310, 1e-300, 1e155, 1e300])
def test_finite_differences_at_every_magnitude(scale):
    """No absolute floor (a gradient 2x wrong of size 1e-310 passed under atol 1e-7) and no
    overflow: off by 2x and by 1e-4 fails, by 1e-8 passes (default rtol 1e-5)."""
    f = lambda x: scale * np.sum(np.sin(x))
    x = np.array([0.3, -1.2, 2.0])
    exact = scale * np.cos(x)
    for factor, passed in ((2.0, False), (1 + 1e-4, False), (1 + 1e-8, True), (1.0, True)):
        check = finite_differences(f, x, 1.0, exact * factor)
        assert check.passed == passed and not check.skipped, (factor, check.detail)


@pytest.mark.parametrize("scale", [1e-300, 1e155, 1e300])
def test_finite_differences_at_inputs_of_every_magnitude(scale):
    f = lambda x: scale * np.sum(np.sin(x / scale))
    x = np.array([0.3, -1.2, 2.0]) * scale
    exact = np.cos(x / scale)
    for factor, passed in ((2.0, False), (1 + 1e-4, False), (1 + 1e-8, True)):
        check = finite_differences(f, x, 1.0, exact * factor)
        assert check.passed == passed and not check.skipped, (factor, check.detail)


def test_finite_differences_print_the_tolerance_the_verdict_follows_from():
    f = lambda x: np.sum(x**2)
    x = np.array([1.0, -2.0, 0.5])
    for factor in (1 + 1e-9, 1.003):
        check = finite_differences(f, x, 1.0, 2 * x * factor)
        found = re.search(r"relative difference (\S+) (?:within|beyond) tolerance (\S+) \(rtol 1e-05", check.detail)
        relative, tolerance = found.groups()
        assert check.passed == (float(relative) <= float(tolerance)), check.detail
    assert "u: a random direction, seeded" in check.detail and "\\" not in check.detail and "<g" not in check.detail


def test_finite_differences_of_complex_outputs_holomorphic_or_not():
    """A function of a complex z with a complex output: the seed (ones of its space: 1+1j) is a
    covector, as autograd's VJP takes it; the gradient autograd returns passes, its conjugate fails."""
    import autograd.numpy as anp
    from autograd import make_vjp

    z = np.array([1.5j, 0.5 - 0.2j])
    for f in (lambda z: z * z + anp.sin(z),  # holomorphic
              lambda z: z * anp.conj(z) + anp.real(z) * 1j,  # not holomorphic
              lambda z: anp.abs(z) ** 2 + 0j * z):
        vjp, out = make_vjp(f)(z)
        seed = np.ones_like(out) + 1j * np.ones_like(out)
        gradient = vjp(seed)
        check = finite_differences(f, z, seed, gradient)
        assert check.passed and not check.skipped, check.detail
        assert not finite_differences(f, z, seed, np.conj(gradient)).passed or np.allclose(gradient, np.conj(gradient))
        assert not finite_differences(f, z, seed, 2 * gradient).passed


def test_finite_differences_never_raise_adtraces_own_error_or_the_functions_next_to_the_point():
    ints = finite_differences(lambda x: int(x > 0), 1.0, 1.0, 0.0)
    assert ints.skipped and "output has no differences to take" in ints.detail
    raises = finite_differences(lambda x: 1.0 / 0.0 if x != 1.0 else 1.0, 1.0, 1.0, 0.0)
    assert raises.skipped and "the function raised next to the point (ZeroDivisionError" in raises.detail


def test_an_invalid_order_fails_whichever_engine_made_it():
    graph = {"v2_mul": ("v1_sin", "v0_root"), "v1_sin": ("v0_root",), "v0_root": ()}
    good, bad = ["v2_mul", "v1_sin", "v0_root"], ["v1_sin", "v2_mul", "v0_root"]
    lecture_wrong = orders_valid(good, graph, bad, graph)
    assert not lecture_wrong.passed and "lecture's DFS order: INVALID" in lecture_wrong.detail


def test_a_function_flat_only_below_its_rounding_is_not_failed_and_a_flat_one_still_fails():
    """(x + 1e12) - 1e12 is x, computed on a grid of 1.2e-4: at the step 1e-6 every value is the
    same, the differences 0 with a rounding error of 1e-9, and the right gradient was a FAIL. A
    probe 1000 steps out tells such a staircase from a function flat there (maximum(x, 1) at
    x < 1, where a gradient of ones is wrong and fails)."""
    x = np.array([1.0, 2.0, 0.5])
    staircase = finite_differences(lambda x: np.sum((x + 1e12) - 1e12), x, 1.0, np.ones(3))
    assert staircase.skipped and "did not converge" in staircase.detail, staircase
    flat = finite_differences(lambda x: np.sum(np.maximum(x, 1.0)), np.array([0.2, 0.5]), 1.0, np.ones(2))
    assert not flat.passed and not flat.skipped, flat
    right = finite_differences(lambda x: np.sum(np.maximum(x, 1.0)), np.array([0.2, 0.5]), 1.0, np.zeros(2))
    assert right.passed and not right.skipped, right


def test_the_function_is_called_at_most_30_times_by_the_differences():
    """4 calls where the first step resolves the derivative (x * x + x at 0.5); up to 3 steps of 4,
    4 more at h/4 and h/8 and 2 for a flat probe each (as README.md and --help say) where none does."""
    counts = []
    for f, x in [(lambda x: x * x + x, 0.5), (lambda x: np.sum((x + 1e12) - 1e12), np.array([1e-3, 1e8])),
                 (np.sin, 1e20), (lambda x: np.sum(np.sin(x)), np.array([1e-9, 1e20]))]:
        calls = []

        def counted(x):
            calls.append(1)
            return f(x)

        finite_differences(counted, x, 1.0, np.ones_like(x))
        counts.append(len(calls))
    assert counts[0] == 4 and max(counts) <= 30 and max(counts) > 4, counts


def test_noise_at_a_step_beyond_the_functions_scale_is_not_a_verdict():
    """sin at 1e20: only the step 1e15 moves the point; its differences (noise of size 1e-15) had
    fine - coarse just under a tenth of them by chance and the right gradient cos(1e20) FAILed."""
    check = finite_differences(np.sin, 1e20, 1.0, np.cos(1e20))
    assert check.skipped and "did not converge" in check.detail, check


def test_a_shared_rule_is_suspected_only_when_finite_differences_fail_beside_agreeing_engines():
    from adtrace.compare.checks import Check, rule_suspected

    engines = Check("reference engine vs autograd, per node", True, "")
    differences = Check("central finite differences", False, "")
    assert rule_suspected([engines, differences])
    assert rule_suspected([engines, differences, Check("per-node local rules", False, "first failing node: v1")])
    assert not rule_suspected([Check(engines.name, False, ""), differences])  # the engines name the node
    assert not rule_suspected([engines, differences, Check("backward() ran once over the graph", False, "")])
    assert not rule_suspected([engines, Check(differences.name, True, "")])
    assert not rule_suspected([differences])  # no reference engine: nothing agreed


def test_order_valid_checks_one_order_alone():
    graph = {"c": ("b",), "b": ("a",), "a": ()}
    assert order_valid(["c", "b", "a"], graph).passed
    wrong = order_valid(["b", "c", "a"], graph)
    assert not wrong.passed and wrong.detail == "autograd's toposort: INVALID (3 nodes; the lecture's order not made)"
    assert not order_valid(["c", "b"], graph).passed  # a node never visited

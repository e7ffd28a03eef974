"""trace_call: one user call, autograd recorded and the reference engine beside it."""

import gc

import autograd.numpy as anp
import numpy as np
import pytest
from autograd.misc.fixed_points import fixed_point

from adtrace.recording.callsite import source_location
from adtrace.compare.traced_call import trace_call
from primitives import cube


def f(x, y):
    return anp.sin(x * y) + anp.exp(x)


def test_seed_notebook_numbers_by_argnum():
    assert trace_call(f, (0.5, 3.0)).gradient == pytest.approx(1.860933, abs=1e-6)
    assert trace_call(f, (0.5, 3.0), argnum=1).gradient == pytest.approx(0.035369, abs=1e-6)
    assert all(c.passed for c in trace_call(f, (0.5, 3.0), mode="both").checks)


def test_vector_output_uses_a_seed_of_ones():
    call = trace_call(lambda x: anp.tanh(x) * 2.0, (np.array([0.0, 1.0]),))
    assert np.allclose(call.gradient, 2.0 / np.cosh([0.0, 1.0]) ** 2)


def test_container_arguments_run_through_the_reference_engine_and_finite_differences():
    call = trace_call(lambda t: t[0] * t[1], ((2.0, 3.0),))
    assert call.reference_note is None and [float(g) for g in call.reference.adjoint] == [3.0, 2.0]
    assert [float(g) for g in call.gradient] == [3.0, 2.0]
    assert [c.name for c in call.checks] == ["reference engine vs autograd, per node",
                                             "both visit orders are reverse topological", "central finite differences"]
    assert all(c.passed and not c.skipped for c in call.checks)


def test_bad_arguments():
    with pytest.raises(TypeError, match="cannot differentiate with respect to a str"):
        trace_call(f, ("a", 1.0))
    with pytest.raises(ValueError, match="argnum 2 is out of range"):
        trace_call(f, (1.0, 2.0), argnum=2)
    with pytest.raises(ValueError, match="mode must be one of"):
        trace_call(f, (1.0, 2.0), mode="sideways")


def test_source_location_is_relative_or_a_module(tmp_path):
    from pathlib import Path

    line = f.__code__.co_firstlineno
    repo = Path(__file__).resolve().parents[2]
    assert source_location(f, relative_to=repo) == f"tests/compare/test_traced_call.py:{line}"
    assert source_location(f, relative_to=tmp_path) == f"{f.__module__}:{line}"  # outside it: no path at all
    assert source_location(len) == "builtins"


def test_structure_capture_makes_no_false_claim():
    call = trace_call(lambda x: x * x + anp.sin(x), (3.0,), capture="structure")
    assert all(c.passed for c in call.checks)
    assert not any(c.name.startswith("reference engine vs autograd") for c in call.checks)


def test_complex_values_leave_the_reference_engine_out():
    call = trace_call(lambda x: anp.real(anp.exp(1j * x)), (0.5,))
    assert call.reference is None and "real numbers only" in call.reference_note
    assert all(c.passed for c in call.checks)


def test_only_autograds_warnings_go_into_the_report():
    import warnings as w

    def noisy(x):
        w.warn(f"object at {hex(id(x))}")
        return x * 3.0

    with pytest.warns(UserWarning, match="object at 0x"):
        call = trace_call(noisy, (1.0,))
    assert call.warnings == []
    assert trace_call(lambda x: 3.0, (1.0,)).warnings == ["Output seems independent of input."]


# -------------------- backward passes inside a backward pass --------------------


def newton_sqrt(a):
    return fixed_point(lambda a: lambda x: 0.5 * (x + a / x), a, 1.0, lambda x, y: anp.abs(x - y), 1e-12)


@pytest.mark.parametrize("f, x", [(lambda x: anp.sin(cube(x)), 0.5), (newton_sqrt, 2.0)], ids=["defvjp", "fixed_point"])
def test_passes_run_inside_a_rule_are_not_taken_for_the_users(f, x):
    call = trace_call(f, (x,))
    assert len(call.recording.queries) > 1
    assert [(c.name, c.passed) for c in call.checks] == [
        ("reference engine vs autograd, per node", True), ("both visit orders are reverse topological", True),
        ("central finite differences", True)]
    assert {r.status for r in call.alignment} == {"exact"}
    assert call.alignment[-1].label == "v0_root" and call.alignment[-1].popped == call.gradient


def test_rtol_is_the_tolerance_finite_differences_accept():
    """fixed_point at tol 1e-4 (as autograd's example): its VJP is an iterative solve 0.3% off."""
    sqrt = lambda a: fixed_point(lambda a: lambda x: x - 0.05 * (x**2 - a), a, 10.0,
                                 lambda x, y: anp.abs(x - y), 1e-4)
    strict, loose = trace_call(sqrt, (2.0,)), trace_call(sqrt, (2.0,), rtol=1e-2)
    assert not strict.checks[-1].passed and "relative difference 2.8e-03" in strict.checks[-1].detail
    assert loose.checks[-1].passed and "rtol 0.01" in loose.checks[-1].detail
    assert all(c.passed for c in loose.checks)


def test_the_cyclic_collector_is_paused_for_the_call_and_restored_as_it_was():
    seen = []

    def f(x):
        seen.append(gc.isenabled())
        return anp.sin(x) * x

    for enabled in (True, False):
        (gc.enable if enabled else gc.disable)()
        try:
            call = trace_call(f, (0.5,))
            assert gc.isenabled() is enabled and all(c.passed for c in call.checks)
        finally:
            gc.enable()
    assert seen and not any(seen)  # the user's function (recorded, reference engine, differences) ran without it


def test_forward_mode_of_a_constant_function_agrees_with_the_reference():
    """make_jvp of an output independent of the input returns zeros; so does the lecture's engine
    (no node to log: a false FAIL before)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        call = trace_call(lambda x: 3.0, (1.0,), mode="fwd")
    forward = [c for c in call.checks if c.name.startswith("forward mode")]
    assert forward and all(c.passed for c in forward)


def test_forward_mode_fails_on_a_reference_jvp_rule_off_by_1e_7(monkeypatch):
    """The tangents of the two engines agree to rounding (rtol 1e-9, printed): a JVP rule of the
    reference engine off by 1e-7 (relative) makes forward mode's only check FAIL."""
    from adtrace.reference import rules

    f = lambda x: anp.sin(x) * 2.0
    x = (np.array([0.5, 1.0, -2.0]),)
    right = trace_call(f, x, mode="fwd").checks
    assert [c.passed for c in right] == [True] and "rtol 1e-09" in right[0].detail
    monkeypatch.setitem(rules.primitive_jvps, anp.sin, {0: lambda g, ans, x: g * anp.cos(x) * (1 + 1e-7)})
    off = trace_call(f, x, mode="fwd").checks
    assert [c.passed for c in off] == [False]
    assert "relative difference 1.0e-07 beyond tolerance 1.0e-09" in off[0].detail


def test_complex_arguments_and_outputs_are_checked_by_finite_differences():
    """`report --at 1.5j` of a function with a complex output raised adtrace's own TypeError
    ("flattened to complex128, not floats"), blamed on the function."""
    for f in (lambda z: z * z, lambda z: anp.sin(z) * anp.conj(z), lambda z: anp.real(z * z)):
        call = trace_call(f, (1.5j,))
        differences = [c for c in call.checks if c.name == "central finite differences"]
        assert [(c.passed, c.skipped) for c in differences] == [(True, False)], differences


def user_line_warns(x):
    np.float64(1.0) / np.float64(0.0)  # numpy warns here, at each of the function's runs
    return anp.log(x) * 2.0


def test_warnings_point_at_the_users_line_once_never_into_adtrace():
    """log at 0: the reference engine's own rule (g / x) divides by zero as autograd's did: said
    once in the report, not warned from adtrace/reference/vjp_rules.py; the user's own line warns
    once though the function runs several times (autograd, the reference engine, differences)."""
    import warnings
    from pathlib import Path

    import adtrace

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call = trace_call(user_line_warns, (0.0,))
    package = str(Path(adtrace.__file__).resolve().parent)
    assert not [w for w in caught if str(w.filename).startswith(package)], [(w.filename, w.lineno) for w in caught]
    here = [w for w in caught if w.filename == __file__]
    assert [w.lineno for w in here] == [user_line_warns.__code__.co_firstlineno + 1]
    assert "divide by zero encountered in scalar divide" in call.warnings


def chain(n):
    def g(x):
        for _ in range(n):
            x = anp.sin(x) * 1.5
        return x
    return g


def test_above_the_reference_limit_the_reference_engine_is_not_run_and_the_report_says_why():
    call = trace_call(chain(5), (0.3,), reference_limit=10)  # 11 nodes: the root and 2 per step
    assert len(call.recording.nodes) == 11
    assert call.reference is None and call.alignment == []
    assert call.reference_note == ("reference engine: 11 nodes, above the limit of 10 "
                                   "(--reference-limit 11 runs it: it reruns the function, about as long again)")
    # autograd's visit order is still checked, alone, and the gradient by finite differences
    assert [(c.name, c.passed) for c in call.checks] == [("the visit order is reverse topological", True),
                                                         ("central finite differences", True)]
    assert call.checks[0].detail == "autograd's toposort: valid (11 nodes; the lecture's order not made)"
    at_limit = trace_call(chain(5), (0.3,), reference_limit=11)
    assert at_limit.reference_note is None and at_limit.reference is not None
    assert [c.name for c in at_limit.checks][0] == "reference engine vs autograd, per node"
    assert trace_call(chain(5), (0.3,), reference_limit=None).reference is not None
    assert float(call.gradient) == float(at_limit.gradient)  # the recording is the same: only the check is left out


def test_above_the_reference_limit_forward_mode_runs_no_reference_tangents():
    call = trace_call(chain(5), (0.3,), mode="fwd", reference_limit=3)
    assert call.reference_tangents == () and "above the limit of 3" in call.reference_note
    assert call.checks == []
    both = trace_call(chain(5), (0.3,), mode="both", reference_limit=3)
    assert both.reference is None and both.reference_tangents == ()
    assert [c.name for c in both.checks] == ["the visit order is reverse topological", "central finite differences"]


@pytest.mark.parametrize("limit", [-1, 2.5, True, "10"])
def test_a_reference_limit_is_a_whole_number_of_nodes_or_none(limit):
    with pytest.raises(ValueError, match="reference_limit must be a whole number of nodes"):
        trace_call(chain(1), (0.3,), reference_limit=limit)

"""Flags read from the recorded backward pass: where a NaN is born (by argnum), and which node
changed a contribution's vector space (not the nodes that passed it on)."""

import warnings

import autograd.numpy as anp
import numpy as np

import adtrace


def test_the_nan_origin_names_the_argnum_not_the_position():
    """power(-2.0, x): x is argument 1 but the node's only boxed input (position 0); its VJP for
    x is log(-2.0) * ans: NaN from a finite outgrad."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        report = adtrace.check(lambda x: anp.power(-2.0, x), 2.0)
    origin = report.nonfinite
    assert (origin.primitive, origin.argnum, origin.test) == ("power", 1, "nonfinite")
    assert "finite outgrad into a non-finite contribution" in origin.reason


def test_a_dtype_passed_on_is_blamed_on_the_node_that_changed_it():
    """eigh's VJP returns float64 for a float32 input; reshape before it only hands the float64 on
    (its outgrad was float64 already): eigh is flagged, reshape is not."""
    x = (np.arange(4.0) / 3 + np.eye(2).ravel()).astype(np.float32)
    report = adtrace.check(lambda a: anp.sum(anp.linalg.eigh(anp.reshape(a, (2, 2)))[0]), x)
    assert [(r.primitive, r.test) for r in report.failures] == [("eigh", "vspace")]
    assert report.first_failure.primitive == "eigh" and "float64" in report.first_failure.reason
    assert not [r for r in report.rows if r.primitive == "reshape" and r.status == "FAIL"]


def test_a_node_that_changes_the_dtype_itself_is_flagged():
    from autograd.extend import defvjp, primitive

    @primitive
    def widen(x):
        return x * 2

    defvjp(widen, lambda ans, x: lambda g: np.asarray(g * 2, dtype=np.float64))  # float64 for float32
    report = adtrace.check(lambda a: anp.sum(anp.sin(widen(anp.reshape(a, (2, 2))))), np.ones(4, np.float32))
    assert [r.node for r in report.failures if r.test == "vspace"][:1] == ["v2_widen"]


def test_a_node_whose_outgrad_is_an_integer_array_is_still_flagged():
    """count's rule hands widen an integer outgrad (no vector space to compare with); widen's own
    float64 contribution to a float32 input is flagged all the same, and the check does not crash."""
    from autograd.extend import defvjp, primitive

    @primitive
    def widen(x):
        return x * 2

    defvjp(widen, lambda ans, x: lambda g: np.asarray(g * 2, dtype=np.float64))  # float64 for float32

    @primitive
    def count(x):
        return x + 1

    defvjp(count, lambda ans, x: lambda g: np.ones(np.shape(x), dtype=int))  # an integer gradient

    report = adtrace.check(lambda a: anp.sum(count(widen(a))), np.array([0.5, 1.5], dtype=np.float32))
    recorded = [r for r in report.rows if r.test == "vspace" and r.reason.startswith("contribution to")]
    assert [(r.primitive, r.status) for r in recorded] == [("widen", "FAIL")], report.rows
    assert "float64" in recorded[0].reason and "float32" in recorded[0].reason

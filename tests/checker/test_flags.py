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

"""A call recorded for a diff: autograd's VJP, or an engine's backward(); one run, every value kept."""

import autograd.numpy as anp
import pytest

from adtrace.diff.calls import record_call


def test_autograd_differentiates_the_argument_argnum_names_with_a_seed_of_ones():
    calls = []

    def f(x, y):
        calls.append(1)
        return anp.sum(x * y)

    rec = record_call(f, (anp.array([1.0, 2.0]), anp.array([3.0, 4.0])), argnum=1)
    assert calls == [1] and rec.capture == "full"
    assert list(rec.gradient(rec.user_query())) == [1.0, 2.0]  # d/dy of sum(x * y) is x
    assert all(e.site for e in rec.of_kind("node"))


def test_an_engine_makes_each_argument_a_leaf_and_runs_backward_on_the_result():
    rec = record_call(lambda x, y: x * y + x, (3, 2.0), engine="micrograd")
    assert rec.engine == "micrograd"
    leaves = [e for e in rec.of_kind("node") if not e.parents]
    assert [e.value for e in leaves] == [3.0, 2.0] and type(leaves[0].value) is float  # (--at 3 is 3.0)
    with pytest.raises(TypeError, match="nothing to call backward"):
        record_call(lambda x: 1.0, (3.0,), engine="micrograd")

"""Copy-on-write: recorded values stay true while autograd and the user write in place."""

import autograd.numpy as anp
import numpy as np
import pytest
from autograd import grad

import adtrace


def record_grad(f, x, **options):
    with adtrace.record(**options) as rec:
        result = grad(f)(x)
    return rec, result


@pytest.mark.parametrize("capture", ["auto", "full"])
def test_aliasing_trap_history_stays_true(capture):
    rec, g = record_grad(lambda x: anp.sum(x * x + x * x + x * x), np.array([1.0, 2.0]), capture=capture)
    to_root = [e for e in rec.of_kind("add_outgrads") if e.parent == "v0_root"]
    assert [r.result[0].tolist() for r in to_root] == [[1, 2], [2, 4], [3, 6], [4, 8], [5, 10], [6, 12]]
    assert [r.result[1] for r in to_root] == [False, True, True, True, True, True]
    assert [r.previous[0].tolist() for r in to_root[1:]] == [[1, 2], [2, 4], [3, 6], [4, 8], [5, 10]]
    assert g.tolist() == [6, 12]


def test_gradient_changed_by_the_user_leaves_the_recording_true():
    rec, g = record_grad(lambda x: anp.sum(x * x + x * x + x * x), np.array([1.0, 2.0]))
    g *= 0  # the user owns the returned array
    assert rec.gradient(1).tolist() == [6, 12]
    assert rec.of_kind("add_outgrads")[-1].result[0].tolist() == [6, 12]
    assert rec.of_kind("vjp")[-1].outgrad.tolist() == [6, 12]


def test_input_changed_by_the_user_leaves_views_true():
    x = np.array([1.0, 2.0, 3.0, 4.0])
    rec, _ = record_grad(lambda v: anp.sum(anp.reshape(v, (2, 2)) * 2.0), x)
    x[:] = -1.0
    reshaped = next(e for e in rec.of_kind("node") if e.primitive == "reshape")
    assert reshaped.value.tolist() == [[1, 2], [3, 4]]
    assert rec.of_kind("trace")[0].input.tolist() == [1, 2, 3, 4]


def test_higher_order_accumulators_recorded_at_creation():
    f = lambda x: anp.sum(x * x + x * x + x * x)
    with adtrace.record() as rec:
        h = grad(lambda x: anp.sum(grad(f)(x)))(np.array([1.0, 2.0]))
    assert h.tolist() == [6, 6]
    accumulated = [e.value.tolist() for e in rec.of_kind("node") if e.primitive in ("VSpace.add", "VSpace.mut_add")]
    assert accumulated == [[2, 4], [3, 6], [4, 8], [5, 10], [6, 12]]

"""Array summaries: computed at once or in batches, the same statistics to the bit."""

import math
import warnings

import numpy as np
import pytest

import adtrace
from adtrace import summaries
from adtrace.history import resolve
from adtrace.summaries import ARRAY_SUMMARY, BATCHED_SUMMARY, REPEATS, ROWS, Batches, stored_summary
from adtrace.values import ArraySummary, Capture


def _odd_values(rng, shape):
    """Random float64 values with NaN, infinities, signed zeros, subnormals and sums that overflow."""
    a = rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4)
    flat = a.reshape(-1)
    for special in rng.choice([np.nan, np.inf, -np.inf, -0.0, 0.0, 5e-324, 1.7e308, -1.7e308], size=rng.integers(0, 4)):
        flat[rng.integers(flat.size)] = special
    return a


def _same(a, b):
    """Equal to the bit (NaN equal to NaN, 0.0 not equal to -0.0)."""
    return math.copysign(1.0, a) == math.copysign(1.0, b) and (a == b or (math.isnan(a) and math.isnan(b)))


def test_batched_statistics_are_those_of_each_array_alone():
    rng = np.random.default_rng(0)
    shapes = [(65,), (100,), (7, 13), (2, 3, 11), (4096,), (64, 64), (1000,)]
    batches, expected, stored = Batches(), [], []
    for i in range(1500):
        array = _odd_values(rng, shapes[i % len(shapes)])
        expected.append(stored_summary(array))
        stored.append(batches.add(array))
    batches.close()
    assert sum(s[0] is BATCHED_SUMMARY for s in stored) > 1400  # (all but the first REPEATS of each shape)
    for want, got in zip(expected, stored):
        got = resolve(got)
        assert (got.shape, got.dtype) == want[1:3]
        assert all(_same(g, w) for g, w in zip((got.min, got.max, got.mean), want[3:])), (got, want)


def test_a_batched_summary_is_read_only_once_computed():
    batches = Batches()
    arrays = [np.full(100, float(i)) for i in range(REPEATS + 1)]
    stored = [batches.add(a) for a in arrays]
    assert [s[0] is ARRAY_SUMMARY for s in stored] == [True] * REPEATS + [False]  # a shape seen often: batched
    with pytest.raises(RuntimeError, match="before its batch was computed"):
        resolve(stored[-1])
    batches.compute_all()
    assert resolve(stored[-1]) == ArraySummary((100,), "float64", 8.0, 8.0, 8.0)
    arrays[-1][:] = -1.0  # the batch holds a copy: the statistics are of the array when it was captured
    batches.close()
    assert resolve(stored[-1]).max == 8.0


def test_only_contiguous_float64_arrays_up_to_the_batched_size_are_batched():
    accepts = Batches.accepts
    assert accepts(np.zeros(100)) and accepts(np.zeros((64, 64))) and accepts(np.zeros(()))
    assert not accepts(np.zeros(summaries.BATCHED_SIZE + 1))
    assert not accepts(np.zeros((10, 20)).T)  # summed in another order alone: not to the bit
    assert not accepts(np.zeros(100)[::2])
    assert not any(accepts(np.zeros(100, dtype=t)) for t in (np.float32, np.int64, np.complex128, bool))


def test_batches_full_pools_and_buffer_budget(monkeypatch):
    monkeypatch.setattr(summaries, "BUFFER_BYTES", ROWS * 8 * 300)  # room for one shape of 300 elements
    rng = np.random.default_rng(1)
    batches, pairs = Batches(), []
    for i in range(3000):  # full batches, pools of 64 then 128, ..., 1024 rows, shapes evicting each other
        array = rng.standard_normal(200 + (i // 40) % 3 * 50)
        pairs.append((stored_summary(array), batches.add(array)))
    assert len(batches._open) == 1 and batches._bytes <= summaries.BUFFER_BYTES
    batches.close()
    assert batches._open == {} and batches._bytes == 0  # buffers freed
    for want, got in pairs:
        assert resolve(got) == ArraySummary(*want[1:])


def test_a_recording_computes_its_summaries_when_read_and_when_it_ends():
    import autograd.numpy as anp
    from autograd import grad

    def f(x):
        for _ in range(3 * REPEATS):
            x = anp.tanh(x) * 1.5
        return anp.sum(x)

    x = np.linspace(-1.0, 1.0, 200)
    with adtrace.record(capture="full") as full:
        grad(f)(x)
    with adtrace.record() as auto:
        grad(f)(x)
        mid = len(auto.events)  # read mid-recording: every batch computed first
        grad(f)(x)
    assert mid and len(auto.events) == 2 * mid
    kept = [e for e in auto.events[:mid] if isinstance(getattr(e, "value", None), ArraySummary)]
    assert len(kept) > 3 * REPEATS
    for full_event, auto_event in zip(full.events, auto.events[:mid]):  # the same program, event by event
        for name in ("value", "outgrad", "contribution"):
            got = getattr(auto_event, name, None)
            if isinstance(got, ArraySummary):
                assert got == adtrace.values.summarize(getattr(full_event, name))
    assert auto.events[mid:][-1].kind == "backward_end"


def test_overflowing_sums_do_not_warn():
    batches = Batches()
    big = np.full(100, 1.7e308)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        stored = [batches.add(big) for _ in range(REPEATS + 2)]
        batches.close()
    assert resolve(stored[-1]).mean == math.inf == stored[0][5]


def test_capture_auto_batches_boxed_arrays_too():
    from autograd.numpy.numpy_boxes import ArrayBox

    capture = Capture("auto")
    stored = [capture(ArrayBox(np.full(100, 2.0), 0, None)) for _ in range(REPEATS + 1)]
    assert stored[-1][1][0] is BATCHED_SUMMARY
    capture.close()
    assert resolve(stored[-1]).value == ArraySummary((100,), "float64", 2.0, 2.0, 2.0)

"""Value snapshots under each capture level."""

import re
from collections import namedtuple

import numpy as np
import pytest
from autograd.core import vspace
from autograd.numpy.numpy_boxes import ArrayBox
from autograd.numpy.numpy_vjps import untake

from adtrace.recording.values import resolve
from adtrace.recording.autograd.capture import Keeper, array_leaves
from adtrace.recording.values import (CAPTURE_LEVELS, ArraySummary, Boxed, ContainerSummary, Sparse, holds_reference,
                                      plain, summarize)
from adtrace.recording import values
import compiled_twins
from readme import readme


path = compiled_twins.fixture("values")  # each summary test both ways: the twin (_values.c) and values.py's own code


def test_auto_keeps_small_arrays_exactly_and_summarizes_large(path):
    capture = Keeper("auto", inline_size=4)
    small = np.arange(4.0)
    kept = capture(small)
    assert kept is not small and np.array_equal(kept, small)  # a copy: nothing to keep true later
    small[0] = 7.0
    assert kept[0] == 0.0
    assert Keeper("full")(small) is small  # by reference: copy-on-write keeps it true
    big = np.arange(10.0)
    assert resolve(capture(big)) == ArraySummary((10,), "float64", 0.0, 9.0, 4.5)
    assert capture(3.5) == 3.5


def test_views_are_copied_at_once():
    base = np.arange(4.0)
    snap = Keeper("full")(base.reshape(2, 2))
    base[:] = 0
    assert snap.tolist() == [[0, 1], [2, 3]]


def test_copy_flag_and_structure():
    a = np.ones(3)
    copied = Keeper("full")(a, copy=True)
    assert copied is not a and np.array_equal(copied, a)
    assert Keeper("structure")(a) is None


def test_sparse_densified_without_mutation():
    vs = vspace(np.zeros(3))
    sparse = untake(2.0, 1, vs)
    snap = resolve(Keeper("auto")(sparse))
    assert isinstance(snap, Sparse) and snap.dense.tolist() == [0, 2, 0]
    assert snap.vspace == "ArrayVSpace(shape=(3,), dtype=float64)"
    assert resolve(Keeper("auto")(sparse)).dense.tolist() == [0, 2, 0]  # applying it twice: nothing accumulated


def test_boxes_and_containers():
    from autograd.numpy.numpy_boxes import ArrayBox

    box = ArrayBox(np.array([1.0, 2.0]), 7, None)
    snap = resolve(Keeper("auto", box_level=lambda b: b._trace - 7)(box))
    assert isinstance(snap, Boxed) and snap.level == 0 and snap.value.tolist() == [1, 2]
    nested = resolve(Keeper("auto")({"a": (box, 2.0), "b": [np.zeros(2)]}))
    assert plain(nested)["a"][0].tolist() == [1, 2]
    assert len(array_leaves({"a": (box, 2.0), "b": [np.zeros(2)]})) == 2
    assert holds_reference(nested) and not holds_reference(summarize(np.zeros(100)))


def test_summary_of_odd_arrays(path):
    assert summarize(np.array([], dtype=float)).shape == (0,)
    assert summarize(np.array([3 + 4j])).max == 5.0
    with np.errstate(all="ignore"):
        assert np.isnan(summarize(np.array([np.nan, 1.0])).mean)


def test_float64_summaries_match_the_general_path(path):
    """float64 arrays take a fast path (no cast in the sum); a byte-swapped float64 array takes the
    general one (summed in float64): the same statistics to the bit, warnings and all."""
    import math
    import warnings

    rng = np.random.default_rng(4)
    for i in range(300):
        a = rng.standard_normal(int(rng.integers(1, 500))) * 10.0 ** int(rng.integers(-300, 300))
        for special in rng.choice([np.nan, np.inf, -np.inf, -0.0, 1.7e308, -1.7e308, 5e-324], size=i % 4):
            a[rng.integers(a.size)] = special
        swapped = a.astype(a.dtype.newbyteorder())
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # an overflowing sum must not warn on either path
            fast, general = summarize(a), summarize(swapped)
        assert fast.dtype == "float64" and fast.shape == general.shape
        for x, y in zip((fast.min, fast.max, fast.mean), (general.min, general.max, general.mean)):
            assert (math.isnan(x) and math.isnan(y)) or (x == y and math.copysign(1, x) == math.copysign(1, y))


def test_float64_extremes_have_the_reductions_bits(path):
    """The float64 path finds the extremes by argmin / argmax: where they are zeros of either sign
    (equal, but which one a reduction keeps depends on its order) or NaN, the summary still holds
    exactly the bits ``np.minimum.reduce`` / ``np.maximum.reduce`` give."""
    import struct

    rng = np.random.default_rng(5)
    for i in range(600):
        a = rng.choice([(0.0, -0.0, 1.0, 2.5), (0.0, -0.0, -1.0, -3.0), (0.0, -0.0), (np.nan, -1.0, 0.0, 2.0)][i % 4],
                       size=int(rng.integers(1, 300)))
        a = a.reshape(-1, 1)[::2] if i % 5 == 0 else a  # strided too
        summary = summarize(a)
        with np.errstate(all="ignore"):
            expected = np.minimum.reduce(a, None), np.maximum.reduce(a, None), np.add.reduce(a, None) / a.size
        got = summary.min, summary.max, summary.mean
        assert [struct.pack("<d", x) for x in got] == [struct.pack("<d", float(x)) for x in expected], a


@compiled_twins.needs("values")
def test_the_compiled_twin_summarizes_float64_arrays_to_the_bit():
    """The twin's one loop (min, max and numpy's pairwise sum) gives the very bits values.py's argmin,
    argmax and add.reduce give: every size up to and past its limit, 2-D, strided, every magnitude."""
    import struct

    rng = np.random.default_rng(6)
    sizes = [*range(1, 260), 1000, 2047, 2048, 2049, 4096, 4097, 8191, 8192, 8193, 20000]
    for i, n in enumerate(sizes):
        a = rng.standard_normal(n) * 10.0 ** int(rng.integers(-30, 30)) + (i % 3) * 2.0
        for b in (a, a.reshape(-1, 1), a[::2], a.reshape(1, -1).T):
            twin, reference = compiled_twins.both_ways(lambda: values.stored_summary(b), "values")
            assert twin[:3] == reference[:3] and [struct.pack("<d", x) for x in twin[3:]] == \
                [struct.pack("<d", x) for x in reference[3:]], (n, b.shape, b.strides)


@compiled_twins.needs("values")
def test_the_compiled_twin_leaves_zero_extremes_nan_and_infinity_to_values_py():
    """Where a zero's sign, a NaN or an overflow would need numpy's own order, the twin answers None."""
    statistics = values._twin.float64_statistics
    assert statistics(np.array([1.0, 2.0, 4.0])) == (1.0, 4.0, 7.0 / 3)
    for special in (0.0, -0.0, np.nan, np.inf, -np.inf, 1.7e308):
        assert statistics(np.array([1.0, special, 1.7e308 if special == 1.7e308 else 2.0])) is None, special
    assert statistics(np.ones(9000)) is None
    # a view numpy reads in another order than C order (transposed, reversed): its sum's bits are numpy's own
    assert statistics(np.arange(1.0, 7.0).reshape(2, 3).T) is None and statistics(np.arange(1.0, 4.0)[::-1]) is None
    assert statistics(np.arange(1.0, 7.0)[::2]) == (1.0, 5.0, 3.0)  # a strided one it reads in C order
    assert statistics(np.ones(3, dtype=np.float32)) is None and statistics(np.ones(0)) is None
    # values.py asks it only up to its limit (above, the call would always give None)
    size = values._PAIRWISE_MAX
    assert statistics(np.full(size, 1.5)) == (1.5, 1.5, 1.5) and statistics(np.full(size + 1, 1.5)) is None


@compiled_twins.needs("values")
def test_the_compiled_twin_summarizes_strided_views_to_the_bit():
    """Slices, steps, transposes and reversals of 1- to 3-D arrays (``z[:, k:k + w]`` of an LSTM's gates): the
    twin's statistics are values.py's own, bit for bit, or None; it answers for the views numpy reads in C order."""
    import struct

    rng = np.random.default_rng(7)
    answered = 0
    for _ in range(1500):
        shape = tuple(int(s) for s in rng.integers(1, 24, int(rng.integers(1, 4))))
        a = rng.standard_normal(shape) * 10.0 ** float(rng.uniform(-3, 3))
        view = a[tuple(slice(int(rng.integers(0, s)), None, int(rng.choice([1, 1, 2, 3, -1]))) for s in shape)]
        if view.ndim > 1 and rng.random() < 0.3:
            view = np.swapaxes(view, 0, -1)
        if view.size == 0:
            continue
        got = values._twin.float64_statistics(view)
        if got is None:
            continue
        answered += not view.flags.c_contiguous
        expected = values._statistics(view, None)
        assert [struct.pack("<d", x) for x in got] == [struct.pack("<d", x) for x in expected], (view.shape,
                                                                                                 view.strides)
    assert answered > 300


@compiled_twins.needs("values")
def test_recordings_are_the_same_with_and_without_the_compiled_twin(monkeypatch):
    """An LSTM-like recurrence and an MLP recorded under ``auto`` (summaries above the inline size) give the
    same events, byte for byte in their export, with the twin and with values.py's own code."""
    from pathlib import Path

    import adtrace
    from adtrace.report.export import events_json

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from workloads import lstm_like, tanh_mlp

    def record():
        runs = []
        for run in (lstm_like(steps=3, width=12, batch=4), tanh_mlp(width=10, layers=3, batch=8)):
            with adtrace.record(capture="auto") as recording:
                run()
            runs.append(events_json(recording))
        return runs

    exports = compiled_twins.both_ways(record, "values")
    assert exports[0] == exports[1] and "summary" in exports[0][0]


def test_invalid_options():
    with pytest.raises(ValueError, match="inline_size"):
        Keeper("auto", inline_size=-1)
    with pytest.raises(ValueError, match="capture must be one of"):
        Keeper("some")


def test_snapshot_arrays_walks_events_and_snapshots():
    from adtrace.recording.events import VJPCalled
    from adtrace.recording.values import kept_arrays

    a, b, c = np.zeros(2), np.ones(3), np.ones(1)
    event = VJPCalled("rev", 0, 1, "v1_sin", Boxed(a, 0), (Sparse("ArrayVSpace", "0", 1.0, b), {"k": [c]}))
    assert [x is y for x, y in zip(kept_arrays(event), (a, b, c))] == [True, True, True]
    assert list(kept_arrays(ArraySummary((3,), "float64", 0.0, 1.0, 0.5))) == []


@pytest.mark.parametrize("value, summarized", [
    ((np.ones(3), 1.0), False),  # flat, 4 elements
    ([np.ones(4), 1.0], True),  # flat, 5 elements
    ((1.0, 2.0, 3.0, 4.0, 5.0), True),  # flat scalars over the limit
    ((np.ones(2), (np.ones(2), 1.0)), True),  # nested: 5 elements
    ({"a": np.ones(2), "b": [1.0, 2.0]}, False),  # a dict: 4 elements
    ((np.ones(1), {"a": np.ones(4)}), True),  # a dict inside a flat-looking tuple
    ((ArrayBox(np.ones(3), 0, None), [1.0]), False),  # a boxed array counts its elements: 4
    ([ArrayBox(np.ones(3), 0, None), (np.ones(1), 1.0)], True),  # 5
    ((np.ones(2), ArrayBox(np.ones(1), 0, None)), False),  # a flat start, then a box: walked, 3
    ((np.ones(5), ArrayBox(np.ones(1), 0, None)), True),  # over the limit before the box
])
def test_containers_over_the_inline_size_are_summarized(value, summarized):
    from adtrace.recording.values import ContainerSummary

    kept = resolve(Keeper("auto", inline_size=4)(value))
    assert isinstance(kept, ContainerSummary) == summarized
    if not summarized:
        assert type(kept) is type(value)


def test_flat_containers_under_auto_are_copied_in_one_pass():
    a, b = np.array([1.0, 2.0]), np.array([3.0])
    capture = Keeper("auto", inline_size=4)
    pair = capture((a, 2.0, b))
    assert type(pair) is tuple and pair[1] == 2.0
    assert all(np.array_equal(s, v) and not np.shares_memory(s, v) for s, v in ((pair[0], a), (pair[2], b)))
    listed = capture([a, b])
    assert type(listed) is list and np.array_equal(listed[1], b) and not np.shares_memory(listed[1], b)
    summary = resolve(capture([a, a, 1.0]))  # 5 elements above the inline size 4
    assert (summary.type, summary.length, [path for path, _ in summary.leaves]) == ("list", 3, ["[0]", "[1]", "[2]"])
    Point = namedtuple("Point", "x y")
    point = capture(Point(a, 1.0))
    assert type(point) is Point and not np.shares_memory(point.x, a)


class Tagged(np.ndarray):
    pass


def test_an_ndarray_subclass_in_a_container_counts_its_elements():
    tagged = np.ones((2, 3)).view(Tagged)
    summary = resolve(Keeper("auto", inline_size=4)((tagged,)))
    assert (summary.type, summary.length, summary.leaves[0][1].shape) == ("tuple", 1, (2, 3))
    kept = Keeper("auto", inline_size=6)((tagged,))
    assert type(kept[0]) is Tagged and not np.shares_memory(kept[0], tagged)


def test_auto_stores_boxes_sparse_values_and_summaries_as_tuples_the_collector_drops():
    """The stored forms are plain tuples: once collected, Python's garbage collector no longer
    tracks them; the built dataclasses are what events show."""
    import gc

    from autograd.numpy.numpy_boxes import ArrayBox

    box = ArrayBox(np.array([1.0, 2.0]), 0, None)
    capture = Keeper("auto", inline_size=4)
    stored = [capture(box), capture(untake(2.0, 1, vspace(np.zeros(3)))), capture(np.arange(10.0)), capture([1.0] * 5)]
    assert all(type(s) is tuple for s in stored)
    for _ in range(4):  # (each collection untracks one more level of nested tuples: a container summary has four)
        gc.collect()
    assert not any(gc.is_tracked(s) for s in stored)
    assert [type(resolve(s)) for s in stored] == [Boxed, Sparse, ArraySummary, ContainerSummary]
    assert type(Keeper("full")(box)) is Boxed  # under full the recorder's copy-on-write reads the dataclasses


def test_a_user_tuple_that_looks_like_a_stored_form_stays_a_tuple():
    from adtrace.recording.values import BOXED

    value = ("<adtrace Boxed>", np.ones(1), 0)  # equal to the tag, not the tag itself
    assert value[0] == BOXED
    shown = resolve(Keeper("auto")(value))
    assert type(shown) is tuple and shown[0] == "<adtrace Boxed>"


def test_a_namedtuple_snapshot_shows_the_boxes_and_sparse_values_it_holds():
    Pair = namedtuple("Pair", "boxed sparse")
    shown = resolve(Keeper("auto")(Pair(ArrayBox(np.ones(2), 0, None), untake(2.0, 1, vspace(np.zeros(3))))))
    assert type(shown) is Pair and type(shown.boxed) is Boxed and shown.sparse.dense.tolist() == [0, 2, 0]


class _Normalising(namedtuple("_Normalising", "x y")):
    def __new__(cls, x, y):  # a library's namedtuple that turns tuples into lists
        return super().__new__(cls, list(x) if isinstance(x, tuple) else x, y)


def test_a_namedtuple_is_rebuilt_without_running_its_own_new():
    from autograd import make_vjp
    import autograd.numpy as anp

    import adtrace

    with adtrace.record() as rec, pytest.warns(UserWarning, match="independent of input"):
        make_vjp(lambda a: _Normalising(anp.sin(a), 1.0))(np.array([0.1, 0.2]))  # (autograd cannot box it)
    output = rec.of_kind("trace")[0].output
    assert type(output) is _Normalising and type(output.x) is Boxed and output.y == 1.0


def test_a_container_above_the_inline_size_is_summarized_leaf_by_leaf():
    """Real models pass lists of (W, b) and dicts of arrays: each leaf keeps its path, shape,
    dtype and statistics (issue 17: not the type and length alone)."""
    from adtrace.recording.autograd.capture import Keeper
    from adtrace.recording.values import resolve

    params = {"layers": [(np.arange(12.0).reshape(3, 4), np.zeros(4))], "scale": 2.5, "name": "mlp"}
    kept = resolve(Keeper("auto", 8)(params))
    assert isinstance(kept, ContainerSummary) and (kept.type, kept.length, kept.more) == ("dict", 3, 0)
    paths = [path for path, _ in kept.leaves]
    assert paths == ["['layers'][0][0]", "['layers'][0][1]", "['scale']", "['name']"]
    W = kept.leaves[0][1]
    assert (W.shape, W.dtype, W.min, W.max, W.mean) == ((3, 4), "float64", 0.0, 11.0, 5.5)
    assert (kept.leaves[2][1].shape, kept.leaves[2][1].mean) == ((), 2.5)
    assert kept.leaves[3][1].dtype == "str" and np.isnan(kept.leaves[3][1].mean)


def test_a_container_summary_keeps_a_bounded_number_of_leaves():
    from adtrace.recording.autograd.capture import Keeper
    from adtrace.recording.values import MAX_LEAVES, resolve

    many = [np.full(2, float(i)) for i in range(MAX_LEAVES + 5)]
    kept = resolve(Keeper("auto", 8)(many))
    assert len(kept.leaves) == MAX_LEAVES and kept.more == 5 and kept.leaves[-1][0] == f"[{MAX_LEAVES - 1}]"


def test_a_kept_container_summary_cannot_be_changed():
    import dataclasses

    kept = resolve(Keeper("auto", inline_size=2)([np.arange(3.0), 1.0, 2.0]))
    assert isinstance(kept, ContainerSummary) and kept.length == 3
    with pytest.raises(dataclasses.FrozenInstanceError):
        kept.length = 0


def test_the_readme_lists_the_capture_levels():
    """"Values and capture levels": one item per level, in order, the default first."""
    section = readme().split("\n### Values and capture levels\n", 1)[1].split("\n\n", 1)[0]
    assert re.findall(r"^- `(\w+)`", section, re.M) == list(CAPTURE_LEVELS)
    assert "`auto` (default)" in section and CAPTURE_LEVELS[0] == "auto"


def test_a_subclass_s_summary_is_of_its_values_not_its_buffer(path):
    """A masked array's buffer holds its masked values too: summarized as the pure-Python code does (the twin,
    which reads the buffer, is asked for exact ndarrays only)."""
    masked = np.ma.array([1.0, 2.0, 100.0, -50.0, 3.0], mask=[0, 0, 1, 1, 0])
    assert values.stored_summary(masked)[3:5] == (1.0, 3.0)


def test_a_dense_later_is_made_when_resolved_wherever_the_sparse_value_sits():
    """A ``Sparse`` whose dense value is a ``DenseLater`` (capture full) shows it made from its own value when resolved,
    alone, in a container or boxed; a change of its arrays (copy-on-write's) keeps it for later."""
    from adtrace.recording.values import DenseLater, map_arrays

    part = np.array([1.5, -0.0])
    kept = Sparse("ArrayVSpace(shape=(2, 3), dtype=float64)", "(:, 1)", part, DenseLater((2, 3), np.float64,
                                                                                          (slice(None), 1)))
    for stored, shown_of in [(kept, lambda v: v), ((kept, 2.0), lambda v: v[0]), (Boxed(kept, 0), lambda v: v.value)]:
        shown = shown_of(resolve(stored))
        assert type(shown) is Sparse and shown.value is part
        assert shown.dense.tolist() == [[0.0, 1.5, 0.0], [0.0, 0.0, 0.0]] and str(shown.dense[1, 1]) == "0.0"
    assert resolve(kept).dense is resolve((kept,))[0].dense  # (two events holding it: one dense array, as before)
    copied = map_arrays(kept, lambda a: a.copy())
    assert type(copied.dense) is DenseLater and copied.value is not part
    assert resolve(copied).dense.tolist() == resolve(kept).dense.tolist()
    assert resolve(copied).dense is not resolve(kept).dense

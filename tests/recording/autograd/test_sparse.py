"""Sparse cotangents described without mutating anything."""

import dataclasses

import numpy as np
from autograd.builtins import container_untake
from autograd.core import vspace
from autograd.numpy.numpy_vjps import untake

from adtrace.recording.autograd.sparse import densify, describe_index, describe_vspace, sparse_parts


def test_index_and_value_of_array_and_container_sparse_objects():
    array = untake(np.ones(2), (slice(None), 1), vspace(np.zeros((2, 3))))
    index, value = sparse_parts(array)
    assert describe_index(index) == "(:, 1)" and value.tolist() == [1, 1]
    assert densify(array).tolist() == [[0, 1, 0], [0, 1, 0]]
    container = container_untake(np.ones(3), 1, vspace([np.zeros(2), np.zeros(3)]))
    assert describe_vspace(container.vs) == "ListVSpace(len=2)" and sparse_parts(container)[0] == 1


def test_describe_index_forms():
    assert describe_index(3) == "3" and describe_index(slice(1, None, 2)) == "1::2"
    assert describe_index(np.arange(10)) == "[0 1 2 3 4 5 6 7 ...]"
    assert describe_index((slice(None), slice(0, 64))) == "(:, 0:64)"  # slices in a tuple
    assert describe_index((np.int64(3), slice(2, 5), slice(None, None, -1), Ellipsis)) == "(3, 2:5, ::-1, Ellipsis)"
    assert describe_index(slice(np.int64(1), 4)) == "1:4" and describe_index(slice(None)) == ":"
    assert sparse_parts(object()) is None


def test_the_texts_of_vector_spaces_are_kept_for_at_most_4096_spaces():
    from adtrace.recording.autograd import sparse

    spaces = [vspace(np.zeros(n)) for n in range(4100)]
    texts = [describe_vspace(vs) for vs in spaces]
    assert len(sparse._SPACES) <= 4096  # a run meeting ever new shapes does not grow without bound
    assert texts[4099] == "ArrayVSpace(shape=(4099,), dtype=float64)" == describe_vspace(spaces[4099])


def test_densify_gives_the_bits_of_autograds_own_add_at():
    """``densify`` adds a basic index's value into fresh zeros without ``np.add.at``: the very bits
    autograd's ``mut_add`` gives (``0.0 + -0.0`` is ``0.0``, NaN stays NaN), for slices, ints in tuples,
    steps and negative indices; other indices (arrays, lists, repeated positions) take ``mut_add`` itself."""
    rng = np.random.default_rng(7)
    base = rng.standard_normal((6, 8))
    base[0, :3] = (-0.0, np.nan, np.inf)
    vs = vspace(np.zeros((6, 8)))
    for index in [(slice(None), slice(0, 3)), slice(1, 4), (0, slice(None)), (slice(None, None, -2), 1),
                  (-1, slice(2, 7, 2)), 2, ([0, 0, 2],), np.array([1, 1, 3]), [0, 2], (slice(None), [1, 1])]:
        value = np.zeros((6, 8))[index]
        value = base[:value.shape[0], :value.shape[1]].copy() if value.ndim == 2 else \
            base[0, :value.shape[0]].copy() if value.ndim == 1 else base[0, 0]
        sparse = untake.fun(value, index, vs)
        got = densify(sparse)
        expected = sparse.mut_add(vs.zeros())
        assert type(got) is np.ndarray and got.shape == expected.shape and got.tobytes() == expected.tobytes(), index


def test_dense_later_makes_densifys_bits_from_the_kept_part_and_only_for_a_basic_index():
    """Under capture full a sparse cotangent's dense value is made when its event is built (``DenseLater``, no zeros
    of the whole space per ``x[i]`` while recording), from the part kept: the bits ``densify`` gives, for slices,
    ints in tuples, steps and negative indices; any other index, a container's space, another dtype or a part not
    an array is densified at once (``None``)."""
    from adtrace.recording.autograd.sparse import dense_later
    from adtrace.recording.values import DenseLater

    rng = np.random.default_rng(3)
    vs = vspace(np.zeros((6, 8)))
    for index in [(slice(None), slice(0, 3)), slice(1, 4), (0, slice(None)), (slice(None, None, -2), 1),
                  (-1, slice(2, 7, 2))]:
        value = rng.standard_normal(np.zeros((6, 8))[index].shape)
        value.flat[0] = -0.0
        sparse = untake.fun(value, index, vs)
        later = dense_later(sparse, value.copy())
        assert type(later) is DenseLater, index
        assert later.made(value.copy()).tobytes() == densify(sparse).tobytes(), index
    for index in [np.array([1, 1, 3]), [0, 2], (0, 1)]:  # an array's or a list's positions; one element (a scalar)
        value = np.zeros((6, 8))[index] + 1.0
        assert dense_later(untake.fun(value, index, vs), np.asarray(value)) is None, index
    assert dense_later(untake.fun(np.ones(8, dtype=np.float32), 0, vs), np.ones(8, dtype=np.float32)) is None
    container = container_untake(np.ones(3), 1, vspace([np.zeros(2), np.zeros(3)]))
    assert dense_later(container, np.ones(3)) is None
    assert dense_later(untake.fun(np.ones(8), 0, vs), [1.0] * 8) is None


def test_under_capture_full_a_sparse_cotangent_is_densified_when_its_event_is_built(monkeypatch):
    """A recording under capture full keeps each ``x[:, i:j]`` cotangent's dense value as a ``DenseLater`` in its
    log and shows the dense array when the events are built: the same events as densified at once."""
    import autograd.numpy as anp
    from autograd import grad

    import adtrace
    from adtrace.recording.autograd import capture
    from adtrace.recording.values import DenseLater, Sparse, kept_arrays
    from adtrace.report.export import events_json

    def f(z):
        return anp.sum(anp.tanh(z[:, 0:2]) * z[:, 2:4])

    z = np.arange(12.0).reshape(3, 4) / 10.0
    with adtrace.record(capture="full") as later:
        grad(f)(z)
    in_log = [v for v in later._log.values if type(v) is Sparse]
    assert in_log and all(type(v.dense) is DenseLater for v in in_log)
    assert not any(type(a) is DenseLater for v in in_log for a in kept_arrays(v))
    monkeypatch.setattr(capture, "dense_later", lambda sparse, part: None)
    with adtrace.record(capture="full") as at_once:
        grad(f)(z)
    assert all(type(v.dense) is np.ndarray for v in at_once._log.values if type(v) is Sparse)
    fields = [v for e in later.events for v in map(e.__getattribute__, (f.name for f in dataclasses.fields(e)))]
    shown = [v for f in fields for v in (f if type(f) is tuple else (f,)) if type(v) is Sparse]  # (ingrads: a tuple)
    assert shown and all(type(v.dense) is np.ndarray for v in shown)
    # a VJP's ingrad and its accumulation share one kept value, and their events one dense array
    assert len(shown) == len(in_log) > len({id(v) for v in in_log}) == len({id(v.dense) for v in shown})
    assert events_json(later) == events_json(at_once)

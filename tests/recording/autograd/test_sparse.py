"""Sparse cotangents described without mutating anything."""

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

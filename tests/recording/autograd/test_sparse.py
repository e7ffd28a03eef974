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

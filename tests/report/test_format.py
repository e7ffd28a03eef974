"""How the report writes a sparse cotangent: dense when known, else where it adds, else the space it adds into."""

import numpy as np

from adtrace.recording.values import Sparse
from adtrace.report.format import fmt


def test_a_sparse_cotangent_is_written_with_what_is_known_of_it():
    space = "ArrayVSpace(shape=(3,), dtype=float64)"
    assert fmt(Sparse(space, "1", 2.0, np.array([0.0, 2.0, 0.0]))) == "Sparse([0 2 0])"
    assert fmt(Sparse(space, "1", 2.0, None)) == "Sparse([1] += 2)"
    # built in a way adtrace does not know (no index) and not densified: the space it adds into
    assert fmt(Sparse("ListVSpace(len=2)", None, None, None)) == "Sparse into ListVSpace(len=2)"

"""Following an input element forward, element by element: reached, touched (the element's own
paths, cuts closed), the cuts, and the nodes it stops at."""

import autograd.numpy as np
import numpy as onp
from autograd import grad

import adtrace
from adtrace.explain.elements import Element
from adtrace.explain.graph import Graph
from adtrace.explain.reach import follow
from adtrace.recording.events import TraceReturned

W = np.array([[1.0, 0.0], [2.0, -1.0]])


def f(x):
    z = np.dot(W, x)  # z[0] reads x[0] only
    return np.sum(np.maximum(z, 0.0))


def followed(x, element, calls=True):
    with adtrace.record(capture="full", calls=calls) as rec:
        grad(f)(x)
    query = rec.user_query()
    trace = rec.of_kind(TraceReturned)[0]
    return follow(rec, query, Graph(rec.graph(), trace.root, trace.end, trace.input), element)


def test_a_dot_moves_only_the_rows_that_read_the_element():
    found = followed(np.array([1.0, 3.0]), Element((), (1,)))  # z = [1, -1]: x[1] reaches z[1] only, relu off
    assert found.reached["v1_dot"].tolist() == [False, True]
    assert "v2_maximum" not in found.reached
    assert found.touched["v2_maximum"].tolist() == [True, True]  # W[0, 1] is 0 by its value, not by dot's structure
    (cut,) = found.cuts
    assert cut[0] == "v2_maximum" and cut[3].tolist() == [False, True]


def test_through_a_node_not_followed_every_element_is_taken_as_reached():
    found = followed(np.array([1.0, 3.0]), Element((), (1,)), calls=False)
    assert found.reached["v1_dot"].tolist() == [True, True]
    assert [stop[:2] for stop in found.stops] == [("v1_dot", None)] and found.guessed >= {"v1_dot", "v2_maximum"}
    assert onp.array_equal(found.touched["v0_root"], [False, True])

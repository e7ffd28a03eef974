"""Backward passes inside backward passes: parents, the node whose VJP ran them, the user's pass."""

import autograd.numpy as anp
from autograd import grad
from autograd.misc.fixed_points import fixed_point

import adtrace
from adtrace.recording.passes import backward_passes, nested_in, user_query
from primitives import cube


def newton_sqrt(a):
    return fixed_point(lambda a: lambda x: 0.5 * (x + a / x), a, 1.0, lambda x, y: anp.abs(x - y), 1e-12)


def test_a_pass_run_by_a_rule_is_nested_in_the_pass_that_visits_its_node():
    with adtrace.record() as rec:
        grad(lambda x: anp.sin(cube(x)))(0.5)
    outer, inner = backward_passes(rec)
    assert (outer.parent, outer.node) == (None, None)
    assert inner.parent == outer.query and rec.nodes[inner.node].primitive == "cube"
    assert user_query(rec) == outer.query and nested_in(rec, outer.query) == [inner]


def test_fixed_point_passes_come_after_the_users_and_are_not_taken_for_it():
    with adtrace.record() as rec:
        grad(newton_sqrt)(2.0)
    passes = backward_passes(rec)
    assert len(passes) > 2 and rec.queries[-1] != passes[0].query
    assert user_query(rec) == passes[0].query
    assert all(p.parent == passes[0].query for p in passes[1:])
    assert {rec.nodes[p.node].primitive for p in passes[1:]} == {"fixed_point"}


def test_passes_of_the_forward_computation_are_outermost_and_come_first():
    """Under grad(grad(f)) the inner pass runs while the outer trace is built: the user's pass is the last."""
    with adtrace.record() as rec:
        grad(grad(lambda x: x * x * x))(2.0)
    passes = backward_passes(rec)
    assert [p.parent for p in passes] == [None, None]
    assert user_query(rec) == passes[-1].query and nested_in(rec, passes[-1].query) == []


def test_no_pass_no_user_query():
    with adtrace.record() as rec:
        anp.sin(1.0)
    assert backward_passes(rec) == [] and user_query(rec) is None


def test_the_recording_says_which_query_ran_inside_which():
    """fixed_point's VJP runs passes of its own while the user's pass visits its node."""
    from autograd.misc.fixed_points import fixed_point

    def newton_sqrt_iter(a):
        return lambda x: 0.5 * (x + a / x)

    def distance(x, y):
        return anp.abs(x - y)

    with adtrace.record(sites=True) as rec:
        grad(lambda a: fixed_point(newton_sqrt_iter, a, 1.0, distance, 1e-4) * a)(2.0)
    user = rec.user_query()
    passes = rec.passes()
    fixed = next(e.label for e in rec.of_kind("node") if e.primitive == "fixed_point" and e.level == 0)
    assert user == passes[0].query and passes[0].parent is None
    inner = [p for p in passes if p.parent == user]
    assert inner and all(p.node == fixed for p in inner)
    here = "tests/recording/test_passes.py:"
    assert all(e.site and e.site.startswith(here) for e in rec.of_kind("node") if e.level == 0)

"""STATE SNAPSHOT rows replayed from the events (the seed article's table for z = x*x)."""

import autograd.numpy as anp
import numpy as np
from autograd import grad

import adtrace
from adtrace.recording import snapshots as s
from adtrace.recording.values import plain
from primitives import fails_in_its_vjp


def flat(state):
    return {k: (float(plain(v)), flag) for k, (v, flag) in state.items()}


def test_square_snapshot_matches_the_seed_table():
    with adtrace.record() as rec:
        grad(lambda x: x * x)(3.0)
    rows = rec.snapshots(1)
    M, R = "v1_multiply", "v0_root"
    assert [(r.statement, r.node) for r in rows] == [
        (s.INIT, None), (s.YIELD, M), (s.POP, M), (s.VJP, M), (s.ADD, M), (s.ADD, M),
        (s.YIELD, R), (s.POP, R), (s.VJP, R), (s.NO_PARENTS, R), (s.RETURN, R)]
    assert [flat(r.outgrads) for r in rows] == [
        {M: (1, False)}, {M: (1, False)}, {}, {}, {R: (3, False)}, {R: (6, True)},
        {R: (6, True)}, {}, {}, {}, {}]
    assert [r.step for r in rows] == list(range(1, 12))
    pop_m, vjp_m, add1, add2 = rows[2], rows[3], rows[4], rows[5]
    assert (float(pop_m.outgrad[0]), pop_m.outgrad[1]) == (1.0, False)
    assert vjp_m.ingrads == (3.0, 3.0)
    assert (add1.previous, add1.ingrads, add1.parent) == (None, 3.0, R)
    assert add2.previous == (3.0, False)
    assert rows[7].outgrad == (6.0, True) and rows[-1].outgrad == 6.0


def test_distinct_states_in_order():
    with adtrace.record() as rec:
        grad(lambda x: x * x)(3.0)
    states = []
    for row in rec.snapshots(1):
        state = flat(row.outgrads)
        if not states or states[-1] != state:
            states.append(state)
    assert states == [{"v1_multiply": (1, False)}, {}, {"v0_root": (3, False)}, {"v0_root": (6, True)}, {}]


def test_snapshot_values_stay_true_under_in_place_accumulation():
    with adtrace.record() as rec:
        grad(lambda x: anp.sum(x * x + x * x + x * x))(np.array([1.0, 2.0]))
    root_states = [r.outgrads["v0_root"][0].tolist() for r in rec.snapshots(1)
                   if r.statement == s.ADD and r.parent == "v0_root"]
    assert root_states == [[1, 2], [2, 4], [3, 6], [4, 8], [5, 10], [6, 12]]


def test_replay_of_an_interrupted_query_stops_where_it_stopped():
    fails = fails_in_its_vjp(ArithmeticError)
    with adtrace.record() as rec:
        try:
            grad(lambda x: fails(x) * x)(2.0)
        except ArithmeticError:
            pass
    rows = rec.snapshots(1)
    assert rows[-1].statement == s.RETURN and rows[-1].outgrad is None
    assert rows[-2].statement == s.POP and rows[-2].node == "v1_fails"


def test_forward_mode_inside_a_query_is_not_replayed_into_it():
    from autograd import make_jvp

    with adtrace.record() as rec:
        value, tangent = make_jvp(grad(lambda y: y * y * y))(2.0)(1.0)
    assert tangent == 12.0
    for query in rec.queries:
        assert rec.snapshots(query)[-1].outgrads == {}
        assert all(e.mode == "rev" for e in rec.query_events(query))
    assert any(e.mode == "fwd" for e in rec.of_kind("add_outgrads"))


def test_a_snapshot_read_from_a_recording_cannot_be_changed():
    import dataclasses

    import pytest

    with adtrace.record() as rec:
        grad(lambda x: x * x)(3.0)
    row = rec.snapshots(1)[4]
    with pytest.raises(dataclasses.FrozenInstanceError):
        row.parent = "v9_elsewhere"  # a reader cannot rewrite what the pass did
    assert rec.snapshots(1)[4].parent == "v0_root"


def test_a_state_snapshot_has_the_fields_it_always_had():
    """``StateSnapshot`` is public: its fields, and ``kind`` None on autograd's rows (an engine of
    micrograd's shape: the kind of the event that made the row)."""
    from dataclasses import fields
    from micrograd.engine import Value
    assert [f.name for f in fields(s.StateSnapshot)] == [
        "step", "statement", "node", "outgrad", "ingrads", "previous", "parent", "outgrads", "kind", "replaced"]
    with adtrace.record() as rec:
        grad(lambda x: x * x)(3.0)
    rows = rec.snapshots(1)
    assert all(type(r) is s.StateSnapshot and r.kind is None and r.replaced is None for r in rows)
    assert rows == rec.replay(rec.query_events(1))
    with adtrace.record(engine="micrograd") as micro:
        x = Value(3.0)
        (x * x).backward()
    assert [r.kind for r in micro.snapshots(1)] == [e.kind for e in micro.query_events(1)]


def test_the_rows_counted_are_the_rows_replayed():
    """``tally`` counts from each event class's declared ``steps``; the replay makes the rows: the
    same number, for a root's vjp with no parents (two rows), a nested pass, and micrograd."""
    from micrograd.engine import Value
    with adtrace.record() as square:
        grad(lambda x: x * x)(3.0)
    with adtrace.record() as nested:
        grad(grad(lambda x: anp.sin(x) * x))(1.0)
    with adtrace.record(engine="micrograd") as micro:
        x = Value(3.0)
        (x * x + x).relu().backward()
    for rec in (square, nested, micro):
        for query in rec.queries:
            events = rec.query_events(query)
            assert rec.tally(events).rows == len(rec.snapshots(query)) > len(events) - (rec.code is not None)
            for n in range(len(events)):  # (the report counts the rows of a query's first events)
                assert s.tally(events[:n], rec.code).rows == len(list(s.replay(events[:n], rec.code)))
            assert all(row.stands_for in row.event.steps + (s.NO_PARENTS,) for row in s.replay(events, rec.code))

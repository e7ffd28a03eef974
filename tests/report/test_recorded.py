"""The recorded passes as the report writes them: the user's pass marked as such among several."""

from autograd import grad

import adtrace
from adtrace.report import ReportOptions
from adtrace.report.nesting import Nesting
from adtrace.report.recorded import snapshot_section


def headings(rec):
    return [line for line in snapshot_section(rec, Nesting(rec), ReportOptions()).splitlines()
            if line.startswith("### Query")]


def test_only_the_users_pass_is_marked_and_only_among_several():
    with adtrace.record() as rec:
        grad(lambda x: x * x)(3.0)
    assert headings(rec) == ["### Query 1 (level 0)"]  # one pass: nothing to tell apart

    with adtrace.record() as rec:
        grad(lambda x: x * x)(3.0)
        grad(lambda x: x * x * x)(2.0)
    marked = [h for h in headings(rec) if h.endswith(": the user's pass")]
    assert len(headings(rec)) == 2 and marked == [f"### Query {rec.user_query()} (level 0): the user's pass"]


def test_the_levels_table_counts_each_levels_nodes():
    """grad(grad(x**3)): the inner trace (level 1) makes the root and two products; the outer one
    (level 0) its own three and six more the inner pass makes while it records."""
    from adtrace.report.recorded import levels_section

    with adtrace.record() as rec:
        grad(grad(lambda x: x * x * x))(2.0)
    rows = [line.split("|")[1:-1] for line in levels_section(rec, Nesting(rec)).splitlines()
            if line.startswith("| ") and not line.startswith("| level")]
    nodes = {int(cells[0]): int(cells[1]) for cells in rows}
    assert nodes == {0: 9, 1: 3} == {level: sum(n.level == level for n in rec.nodes.values()) for level in (0, 1)}


def test_a_report_of_values_whose_gradients_were_never_computed_says_so():
    """draw_dot before backward(): every .grad is 0, and the report says no gradient was computed; a value
    made after the pass is named; a recording whose pass reached every value says nothing; autograd's
    recordings (no values keeping a .grad) say nothing."""
    from learner_passes import Value

    from adtrace.report import render_recording

    with adtrace.record(engine=Value) as rec:
        x = Value(2.0)
        x * x + x
    assert "**No backward pass ran: no value's gradient was computed.**" in render_recording(rec)
    with adtrace.record(engine=Value) as rec:
        x = Value(2.0)
        y = x * x + x
        y.backward()
        y * x
    text = render_recording(rec).split("\n## ")[0]
    assert "**1 of 4 values' gradients were never computed:**" in text and "`v3_mul`" in text
    with adtrace.record(engine=Value) as rec:
        (Value(2.0) * 3.0).backward()
    assert "never computed" not in render_recording(rec) and "No backward pass ran" not in render_recording(rec)
    with adtrace.record() as rec:
        grad(lambda x: x * x)(3.0)
    assert "never computed" not in render_recording(rec)


def test_a_report_of_a_training_loop_that_never_zeroes_its_gradients_says_so_first():
    """A recording of several steps, each ``loss.backward()`` then an update, ``.grad`` never set back to 0:
    the recording's own report (``rec`` in a notebook) named nothing, as ``check`` and a traced call's report
    do; now its last pass's bugs of the whole pass, at its top. Zeroed between steps: nothing."""
    from learner_passes import Value

    from adtrace.report import render_recording

    def train(zero, steps=6):
        w = Value(0.5)
        for _ in range(steps):
            loss = w * w * 3.0
            if zero:
                w.grad = 0.0
            loss.backward()
            w.data -= 0.1 * w.grad

    for zero in (False, True):
        with adtrace.record(engine=Value, sites=True) as rec:
            train(zero)
        head = render_recording(rec).split("\n## ")[0]
        if zero:
            assert "The backward pass is wrong" not in head
            continue
        (line,) = [line for line in head.split("\n\n") if "wrong" in line]
        site = f"tests/report/test_recorded.py:{train.__code__.co_firstlineno + 1}"
        assert line.startswith("**The backward pass is wrong (pass 6): a gradient was not zero when the pass "
                               f"began**, at `v0_leaf` (made at {site}): v0_leaf.grad was "), line
        assert "the gradient pass 5 (backward() from v15_mul" in line, line

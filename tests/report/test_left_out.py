"""The report's last section says what the options left out, and only that."""

import autograd.numpy as anp
from autograd import jacobian

import adtrace
from adtrace.report import ReportOptions, render_recording


def three_queries():
    """``jacobian`` of a 3-vector: one backward pass per output row, three outermost queries."""
    with adtrace.record() as rec:
        jacobian(lambda x: anp.sin(x) * 2.0)(anp.array([0.1, 0.2, 0.3]))
    return rec


def test_state_snapshots_are_said_cut_only_when_passes_are_left_out():
    rec = three_queries()
    assert len(rec.queries) == 3
    every = render_recording(rec, ReportOptions(max_queries=3))
    assert every.count("### Query") == 3 and "backward passes are shown" not in every
    cut = render_recording(rec, ReportOptions(max_queries=2))
    assert cut.count("### Query") == 2
    assert "State snapshots of 2 of 3 backward passes are shown: `ReportOptions(max_queries=N)`." in cut

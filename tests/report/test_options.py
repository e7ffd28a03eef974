"""The report's options and their defaults, as a reader meets them."""

import autograd.numpy as anp
from autograd import jacobian

import adtrace
from adtrace.report import ReportOptions, render_recording


def test_by_default_the_first_ten_passes_have_their_state_snapshots():
    with adtrace.record() as rec:
        jacobian(lambda x: anp.sin(x) * 2.0)(anp.linspace(0.1, 1.1, 11))  # 11 rows: 11 backward passes
    assert ReportOptions().max_queries == 10
    report = render_recording(rec)
    assert report.count("### Query") == 10
    assert "State snapshots of 10 of 11 backward passes are shown" in report

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

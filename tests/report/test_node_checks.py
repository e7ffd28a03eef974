"""The checks' rows as a reader sees them: each shows the tolerance it used, and pass or FAIL follows
from the printed numbers; the vjp and jvp rows say why their numbers agree; the summary's
finite-difference row says what u is, without a stray escape."""

import re

import numpy as np
from autograd.extend import defjvp, defvjp, primitive

import adtrace
from adtrace.checker import check_call
from adtrace.compare.traced_call import trace_call
from adtrace.report import render
from adtrace.report.node_checks import node_checks_table


@primitive
def exp_twice_too_steep(x):
    return np.exp(x)


defvjp(exp_twice_too_steep, lambda ans, x: lambda g: 2 * g * ans)
defjvp(exp_twice_too_steep, lambda g, ans, x: 2 * g * ans)


def f(x):
    return np.sum(exp_twice_too_steep(x) * np.sin(x))


def rows_of(table):
    lines = [line for line in table.splitlines() if line.startswith("|")]
    headers = [c.strip() for c in lines[0].strip("|").split("|")]
    return [dict(zip(headers, (c.strip() for c in line.strip("|").split("|")))) for line in lines[2:]]


def test_every_row_shows_the_tolerance_and_its_status_follows_from_the_printed_numbers():
    import autograd.numpy as anp

    report = adtrace.check(lambda x: anp.sum(exp_twice_too_steep(x) * anp.sin(x)), np.array([360.0, 1.0, -0.5]))
    rows = rows_of(node_checks_table(report))
    assert {r["status"] for r in rows} == {"pass", "FAIL"}
    for row in rows:
        assert (float(row["difference"]) <= float(row["tolerance"])) == (row["status"] == "pass"), row
        relative, verb, tolerance = re.search(r"relative difference (\S+) (within|beyond) tolerance (\S+) \(rtol 1e-05",
                                              row["note"]).groups()
        assert (verb == "within") == (row["status"] == "pass") == (float(relative) <= float(tolerance)), row


def test_the_vjp_and_jvp_rows_say_why_their_numbers_agree():
    import autograd.numpy as anp

    table = node_checks_table(adtrace.check(lambda x: anp.sum(anp.sin(x)), np.array([0.3, 1.0])))
    rows = rows_of(table)
    assert [r["analytic"] for r in rows if r["test"] == "vjp"] == [r["analytic"] for r in rows if r["test"] == "jvp"]
    assert "dot(VJP(u), v) in a vjp row and dot(u, JVP(v)) in a jvp row" in table
    assert "u and v are random directions (seeded)" in table


def test_the_reports_finite_difference_row_says_what_u_is_and_prints_its_tolerance():
    import autograd.numpy as anp

    call = check_call(trace_call(lambda x: anp.sum(anp.sin(x) * x), (np.array([0.3, 1.0]),)),
                      lambda x: anp.sum(anp.sin(x) * x))
    text = render(call)
    row = next(line for line in text.splitlines() if line.startswith("| central finite differences"))
    assert "dot(gradient, u)" in row and "u: a random direction, seeded" in row and "\\" not in row
    relative, tolerance = re.search(r"relative difference (\S+) within tolerance (\S+) \(rtol 1e-05", row).groups()
    assert "| pass " in row and float(relative) <= float(tolerance)


def test_the_section_says_what_was_checked_for_each_kind_of_engine():
    """autograd: each node's local VJP re-run alone; an engine with its own backward(): what each
    `_backward` wrote into its children's `.grad` (and assignments instead of additions)."""
    from micrograd.engine import Value as MicroValue

    from adtrace.checker.engine_rules import check_engine
    from adtrace.report import ReportOptions
    from adtrace.report.node_checks import node_checks_section

    def intro(report):
        return node_checks_section(report, ReportOptions()).split("\n\n")[1]

    autograd_report = adtrace.check(lambda x: x * x, 3.0)
    assert intro(autograd_report).startswith("Each node's local VJP")
    micrograd_report = check_engine(lambda a: a * a, 3.0, cls=MicroValue)
    assert intro(micrograd_report).startswith("Each node's contributions (what its `_backward` wrote")


def test_a_report_s_node_checks_name_the_bug_of_the_whole_pass_first():
    import learner_passes
    from adtrace.checker.engine_rules import check_engine_call
    from adtrace.compare.traced_engine_call import trace_engine_call
    from adtrace.report import render

    call = check_engine_call(trace_engine_call(learner_passes.not_zeroed, (1.0,), engine=learner_passes.Value))
    section = render(call).split("\n## Checks per node")[1]
    assert "(`zero at start`: a gradient was not zero when the pass began)" in section
    assert "The backward pass is wrong: a gradient was not zero when the pass began, at `v0_leaf`" in section
    right = check_engine_call(trace_engine_call(learner_passes.zeroed, (1.0,), engine=learner_passes.Value))
    assert "whole backward pass" not in render(right)

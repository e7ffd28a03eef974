"""The appendix of nested backward passes: each pass run inside a node's VJP, one row each."""

import autograd.numpy as anp
from autograd import grad

import adtrace
from adtrace.report import ReportOptions
from adtrace.report.nested import nested_section
from adtrace.report.nesting import Nesting
from primitives import cube


def test_a_pass_run_inside_a_vjp_has_its_row():
    with adtrace.record() as rec:
        grad(lambda x: anp.sin(cube(x)))(0.5)
    text = nested_section(rec, Nesting(rec), ReportOptions())
    assert "The 1 nested pass" in text
    rows = [line for line in text.splitlines() if line.startswith("| ") and not line.startswith("| query")]
    assert len(rows) >= 1 and rows[0].split("|")[1].strip() == "2", text  # query 2, the rule's own pass

"""The lecture mapping names the engine whose statements it lists: autograd's backward_pass, or an
engine's own backward()."""

from autograd import grad
from micrograd.engine import Value as MicroValue

import adtrace
from adtrace.report.lecture import lecture_mapping_section
from adtrace.report.nesting import Nesting


def header(rec):
    return next(line for line in lecture_mapping_section(rec, Nesting(rec)).splitlines() if line.startswith("|"))


def test_the_mapping_names_the_engine_whose_statements_it_lists():
    with adtrace.record() as rec:
        grad(lambda x: x * x)(3.0)
    assert "autograd statement (backward_pass)" in header(rec) and "runs (autograd)" in header(rec)

    with adtrace.record(engine=MicroValue) as rec:
        (MicroValue(2.0) * MicroValue(3.0)).backward()
    assert f"micrograd statement ({rec.code.name})" in header(rec) and "runs (micrograd)" in header(rec)
    assert "autograd" not in header(rec)

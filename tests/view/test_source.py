"""The code panels (``view/source.py``): autograd's source and the lecture's, a line marked per statement."""

from adtrace.compare.traced_call import trace_call
from adtrace.view import page_data
from view_cases import sum_and_sine


def test_each_statement_marks_its_line_of_autograds_source_and_the_lecture():
    from adtrace.view.source import FORWARD_LINES, REVERSE_LINES

    code = page_data(call=trace_call(sum_and_sine, (3.0,), mode="both"))["code"]
    for mode, lines in (("rev", REVERSE_LINES), ("fwd", FORWARD_LINES)):
        panel = code[mode]
        marked = {s["text"]: (panel["autograd"]["lines"][s["autograd"]].strip(),
                              panel["lecture"]["lines"][s["lecture"]].strip()) for s in panel["statements"]}
        assert marked == lines, mode


def test_a_source_not_available_is_said_and_marks_no_line(monkeypatch):
    """An autograd installed without its source (a zipped install): the panel says so."""
    import autograd.core

    from adtrace.view.source import code_panels

    monkeypatch.setattr(autograd.core, "backward_pass", len)  # a builtin: inspect finds no source
    panel = code_panels()["rev"]
    assert panel["autograd"]["lines"] == ["# source of len not available"]
    assert all(s["autograd"] is None for s in panel["statements"]) and panel["statements"][0]["lecture"] == 1


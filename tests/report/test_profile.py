"""Where the work went: nodes per line of the user's code and per primitive, largest first."""

import autograd.numpy as anp
from autograd import grad

import adtrace
from adtrace.report.nesting import Nesting
from adtrace.report.profile import work_section
from primitives import cube


def uneven(x):
    y = anp.sin(x)  # 1 node
    for _ in range(10):
        y = y * 1.5 + x  # 2 nodes per turn
    return y


def table_rows(text, header):
    lines = text[text.index(header):].splitlines()
    out = []
    for line in lines[2:]:
        if not line.startswith("|"):
            break
        out.append([c.strip() for c in line.strip("|").split("|")])
    return out


def profile(f, sites=True):
    with adtrace.record(sites=sites) as rec:
        grad(f)(0.3)
    return work_section(rec, Nesting(rec))


def test_lines_are_ranked_by_their_nodes_with_their_primitives_and_share():
    text = profile(uneven)
    rows = table_rows(text, "| line")
    assert [r[1:] for r in rows] == [["20", "multiply x10, add x10", "90.9%"], ["1", "root x1", "4.5%"],
                                     ["1", "sin x1", "4.5%"]]
    assert rows[0][0].startswith("tests/report/test_profile.py:") and rows[1][0] == "(input)"
    assert table_rows(text, "| primitive ")[0] == ["`multiply`", "10", "45.5%"]
    assert text.splitlines()[2] == "22 nodes recorded; the user's backward pass (query 1) visited 22."


def test_what_ran_inside_a_vjp_is_one_row_on_its_nodes_line():
    text = profile(lambda x: anp.sin(cube(x)))
    rows = table_rows(text, "| line")
    inside = [r for r in rows if r[0].startswith("inside the VJP of v1_cube (tests/report/test_profile.py:")]
    assert inside and inside[0][1:3] == ["3", "1 nested pass: multiply x2, root x1"]
    assert table_rows(text, "| primitive ")[-1] == ["(inside a node's VJP)", "3", "50.0%"]
    assert "6 nodes recorded, 3 of them inside a node's VJP" in text


def test_without_source_lines_it_says_so_and_counts_primitives():
    text = profile(uneven, sites=False)
    assert "| line" not in text and "`record(sites=True)` adds them" in text and "| `add` " in text

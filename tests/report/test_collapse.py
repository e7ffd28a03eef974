"""A large graph grouped by the user's source line: node counts, and edges counted between groups."""

import autograd.numpy as anp
from autograd import grad

import adtrace
from adtrace.report.collapse import group_nodes


def two_lines(x):
    for _ in range(50):
        y = anp.sin(x) * 2.0  # line A: 2 nodes per turn
        x = anp.cos(y) + x  # line B: 2 nodes per turn
    return x


def recorded(f, sites=True):
    with adtrace.record(sites=sites) as rec:
        grad(f)(0.3)
    return [n for n in rec.nodes.values()]


def test_nodes_are_grouped_by_the_line_that_made_them_and_edges_counted():
    nodes = recorded(two_lines)
    groups, group_of = group_nodes(nodes, max_groups=40)
    assert [g.name.split(":")[-1] for g in groups][0] == "(input)"
    names = [g.name for g in groups]
    line_a, line_b = names[1], names[2]
    assert line_a.startswith("tests/report/test_collapse.py:")
    assert int(line_b.split(":")[1]) == int(line_a.split(":")[1]) + 1
    by_name = {g.name: g for g in groups}
    assert dict(by_name[line_a].primitives) == {"sin": 50, "multiply": 50}
    assert dict(by_name[line_b].primitives) == {"cos": 50, "add": 50}
    every_edge = sum(len(n.parents) for n in nodes if hasattr(n, "parents"))
    counted = sum(g.inner + sum(g.parents.values()) for g in groups)
    assert counted == every_edge  # each node edge counted once: inside a group, or between two
    assert by_name[line_a].inner == 50 and by_name[line_b].parents[line_a] == 50  # sin -> multiply; multiply -> cos
    assert by_name[line_a].parents == {"(input)": 1, line_b: 49}  # the loop carries x from line B to line A


def test_past_max_groups_the_smallest_groups_share_one():
    nodes = recorded(two_lines)
    groups, group_of = group_nodes(nodes, max_groups=2)
    assert [g.name.split(":")[0] for g in groups] == ["2 other lines", "tests/report/test_collapse.py"]
    assert [len(g.labels) for g in groups] == [101, 100]  # the input and line B; line A
    assert set(group_of.values()) == {g.name for g in groups}


def test_without_source_lines_nodes_are_grouped_by_primitive():
    groups, _ = group_nodes(recorded(two_lines, sites=False), max_groups=40)
    assert [g.name for g in groups] == ["primitive root", "primitive sin", "primitive multiply", "primitive cos",
                                        "primitive add"]

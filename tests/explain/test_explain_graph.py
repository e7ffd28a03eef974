"""Paths counted from the input, one per parent position."""

from adtrace.explain.graph import Graph

# x*x + sin(x): two edges from the root into the multiply
PARENTS = {"v0_root": (), "v1_multiply": ("v0_root", "v0_root"), "v2_sin": ("v0_root",),
           "v3_add": ("v1_multiply", "v2_sin"), "v4_cos": ("v0_root",)}


def test_paths_count_each_parent_position():
    graph = Graph(PARENTS, "v0_root", "v3_add")
    assert graph.paths() == 3 and graph.exits() == 4  # and one to the sink cos
    assert graph.fraction("v1_multiply", 0) == graph.fraction("v1_multiply", 1) == 1 / 4
    assert graph.fraction("v3_add", 0) == 2 / 4


def test_a_node_nothing_consumes_is_a_sink():
    graph = Graph(PARENTS, "v0_root", "v3_add")
    assert graph.sinks() == ["v4_cos"]
    assert graph.fraction_ending_at("v4_cos") == 1 / 4
    assert graph.descendants("v2_sin") == {"v3_add"}

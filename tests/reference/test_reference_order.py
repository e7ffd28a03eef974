"""Orders: the lecture's depth-first reverse topological order, and the validity check."""

import autograd.numpy as anp
import pytest

import adtrace.reference as ref
from reference_corpus import EXTRA_CASES, autograd_graph


class N:
    """A bare node for order tests: a name and its inputs."""

    def __init__(self, label, *parents):
        self.label, self.parents = label, parents


def labels(nodes):
    return [n.label for n in nodes]


def test_topo_order_is_depth_first_post_order():
    x = N("x")
    a = N("a", x, x)
    b = N("b", x)
    c = N("c", a, b)
    d = N("d", b, c)
    assert labels(ref.topo_order(d)) == ["x", "b", "a", "c", "d"]
    assert labels(ref.reverse_topo_order(d)) == ["d", "c", "a", "b", "x"]


def test_long_chain_needs_no_recursion():
    node = N("x")
    for i in range(5000):
        node = N(f"v{i}", node)
    order = ref.reverse_topo_order(node)
    assert len(order) == 5001 and order[0] is node and order[-1].label == "x"


def test_only_nodes_the_output_depends_on_are_visited():
    graph = ref.trace_graph(lambda x: (anp.cos(x), anp.sin(x) * 2.0)[1], 0.1)
    assert labels(ref.reverse_topo_order(graph.out)) == ["v3_multiply", "v2_sin", "v0_root"]


GRAPH = {"v0_root": (), "v1_sin": ("v0_root",), "v2_multiply": ("v1_sin", "v0_root")}


def test_is_reverse_topological_accepts_valid_orders():
    assert ref.is_reverse_topological(["v2_multiply", "v1_sin", "v0_root"], GRAPH)
    assert ref.is_reverse_topological((), {})


@pytest.mark.parametrize(
    "order, why",
    [
        (["v1_sin", "v2_multiply", "v0_root"], "a node after one of its parents"),
        (["v2_multiply", "v0_root", "v1_sin"], "the root before a user"),
        (["v2_multiply", "v1_sin"], "a node missing"),
        (["v2_multiply", "v1_sin", "v1_sin", "v0_root"], "a node twice"),
        (["v2_multiply", "v1_sin", "v0_root", "v9_cos"], "a node not in the graph"),
    ],
)
def test_is_reverse_topological_rejects(order, why):
    # a verdict, False: the orders check's `passed` a caller of the Python API reads is a bool, not None
    assert ref.is_reverse_topological(order, GRAPH) is False, why



def test_a_leaf_may_come_anywhere_only_when_asked():
    """An engine of micrograd's shape: a leaf's local backward does nothing, so visiting it early loses nothing."""
    early_leaf = ["v2_multiply", "v0_root", "v1_sin"]
    assert ref.is_reverse_topological(early_leaf, GRAPH) is False
    assert ref.is_reverse_topological(early_leaf, GRAPH, leaves_anywhere=True)
    early_sin = ["v1_sin", "v2_multiply", "v0_root"]  # (v1_sin before its consumer: still not)
    assert ref.is_reverse_topological(early_sin, GRAPH, leaves_anywhere=True) is False

def test_is_reverse_topological_rejects_parents_outside_the_graph():
    assert not ref.is_reverse_topological(["v1_sin"], {"v1_sin": ("v0_root",)})


def test_both_orders_valid_where_they_differ():
    """On ``orders_differ`` autograd's toposort visits sin before x*x; the lecture's
    depth-first order visits x*x first. Both are valid reverse topological orders."""
    case = next(c for c in EXTRA_CASES if c.name == "orders_differ")
    graph = ref.trace_graph(case.fun, case.x)
    mine = labels(ref.reverse_topo_order(graph.out))
    parents, autograds, _ = autograd_graph(case.fun, case.x)
    assert mine != autograds
    assert mine == ["v4_multiply", "v3_multiply", "v1_multiply", "v2_sin", "v0_root"]
    assert autograds == ["v4_multiply", "v3_multiply", "v2_sin", "v1_multiply", "v0_root"]
    assert ref.is_reverse_topological(mine, parents)
    assert ref.is_reverse_topological(autograds, ref.parent_labels(graph))

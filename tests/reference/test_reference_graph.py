"""Graph tracing: the engine's own node type on autograd's tracer, labelled like the recorder."""

import autograd.numpy as anp
import numpy as np
import pytest
from autograd.core import VJPNode
from autograd.tracer import isbox, notrace_primitives

import adtrace.reference as ref
from adtrace.reference.graph import ReferenceNode, reachable
from reference_corpus import ALL_CASES, autograd_graph


def test_square_graph_has_the_root_twice_as_input():
    graph = ref.trace_graph(lambda x: x * x, 3.0)
    root, multiply = graph.nodes
    assert (root.label, multiply.label) == ("v0_root", "v1_multiply")
    assert graph.root is root and graph.out is multiply and graph.value == 9.0
    assert multiply.parents == (root, root) and multiply.argnums == (0, 1)
    assert multiply.fun is anp.multiply and multiply.args == (3.0, 3.0) and multiply.value == 9.0


def test_node_stores_kwargs_and_argnums_of_the_call():
    graph = ref.trace_graph(lambda x: anp.sum(2.0 * x, axis=0, keepdims=True), np.ones((2, 3)))
    _, mul, total = graph.nodes
    assert mul.argnums == (1,) and mul.args[0] == 2.0
    assert total.kwargs == {"axis": 0, "keepdims": True}
    assert total.value.shape == (1, 3)


@pytest.mark.parametrize("case", ALL_CASES, ids=lambda c: c.name)
def test_labels_and_structure_equal_autograds_graph(case):
    """Same tracer, same creation order: the same labels as a recording of autograd."""
    graph = ref.trace_graph(case.fun, case.x)
    parents, _, created = autograd_graph(case.fun, case.x)
    assert [n.label for n in graph.nodes] == created
    assert ref.parent_labels(graph) == parents


def test_parent_labels_reachable_only_or_all():
    def f(x):
        anp.cos(x)  # computed, unused: a node the backward pass never visits
        return anp.sin(x) + x

    graph = ref.trace_graph(f, 0.5)
    assert ref.parent_labels(graph) == {
        "v0_root": (),
        "v2_sin": ("v0_root",),
        "v3_add": ("v2_sin", "v0_root"),
    }
    assert ref.parent_labels(graph, only_reachable=False)["v1_cos"] == ("v0_root",)
    assert reachable(graph.out) == {graph.nodes[0], graph.nodes[2], graph.nodes[3]}


def test_notrace_primitives_are_those_of_vjpnode():
    assert notrace_primitives[ReferenceNode] == notrace_primitives[VJPNode]
    assert notrace_primitives[ReferenceNode] is not notrace_primitives[VJPNode]
    graph = ref.trace_graph(lambda x: x[anp.argmax(x)] + anp.sum(anp.sign(x)), np.array([1.0, -3.0]))
    assert [n.label for n in graph.nodes] == ["v0_root", "v1_ArrayBox_getitem", "v2_add"]


def test_output_independent_of_input_has_no_out_node():
    with pytest.warns(UserWarning, match="independent"):
        graph = ref.trace_graph(lambda x: 2.0, 1.0)
    assert graph.out is None and graph.value == 2.0 and [n.label for n in graph.nodes] == ["v0_root"]


@pytest.mark.parametrize("x", [3, True, "a", object()])
def test_values_without_a_vector_space_are_out_of_scope(x):
    with pytest.raises(TypeError, match="reference engine: no vector space to differentiate in"):
        ref.trace_graph(lambda x: x, x)


@pytest.mark.parametrize("x", [(1.0, 2.0), {"a": 1.0}, [np.array([1.0, 2.0])]])
def test_containers_are_captured_with_their_own_root(x):
    graph = ref.trace_graph(lambda x: x, x)
    assert graph.root.value is x and [n.label for n in graph.nodes] == ["v0_root"]


def test_nested_captures_keep_their_own_nodes():
    """Under grad(grad(f)), outer nodes created during the inner trace join the outer graph."""
    graphs = {}

    def inner(x):
        graphs["inner"] = ref.trace_graph(lambda y: anp.sin(y) * y, x)
        return graphs["inner"].value

    graphs["outer"] = ref.trace_graph(inner, 0.3)
    for graph in graphs.values():
        assert all(n.graph is graph for n in graph.nodes)
        assert [n.label for n in graph.nodes] == ["v0_root", "v1_sin", "v2_multiply"]
    assert isbox(graphs["inner"].root.value) and not isbox(graphs["outer"].root.value)


def test_capture_is_the_former_name_of_trace_graph_and_warns():
    with pytest.warns(DeprecationWarning, match="trace_graph"):
        graph = ref.capture(lambda x: x * x, 3.0)
    traced = ref.trace_graph(lambda x: x * x, 3.0)
    labels = [[n.label for n in ref.reverse_topo_order(g.out)] for g in (graph, traced)]
    assert labels[0] == labels[1] == ["v1_multiply", "v0_root"]

"""The graph the exports draw: nodes (label, primitive, the user's line, value) and edges (argument
position), from autograd's and micrograd's recordings; its JSON form; ``Recording``'s export methods."""

import inspect
import json

import autograd.numpy as anp
import pytest
from autograd import grad, make_jvp

import adtrace
import view_cases
from adtrace.view.graph_export import caption, exported_graph, graph_json

HERE = "tests/view/test_graph_export.py"


def f(x):
    y = anp.sin(x) * x
    return y + 2.0 * x


LINE = inspect.getsourcelines(f)[1]


def recorded(capture="auto"):
    with adtrace.record(capture=capture, sites=True) as rec:
        grad(f)(3.0)
    return rec


def test_each_node_has_its_label_primitive_line_and_value_and_each_edge_its_argument_position():
    nodes, edges = exported_graph(recorded())
    by_label = {n.label: n for n in nodes}
    assert list(by_label) == ["v0_root", "v1_sin", "v2_multiply", "v3_multiply", "v4_add"]
    assert [n.primitive for n in nodes] == ["(input)", "sin", "multiply", "multiply", "add"]
    assert by_label["v0_root"].value == "3.0" and by_label["v0_root"].line is None  # the root: the input x
    assert by_label["v1_sin"].value == repr(float(anp.sin(3.0))) and by_label["v1_sin"].short == "0.14112"
    assert by_label["v1_sin"].line == f"{HERE}:{LINE + 1}"
    assert caption(by_label["v1_sin"])[-1] == "0.14112"  # (the box: as the reports write it)
    assert by_label["v4_add"].line == f"{HERE}:{LINE + 2}" and float(by_label["v4_add"].value) == pytest.approx(
        anp.sin(3.0) * 3.0 + 6.0, rel=1e-5)
    assert {(e.parent, e.child, e.argnum) for e in edges} == {
        ("v0_root", "v1_sin", 0), ("v1_sin", "v2_multiply", 0), ("v0_root", "v2_multiply", 1),
        ("v0_root", "v3_multiply", 1),  # 2.0 * x: x is the second argument (the constant makes no edge)
        ("v2_multiply", "v4_add", 0), ("v3_multiply", "v4_add", 1)}
    assert caption(by_label["v1_sin"]) == ["v1_sin", "sin", f"{HERE}:{LINE + 1}", "0.14112"]


def test_capture_structure_keeps_no_value():
    nodes, _ = exported_graph(recorded("structure"))
    assert [n.value for n in nodes] == [None] * 5
    assert caption(nodes[1]) == ["v1_sin", "sin", f"{HERE}:{LINE + 1}"]


def test_a_forward_mode_recording_has_its_jvp_nodes():
    with adtrace.record(sites=True) as rec:
        make_jvp(f)(3.0)(1.0)
    nodes, edges = exported_graph(rec)
    assert [(n.primitive, n.mode) for n in nodes][1:] == [("sin", "fwd"), ("multiply", "fwd"), ("multiply", "fwd"),
                                                          ("add", "fwd")]
    assert len(edges) == 6


def test_a_micrograd_recording_has_its_leaves_and_ops():
    pytest.importorskip("micrograd")
    from micrograd.engine import Value

    with adtrace.record(engine="micrograd", sites=True) as rec:
        a, b = Value(2.0), Value(3.0)
        (a * b + a).backward()
    nodes, edges = exported_graph(rec)
    assert [(n.label, n.primitive, n.value) for n in nodes] == [
        ("v0_leaf", "(leaf)", "2.0"), ("v1_leaf", "(leaf)", "3.0"), ("v2_mul", "*", "6.0"), ("v3_add", "+", "8.0")]
    assert nodes[2].line == f"{HERE}:{inspect.currentframe().f_lineno - 4}"
    assert {(e.parent, e.child, e.argnum) for e in edges} == {("v0_leaf", "v2_mul", 0), ("v1_leaf", "v2_mul", 1),
                                                             ("v2_mul", "v3_add", 0), ("v0_leaf", "v3_add", 1)}


def test_a_learners_class_is_named_by_its_own_name_and_small_arrays_are_whole():
    from value_classes import Value

    with adtrace.record(engine=Value) as rec:
        a = Value(2.0)
        (a * a).backward()
    assert json.loads(graph_json(rec))["engine"] == "Value"  # (it said micrograd)
    with adtrace.record(capture="full") as rec:
        grad(lambda x: anp.sum(anp.sin(x)))(anp.array([0.1, 0.2]))
    sin = next(n for n in exported_graph(rec)[0] if n.primitive == "sin")
    assert [float(v) for v in sin.value.strip("[]").split()] == list(anp.sin(anp.array([0.1, 0.2])))


def test_a_parent_made_before_the_recording_is_a_node_too():
    """Every edge's two ends are nodes: a parent the recording never saw made is shown unrecorded."""
    nodes, edges = exported_graph(view_cases.autograd_node_made_before())
    labels = [n.label for n in nodes]
    assert nodes[0].primitive == "(unrecorded)" and nodes[0].value is None and nodes[0].mode is None
    assert all(e.parent in labels and e.child in labels for e in edges)
    assert [e.parent for e in edges if e.child == "v0_multiply"] == [nodes[0].label]


def test_the_json_form_holds_the_nodes_and_edges_with_labels_lines_and_values():
    rec = recorded()
    data = json.loads(graph_json(rec))
    assert data["format"] == 1 and data["engine"] == "autograd"
    sin = next(n for n in data["nodes"] if n["label"] == "v1_sin")
    assert sin == {"label": "v1_sin", "primitive": "sin", "line": f"{HERE}:{LINE + 1}", "value": "0.1411200080598672",
                   "mode": "rev", "level": 0}
    assert float(sin["value"]) == anp.sin(3.0)  # whole: every digit
    assert {"parent": "v0_root", "child": "v2_multiply", "argnum": 1} in data["edges"]
    assert graph_json(rec) == graph_json(recorded())  # the same call, the same text


def test_recording_methods_export_and_write_the_graph(tmp_path):
    rec = recorded()
    for method, name in ((rec.graph_svg, "g.svg"), (rec.to_dot, "g.dot"), (rec.graph_json, "g.json")):
        text = method()
        assert method(path=tmp_path / name) == text and (tmp_path / name).read_text(encoding="utf-8") == text
    assert rec.graph_svg().startswith("<svg ") and rec.to_dot().startswith('digraph "adtrace" {')
    assert json.loads(rec.graph_json())["nodes"][1]["label"] == "v1_sin"

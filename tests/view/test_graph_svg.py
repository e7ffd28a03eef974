"""The SVG export: well-formed, standalone (no script, no link, no external font), each node with its
lines where the layout put it, each edge with its argument position, no edge through a node, the same
bytes for the same call, the user's text escaped."""

import importlib.util
import re
import xml.etree.ElementTree as ET

import autograd.numpy as anp
import pytest
from autograd import grad

import adtrace
from adtrace.view.graph_export import caption, exported_graph
from adtrace.view.graph_svg import graph_svg

SVG = "{http://www.w3.org/2000/svg}"


def f(x):
    y = anp.sin(x) * x
    for _ in range(6):
        y = y * anp.cos(y) + x  # x feeds every step: edges spanning several layers
    return y


def recorded():
    with adtrace.record(sites=True) as rec:
        grad(f)(0.5)
    return rec


def drawn(svg):
    """``{node label: (box (left, top, right, bottom), [its text lines])}`` and the edges
    ``[(title, [points], label text)]`` read back from the SVG."""
    root = ET.fromstring(svg)
    nodes, edges = {}, []
    for g in root.iter(f"{SVG}g"):
        if g.get("class") == "node":
            rect = g.find(f"{SVG}rect")
            x, y, w, h = (float(rect.get(k)) for k in ("x", "y", "width", "height"))
            nodes[g.get("id")[len("node-"):]] = ((x, y, x + w, y + h), [t.text for t in g.findall(f"{SVG}text")])
        elif g.get("class") == "edge":
            numbers = [float(n) for n in re.findall(r"-?[\d.]+", g.find(f"{SVG}path").get("d"))]
            edges.append((g.find(f"{SVG}title").text, list(zip(numbers[::2], numbers[1::2])),
                          g.find(f"{SVG}text").text))
    return root, nodes, edges


def test_the_svg_is_standalone_with_every_node_and_edge_labelled():
    rec = recorded()
    svg = graph_svg(rec)
    root, nodes, edges = drawn(svg)
    assert root.tag == f"{SVG}svg" and root.get("font-family") == "monospace"
    assert not re.search(r"<script|href|@import|@font-face|url\((?!#arrow\))|https?://(?!www\.w3\.org/2000/svg\")", svg)
    graph_nodes, graph_edges = exported_graph(rec)
    assert [n.label for n in graph_nodes] == list(nodes)
    for node in graph_nodes:
        assert nodes[node.label][1] == caption(node)  # label, primitive, the user's line, value
    assert nodes["v1_sin"][1][2].startswith("tests/view/test_graph_svg.py:")
    assert sorted((title, text) for title, _, text in edges) == sorted(
        (f"{e.parent} -> {e.child}, arg {e.argnum}", f"arg {e.argnum}") for e in graph_edges)


def test_each_edge_runs_from_its_parents_box_up_to_its_childs_and_through_no_other():
    _, nodes, edges = drawn(graph_svg(recorded()))
    for title, points, _ in edges:
        parent, child = title.split(",")[0].split(" -> ")
        (pl, pt, pr, _), (cl, _, cr, cb) = nodes[parent][0], nodes[child][0]
        assert pl <= points[0][0] <= pr and points[0][1] == pytest.approx(pt)  # leaves the parent's top
        assert cl <= points[-1][0] <= cr and points[-1][1] == pytest.approx(cb)  # enters the child's bottom
        assert pt > cb  # the output on top
        for (ax, ay), (bx, by) in zip(points, points[1:]):
            for k in range(41):
                x, y = ax + (bx - ax) * k / 40, ay + (by - ay) * k / 40
                crossed = [label for label, ((left, top, right, bottom), _) in nodes.items()
                           if label not in (parent, child) and left < x < right and top < y < bottom]
                assert crossed == [], (title, crossed)


def test_the_same_call_gives_the_same_bytes_with_no_address_or_absolute_path(tmp_path):
    svg = graph_svg(recorded())
    assert svg == graph_svg(recorded())
    assert not re.search(r"0x[0-9a-f]{6,}|/work/|/tmp/|\d{4}-\d\d-\d\d", svg)


def test_the_users_text_is_escaped(tmp_path, monkeypatch):
    """A file name with ``<&>"`` in it (the user's line) stays text: the SVG is still well-formed."""
    source = tmp_path / 'we<i>rd&"name.py'
    source.write_text("import autograd.numpy as np\ndef g(x):\n    return np.sin(x) * x\n")
    spec = importlib.util.spec_from_file_location("weird_name", source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.chdir(tmp_path)
    with adtrace.record(sites=True) as rec:
        grad(module.g)(1.0)
    _, nodes, _ = drawn(graph_svg(rec, title="<b>&"))
    assert nodes["v1_sin"][1][2] == 'we<i>rd&"name.py:3'
    assert ET.fromstring(graph_svg(rec, title="<b>&")).find(f"{SVG}title").text == "<b>&"


def test_a_long_value_is_shortened_in_its_box_and_whole_in_its_tooltip():
    x = anp.linspace(0.1, 1.2, 12)
    with adtrace.record(sites=True) as rec:
        grad(lambda v: anp.sum(anp.sin(v)))(x)
    root = ET.fromstring(graph_svg(rec))
    node = next(g for g in root.iter(f"{SVG}g") if g.get("id") == "node-v1_sin")
    whole = next(n.value for n in exported_graph(rec)[0] if n.label == "v1_sin")
    shown = [t.text for t in node.findall(f"{SVG}text")][-1]
    assert len(whole) > 40 and len(shown) <= 40 and shown.endswith(f"... ({len(whole)} chars)")
    assert node.find(f"{SVG}title").text == f"v1_sin = {whole}"


def test_a_micrograd_recording_is_drawn_too():
    pytest.importorskip("micrograd")
    from micrograd.engine import Value

    with adtrace.record(engine="micrograd", sites=True) as rec:
        a, b = Value(2.0), Value(-3.0)
        ((a * b).relu() + a).backward()
    _, nodes, edges = drawn(graph_svg(rec))
    assert {label: lines[:2] for label, (_, lines) in nodes.items()} == {
        "v0_leaf": ["v0_leaf", "(leaf)"], "v1_leaf": ["v1_leaf", "(leaf)"], "v2_mul": ["v2_mul", "*"],
        "v3_ReLU": ["v3_ReLU", "ReLU"], "v4_add": ["v4_add", "+"]}
    assert sorted(text for _, _, text in edges) == ["arg 0", "arg 0", "arg 0", "arg 1", "arg 1"]

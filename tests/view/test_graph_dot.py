"""The DOT export, read back by a strict parser of the part of graphviz's grammar it writes (every
string quoted and unescaped as graphviz does), and drawn by ``dot`` itself where graphviz is installed."""

import re
import shutil
import subprocess

import autograd.numpy as anp
import pytest
from autograd import grad

import adtrace
from adtrace.view.graph_dot import graph_dot, quoted
from adtrace.view.graph_export import caption, exported_graph

TOKEN = re.compile(r'\s*(?:(?P<string>"(?:[^"\\]|\\.)*")|(?P<arrow>->)|(?P<punct>[{}\[\];,=])|(?P<id>[A-Za-z_]\w*)'
                   r'|(?P<number>-?(?:\.\d+|\d+(?:\.\d*)?)))')


def tokens(text):
    position, found = 0, []
    while text[position:].strip():
        match = TOKEN.match(text, position)
        assert match, f"not DOT at {text[position:position + 40]!r}"
        kind = match.lastgroup
        found.append((kind, match.group(kind)))
        position = match.end()
    return found


def unquoted(token):
    """A quoted DOT string as graphviz reads it: ``\\"`` a quote; any other backslash kept (graphviz's
    label escapes: ``\\n`` a line break, ``\\\\`` a backslash)."""
    kind, text = token
    assert kind == "string", token
    return text[1:-1].replace('\\"', '"')


def label_lines(value):
    """A label's lines as graphviz reads them: ``\\n`` ends a line, ``\\\\`` is one backslash; any
    other escape (``\\N``, ``\\l``, a lone backslash) is one graphviz would read as more than text."""
    lines, line, k = [], "", 0
    while k < len(value):
        if value[k] != "\\":
            line, k = line + value[k], k + 1
            continue
        escape = value[k + 1:k + 2]
        assert escape in ("n", "\\"), f"an escape graphviz would read: {value[k:k + 2]!r} in {value!r}"
        if escape == "n":
            lines.append(line)
            line = ""
        else:
            line += "\\"
        k += 2
    return lines + [line]


def parse(text):
    """``(name, {id: attributes}, [(from, to, attributes)], {graph attributes})`` of a ``digraph``;
    an edge naming a node never declared, or anything outside the grammar, fails."""
    items = tokens(text)
    assert items[:3] == [("id", "digraph"), items[1], ("punct", "{")] and items[-1] == ("punct", "}")
    name, body, k = unquoted(items[1]), items[3:-1], 0
    nodes, edges, settings = {}, [], {}

    def attributes(k):
        assert body[k] == ("punct", "["), body[k]
        found, k = {}, k + 1
        while body[k] != ("punct", "]"):
            key, equals, value = body[k:k + 3]
            assert key[0] == "id" and equals == ("punct", "=") and value[0] in ("string", "id", "number"), body[k:k + 3]
            found[key[1]] = unquoted(value) if value[0] == "string" else value[1]
            k += 3
            if body[k] == ("punct", ","):
                k += 1
        return found, k + 1

    while k < len(body):
        head = body[k]
        assert head[0] == "id", head
        if body[k + 1] == ("punct", "="):
            settings[head[1]], k = body[k + 2][1], k + 3
        elif head[1] in ("node", "edge", "graph"):
            settings[head[1]], k = attributes(k + 1)
        elif body[k + 1] == ("arrow", "->"):
            target = body[k + 2]
            assert target[0] == "id" and head[1] in nodes and target[1] in nodes, (head, target)
            found, k = attributes(k + 3)
            edges.append((head[1], target[1], found))
        else:
            assert head[1] not in nodes, f"{head[1]} declared twice"
            nodes[head[1]], k = attributes(k + 1)
        assert body[k] == ("punct", ";"), body[k]
        k += 1
    return name, nodes, edges, settings


def f(x):
    y = anp.sin(x) * x
    return anp.tanh(y) + x


def recorded():
    with adtrace.record(sites=True) as rec:
        grad(f)(0.5)
    return rec


def test_the_dot_text_is_a_digraph_of_every_node_and_edge_with_its_lines():
    rec = recorded()
    name, nodes, edges, settings = parse(graph_dot(rec))
    graph_nodes, graph_edges = exported_graph(rec)
    assert name == "adtrace" and settings["rankdir"] == "BT"  # inputs at the bottom
    ids = {n.label: f"n{i}" for i, n in enumerate(graph_nodes)}
    assert list(nodes) == list(ids.values())
    for node in graph_nodes:
        assert label_lines(nodes[ids[node.label]]["label"]) == caption(node)
        assert nodes[ids[node.label]]["tooltip"] == node.label
    assert [(a, b, e["label"]) for a, b, e in edges] == [(ids[e.parent], ids[e.child], f"arg {e.argnum}")
                                                         for e in graph_edges]
    assert graph_dot(rec) == graph_dot(recorded())


@pytest.mark.parametrize("text", ['a "quoted" name', "back\\slash", "\\N \\l \\G", "ends in \\", 'x\\"y', "a\nb"])
def test_no_text_can_end_its_string_or_become_a_graphviz_escape(text):
    value = unquoted(tokens(quoted(text, "second"))[0])
    shown = text.replace("\n", "\\n")  # (a line break inside a line: shown as an escape, report.format.visible)
    assert label_lines(value) == [shown, "second"]


@pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz is not installed (it is never installed for this)")
def test_graphviz_draws_it(tmp_path):
    path = tmp_path / "g.dot"
    recorded().to_dot(path)
    out = subprocess.run(["dot", "-Tsvg", str(path)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stderr == "", out.stderr
    assert out.stdout.count('class="node"') == 5 and out.stdout.count('class="edge"') == 6

"""The user's variable names in the report's tables and the check table: the node the source assigns is
named beside its label (``v3_tanh (h@model.py:5)``), the operations inside the assigned expression are not."""

import importlib.util
import textwrap

import autograd.numpy as np
import pytest

import adtrace
from adtrace.compare.traced_call import trace_call
from adtrace.report import render
from adtrace.report.node_checks import node_checks_table, verdict_line

PROGRAM = '''
import autograd.numpy as np
from autograd.extend import defjvp, defvjp, primitive


@primitive
def steep(x):
    return np.exp(x)


defvjp(steep, lambda ans, x: lambda g: 2 * g * ans)  # deliberately wrong: the check names y
defjvp(steep, lambda g, ans, x: g * ans)

def loss(w):
    h = np.tanh(w * 2.0)
    for _ in range(2):
        h = np.sin(h)
    y = steep(h)
    return np.sum(y * h)
'''


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    """``(loss, its folder)``: one file, named as no other test's (two files shown alike name nothing)."""
    folder = tmp_path_factory.mktemp("naming")
    path = folder / "naming_model.py"
    path.write_text(textwrap.dedent(PROGRAM))
    spec = importlib.util.spec_from_file_location("naming_model", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.loss, folder


def rows_of(markdown, heading):
    """The rows of the first table after ``heading``, as dicts by header."""
    lines = markdown.split(heading, 1)[1].splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("|"))
    table = lines[first:next((i for i in range(first, len(lines)) if not lines[i].startswith("|")), len(lines))]
    headers = [c.strip() for c in table[0].strip("|").split("|")]
    return [dict(zip(headers, (c.strip() for c in line.strip("|").split("|")))) for line in table[2:]]


def test_the_tables_name_the_assigned_node_beside_its_label_and_only_it(program):
    loss, tmp_path = program
    report = render(trace_call(loss, (np.array([0.5, -1.0]),), relative_to=tmp_path))
    graph = {row["node"].split(" ")[0]: row["node"] for row in rows_of(report, "## Graph")}
    assert graph["v2_tanh"] == "v2_tanh (h@naming_model.py:15)"
    assert graph["v1_multiply"] == "v1_multiply"  # w * 2.0: inside h's expression, not h
    assert [graph["v3_sin"], graph["v4_sin"]] == ["v3_sin (h@naming_model.py:17)", "v4_sin (h@naming_model.py:17)"]
    assert graph["v5_steep"] == "v5_steep (y@naming_model.py:18)"
    assert graph["v6_multiply"] == "v6_multiply" and graph["v7_sum"] == "v7_sum"  # a return names nothing
    calls = [row["node"] for row in rows_of(report, "## Call sequence")]
    assert "v2_tanh (h@naming_model.py:15) = tanh" in calls
    assert "v3_sin (h@naming_model.py:17) -> v2_tanh (h@naming_model.py:15)" in calls  # both ends of an accumulation
    snapshot = {row["node"] for row in rows_of(report, "## State snapshot")}
    assert {"v5_steep (y@naming_model.py:18)", "v1_multiply", "v0_root"} <= snapshot
    side = {row["node"] for row in rows_of(report, "## Side by side")}
    assert "v4_sin (h@naming_model.py:17)" in side
    assert render(trace_call(loss, (np.array([0.5, -1.0]),), relative_to=tmp_path)) == report  # deterministic


def test_forward_modes_tables_name_the_assigned_node_too(program):
    loss, tmp_path = program
    report = render(trace_call(loss, (np.array([0.5, -1.0]),), mode="fwd", relative_to=tmp_path))
    for heading in ("## Forward mode\n", "## Forward mode side by side"):
        nodes = [row["node"] for row in rows_of(report, heading)]
        assert "v2_tanh (h@naming_model.py:15)" in nodes and "v1_multiply" in nodes, heading


def test_the_check_table_and_its_verdict_name_the_failing_nodes_variable(program):
    loss, tmp_path = program
    checked = adtrace.check(loss, np.array([0.5, -1.0]), relative_to=tmp_path)
    sites = {row["node"]: row["call site"] for row in rows_of("\n" + node_checks_table(checked), "\n")}
    assert sites["v2_tanh"] == "h@naming_model.py:15" and sites["v1_multiply"] == "naming_model.py:15"
    assert sites["v5_steep"] == "y@naming_model.py:18" and sites["v7_sum"] == "naming_model.py:19"
    assert verdict_line(checked).startswith("First failing node: `v5_steep` (`steep`) argument 0, called at "
                                            "y@naming_model.py:18: ")


ENGINE_PROGRAM = '''
def loss(w, x):
    h = (w * x).relu()
    out = h * w + x
    return out - w
'''


def test_an_engines_tables_and_check_table_name_the_assigned_node_too(tmp_path):
    from adtrace.checker.engine_rules import check_engine_call
    from adtrace.compare.traced_engine_call import trace_engine_call
    path = tmp_path / "engine_naming_model.py"
    path.write_text(textwrap.dedent(ENGINE_PROGRAM))
    spec = importlib.util.spec_from_file_location("engine_naming_model", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    call = check_engine_call(trace_engine_call(module.loss, (-2.0, 3.0), engine="micrograd", relative_to=tmp_path))
    report = render(call)
    graph = {row["node"].split(" ")[0]: row["node"] for row in rows_of(report, "## Graph")}
    assert graph["v3_ReLU"] == "v3_ReLU (h@engine_naming_model.py:3)" and graph["v2_mul"] == "v2_mul"
    assert graph["v5_add"] == "v5_add (out@engine_naming_model.py:4)" and graph["v4_mul"] == "v4_mul"
    assert [graph[label] for label in ("v7_mul", "v8_add")] == ["v7_mul", "v8_add"]  # a return names nothing
    calls = [row["node"] for row in rows_of(report, "## Call sequence")]
    assert "v3_ReLU (h@engine_naming_model.py:3) = ReLU" in calls
    sites = {row["node"]: row["call site"] for row in rows_of("\n" + node_checks_table(call.node_checks), "\n")}
    assert sites["v3_ReLU"] == "h@engine_naming_model.py:3" and sites["v2_mul"] == "engine_naming_model.py:3"
    assert sites["v5_add"] == "out@engine_naming_model.py:4"

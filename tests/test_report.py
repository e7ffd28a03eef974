"""The reporter: the seed's tables for x*x, escaping, determinism, caps, JSON export."""

import json
import re

import autograd.numpy as anp
import numpy as np
from autograd import grad
from autograd.extend import defvjp, primitive

import adtrace
from adtrace.report import ReportOptions, render, render_recording
from adtrace.report.export import events_json
from adtrace.report.format import cell, fmt
from adtrace.report.mermaid import escape
from adtrace.compare.traced_call import trace_call


def square(x):
    return x * x


def section(text, title):
    start = text.index(title)
    end = text.find("\n## ", start + 1)
    return text[start:] if end < 0 else text[start:end]


def table_rows(text):
    return [line for line in text.splitlines() if line.startswith("|") and not line.startswith("|--")]


def cells(row):
    return [c.strip() for c in re.split(r"(?<!\\)\|", row)[1:-1]]


def test_square_snapshot_rows_carry_the_seed_states_in_order():
    text = render(trace_call(square, (3.0,)))
    rows = [cells(r) for r in table_rows(section(text, "## State snapshot"))[1:]]
    states = [r[-1] for r in rows]
    distinct = [s for i, s in enumerate(states) if i == 0 or s != states[i - 1]]
    assert distinct == ["{v1_multiply:(1,False)}", "{}", "{v0_root:(3,False)}", "{v0_root:(6,True)}", "{}"]
    assert rows[-1][0] == "11. `return outgrad[0]`" and rows[-1][2] == "6"
    assert [r[4] for r in rows if "add_outgrads" in r[0]] == ["None", "(3,False)"]


def test_square_lecture_mapping_counts():
    text = render(trace_call(square, (3.0,)))
    rows = {cells(r)[0]: cells(r)[2:] for r in table_rows(section(text, "## Lecture mapping"))[1:]}
    assert rows["`node_to_grad = {out: [1]}`"] == ["1", "1"]
    assert rows["`for i in reverse_topo_order(out)`"] == ["2", "2"]
    assert rows["`append v_k_to_i_bar to node_to_grad[k]`"] == ["2", "2"]
    assert rows["`compute v_k_to_i_bar = v_i_bar * dv_i/dv_k`"] == ["2", "2"]  # 2 vjp calls; 2 partials
    assert rows["`return adjoint of input v_input_bar`"] == ["1", "1"]


def test_square_side_by_side():
    text = render(trace_call(square, (3.0,)))
    rows = {cells(r)[0]: cells(r) for r in table_rows(section(text, "## Side by side"))[1:]}
    assert rows["v0_root"][2:7] == ["[3, 3]", "6", "None -> (3,False) -> (6,True)", "6", "exact"]
    assert rows["v1_multiply"][2:7] == ["[1]", "1", "None -> (1,False)", "1", "exact"]
    assert "First divergent node" not in text


def test_a_wrong_rule_is_named_as_the_first_divergent_node():
    @primitive
    def double(x):
        return 2.0 * x

    defvjp(double, lambda ans, x: lambda g: 3.0 * g)  # wrong: should be 2 g
    import adtrace.reference as ref

    ref.defvjp(double, lambda ans, x: lambda g: 2.0 * g)  # the reference engine knows better
    try:
        call = trace_call(lambda x: anp.sin(double(x)) * x, (0.5,))
    finally:
        del ref.primitive_vjps[double]
    text = render(call)
    assert "**First divergent node: `v0_root`**" in text
    assert "**DIFFERS**" in section(text, "## Side by side")
    assert any(c.name.startswith("reference engine") and not c.passed for c in call.checks)
    assert any(c.name == "central finite differences" and not c.passed for c in call.checks)


def test_values_format_with_six_significant_digits():
    assert fmt(1.8609332) == "1.86093" and fmt(3.0) == "3" and fmt(np.float64(-0.0)) == "0"
    assert fmt((np.array(6.0), True)) == "(6,True)" and fmt(np.arange(3.0)) == "[0 1 2]"
    assert fmt(np.arange(20.0)).startswith("array (20,) float64 min 0 max 19 mean 9.5")
    assert fmt(object()) == "object"  # never a repr with a memory address


WEIRD = 'pipe|new\nline "quoted" <b> [x] {y} #z `tick` & done'


def test_escaping_of_a_hostile_primitive_name():
    @primitive
    def weird(x):
        return 2.0 * x

    weird.__name__ = WEIRD
    defvjp(weird, lambda ans, x: lambda g: 2.0 * g)
    text = render(trace_call(lambda x: weird(x) * x, (1.5,)))
    assert not any(line.startswith('line "quoted"') for line in text.splitlines())  # the name's line break stays in its cell
    for block in text.split("\n\n"):
        rows = table_rows(block)
        if rows:  # every row has as many unescaped pipes as the header
            widths = {len(re.findall(r"(?<!\\)\|", r)) for r in rows}
            assert len(widths) == 1, block
    assert "pipe\\|new<br>line" in text
    mermaid = text.split("```mermaid\n")[1].split("```")[0].splitlines()
    assert_valid_mermaid(mermaid)
    assert escape(WEIRD) in "\n".join(mermaid)


def assert_valid_mermaid(lines):
    """The subset of Mermaid flowchart syntax the reporter writes: quoted labels with entity codes."""
    assert lines[0] == "flowchart BT"
    node = re.compile(r'^    n\d+\["(?:[^"\[\]{}<>|`\n]|<br/>)*"\]$')  # <br/> is Mermaid's line break
    edge = re.compile(r'^    n\d+ -->\|"arg \d+"\| n\d+$')
    for line in lines[1:]:
        assert node.match(line) or edge.match(line), line


def test_reports_are_deterministic():
    first = render(trace_call(square, (3.0,)))
    second = render(trace_call(square, (3.0,)))
    assert first == second
    assert not re.search(r"0x[0-9a-f]{6,}|/tmp/|/root/|/home/", first)


def test_large_graphs_are_capped_and_exported_whole():
    def chain(x):
        for _ in range(2500):
            x = anp.sin(x) * 1.0001
        return x

    call = trace_call(chain, (0.3,), capture="structure")
    text = render(call, ReportOptions(max_rows=50, max_graph_nodes=60))
    assert len(call.recording.nodes) == 5001
    assert "more rows (table capped at 50 rows" in text and "```mermaid" not in text
    assert "above the flowchart cap of 60" in text
    exported = json.loads(events_json(call.recording))
    assert len(exported["events"]) == len(call.recording.events)
    assert exported["events"][0] == {"kind": "root", "mode": "rev", "level": 0, "query": None, "label": "v0_root"}


def test_recording_renders_itself_in_jupyter():
    with adtrace.record() as rec:
        grad(square)(3.0)
    text = rec._repr_markdown_()
    assert text == render_recording(rec) and "## State snapshot" in text and "{v0_root:(6,True)}" in text


def test_forward_and_higher_order_sections():
    call = trace_call(lambda x: x * x + anp.sin(x), (3.0,), mode="both")
    text = render(call)
    assert "## Forward mode" in text and "## Forward mode side by side" in text
    assert all(c.passed for c in call.checks)
    call = trace_call(lambda x: grad(lambda y: y * y * y)(x) * x, (2.0,))
    text = render(call)
    assert "## Levels (higher order)" in text and "VSpace.add" in text


def test_cell_escapes_pipes_and_newlines():
    assert cell("a|b\nc\\") == "a\\|b<br>c\\\\"

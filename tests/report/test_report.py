"""The reporter: the seed's tables for x*x, escaping, determinism, caps, JSON export."""

import json
import re

import autograd.numpy as anp
import numpy as np
from autograd import elementwise_grad as egrad
from autograd import grad, make_jvp
from autograd.extend import defvjp, primitive

import adtrace
from adtrace.report import ReportOptions, render, render_recording
from adtrace.report.compared import side_by_side_section
from adtrace.report.export import events_json
from adtrace.report.format import cell, fmt
from adtrace.report.mermaid import escape
from adtrace.compare.traced_call import trace_call
from adtrace.compare.traced_engine_call import trace_engine_call
from seed import square
from view_cases import wrong_rule_call


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


def test_lecture_mapping_counts_a_vjp_call_per_node_and_a_partial_per_input():
    """x*x*x + sin(x): 5 nodes visited (root, two products, sin, add); autograd calls each node's
    VJP once (5), the lecture computes one partial adjoint per input position (2+2+1+2 = 7)."""
    text = render(trace_call(lambda x: x * x * x + anp.sin(x), (0.5,)))
    rows = {cells(r)[0]: cells(r)[2:] for r in table_rows(section(text, "## Lecture mapping"))[1:]}
    assert rows["`compute v_k_to_i_bar = v_i_bar * dv_i/dv_k`"] == ["5", "7"]
    assert rows["`for i in reverse_topo_order(out)`"] == ["5", "5"]
    assert rows["`v_i_bar = sum(node_to_grad[i])`"] == ["5", "5"]
    assert rows["`for k in inputs(i)`"] == ["7", "7"]
    assert rows["`append v_k_to_i_bar to node_to_grad[k]`"] == ["7", "7"]


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
    # the name's line break stays in its cell
    assert not any(line.startswith('line "quoted"') for line in text.splitlines())
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
    """The subset of Mermaid flowchart syntax the reporter writes: quoted labels with entity codes;
    an edge says its argument position, or how many edges of a collapsed graph it stands for."""
    assert lines[0] == "flowchart BT"
    node = re.compile(r'^    n\d+\["(?:[^"\[\]{}<>|`\n]|<br/>)*"\]$')  # <br/> is Mermaid's line break
    edge = re.compile(r'^    n\d+ -->\|"(arg \d+|\d+ edges?|its VJP)"\| n\d+$')
    for line in lines[1:]:
        assert node.match(line) or edge.match(line), line


def test_reports_are_deterministic():
    first = render(trace_call(square, (3.0,)))
    second = render(trace_call(square, (3.0,)))
    assert first == second
    assert not re.search(r"0x[0-9a-f]{6,}|/tmp/|/root/|/home/", first)


def test_large_graphs_are_collapsed_capped_and_exported_whole():
    def chain(x):
        for _ in range(2500):
            x = anp.sin(x) * 1.0001
        return x

    call = trace_call(chain, (0.3,), capture="structure")
    text = render(call, ReportOptions(max_rows=50, collapse_above=60))
    assert len(call.recording.nodes) == 5001
    assert "more rows (table capped at 50 rows" in text
    graph = section(text, "## Graph")
    mermaid = graph.split("```mermaid\n")[1].split("```")[0].splitlines()
    assert_valid_mermaid(mermaid)
    assert len(mermaid) == 1 + 2 + 1  # two boxes (the input, the loop's line) and the edge between them
    assert "5000 nodes: sin x2500, multiply x2500<br/>4999 edges inside" in mermaid[2]
    assert "`adtrace report --collapse-above 5001`" in graph
    left_out = section(text, "## Left out of this report")
    assert "`--collapse-above 5001`" in left_out and "`--max-rows N`" in left_out and "--json FILE" in left_out
    exported = json.loads(events_json(call.recording))
    assert len(exported["events"]) == len(call.recording.events)
    assert exported["events"][0] == {"kind": "root", "mode": "rev", "level": 0, "query": None, "label": "v0_root"}


def test_a_graph_up_to_the_threshold_is_drawn_node_by_node():
    call = trace_call(lambda x: anp.sin(x) * x, (0.3,))
    assert "n2[\"v2_multiply = multiply\"]" in render(call, ReportOptions(collapse_above=3))
    collapsed = render(call, ReportOptions(collapse_above=2))
    assert "v2_multiply" not in section(collapsed, "## Graph") and "2 nodes: sin x1, multiply x1" in collapsed


def test_a_report_of_10000_nodes_stays_under_300_kb_and_says_what_it_left_out():
    def chain(x):
        for _ in range(5000):
            x = anp.sin(x) * 1.0001
        return x

    call = trace_call(chain, (0.3,))
    text = render(call)
    assert len(call.recording.nodes) == 10001 and len(text.encode()) < 300_000
    left_out = section(text, "## Left out of this report")
    assert "The call sequence, state snapshots and the side by side stop after 200 rows" in left_out
    assert "every event with every value whole" in left_out


def test_no_line_of_a_default_report_is_wider_than_400_characters():
    """egrad(egrad(tanh)) on 4 points (autograd's tanh example): its outgrads dicts and boxed
    arrays made lines of 778 characters before values were abbreviated."""
    def tanh(x):
        y = anp.exp(-2.0 * x)
        return (1.0 - y) / (1.0 + y)

    text = render(trace_call(lambda x: egrad(egrad(tanh))(x), (np.linspace(-1.0, 1.0, 4),)))
    assert max(len(line) for line in text.splitlines()) <= 400
    assert "| g = [1 1 1 1] " in text  # short values stay whole
    assert cell("Box[level 1](Box[level 0]([2 0.666667 -0.666667 -2]))") in text


def test_capture_structure_claims_no_comparison():
    call = trace_call(lambda x: anp.exp(anp.sin(x) * x), (0.7,), capture="structure")
    text = render(call)
    assert call.alignment == [] and "## Side by side" not in text
    assert "DIFFERS" not in text and "divergent" not in text
    assert text.count("no values were recorded") == 1
    assert [c.name for c in call.checks] == ["both visit orders are reverse topological", "central finite differences"]
    assert all(c.passed for c in call.checks)


def test_the_report_opens_with_the_result_the_checks_and_where_the_work_went():
    text = render(trace_call(square, (3.0,)))
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings[:3] == ["## Summary", "## Where the work went", "## Graph"]
    assert text.index("### Checks") < text.index("## Where the work went") < text.index("```mermaid")


def test_side_by_side_follows_the_backward_sections_and_precedes_forward_mode():
    """The reader meets the lecture's side by side right after the backward pass's own sections, and
    forward mode after it, whether a forward run made it or a jvp inside the function."""
    inner_jvp = trace_call(lambda x: make_jvp(lambda y: y * y)(x)(1.0)[1] * x, (3.0,))
    for call in (trace_call(lambda x: x * x + anp.sin(x), (3.0,), mode="both"), inner_jvp):
        headings = [line for line in render(call).splitlines() if line.startswith("## ")]
        side_by_side = next(k for k, line in enumerate(headings) if line.startswith("## Side by side"))
        assert headings[side_by_side - 1:side_by_side + 2:2] == ["## Lecture mapping", "## Forward mode"]


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


def test_the_command_line_sets_the_collapse_threshold(tmp_path, capsys, monkeypatch):
    from adtrace.tools.cli import main

    (tmp_path / "f.py").write_text("import autograd.numpy as np\n\ndef f(x):\n    return np.sin(x) * x\n")
    monkeypatch.chdir(tmp_path)
    assert main(["report", "f.py:f", "--at", "0.3", "--collapse-above", "1"]) == 0
    graph = section(capsys.readouterr().out, "## Graph")
    assert 'n1["f.py:4<br/>2 nodes: sin x1, multiply x1<br/>1 edge inside"]' in graph
    assert "`adtrace report --collapse-above 3`" in graph


def test_a_bug_of_the_whole_pass_is_named_in_the_summary_and_a_right_pass_says_nothing():
    """A breadth-first ``backward()``: the summary names the node run before its consumer added into it."""
    import learner_passes
    from adtrace.compare.traced_engine_call import trace_engine_call

    wrong = render(trace_engine_call(learner_passes.squares, (1.0,), engine=learner_passes.QueueValue))
    summary = wrong.split("\n## ")[1]
    assert summary.startswith("Summary")
    assert "**The backward pass is wrong: the visit order is not reverse topological**, at `v1_mul`" in summary
    assert "before its consumer v3_mul had added into it" in summary
    right = render(trace_engine_call(learner_passes.squares, (1.0,), engine=learner_passes.Value))
    assert "The backward pass is wrong" not in right


def test_the_side_by_side_table_calls_leaf_only_a_value_made_without_children():
    """The edge style with no ``_op``: every op is ''; a value an op made is not a "(leaf)" (it was)."""
    from learner_shapes import OplessEdgeValue

    call = trace_engine_call(lambda a, b: (a + b) * a, (3.0, 4.0), engine=OplessEdgeValue)
    lines = side_by_side_section(call, ReportOptions()).splitlines()
    cells = {line.split("|")[1].strip(): line.split("|")[2].strip() for line in lines if line.startswith("| v")}
    assert cells == {label: "(leaf)" if not call.recording.nodes[label].parents else ""
                     for label in call.recording.visit_order(1)}
    assert sorted(cells.values()) == ["", "", "(leaf)", "(leaf)"]


# -------------------- the summary's pointer to a wrong rule both engines share (issue 29) --------------------


def summary_of(text):
    return text[text.index("## Summary"):text.index("\n## ", text.index("## Summary") + 1)]


def test_the_summary_names_the_node_whose_wrong_rule_both_engines_used():
    said = summary_of(render(wrong_rule_call()))
    assert re.search(r"\*\*The failing node: `v1_double_wrongly`\*\* \(`double_wrongly`, argument 0, called at "
                     r"\S*view_cases.py:\d+\): central finite differences fail while the reference engine agrees", said)


def test_without_the_per_node_checks_the_summary_says_the_command_that_names_the_node():
    said = summary_of(render(wrong_rule_call(check_nodes=False)))
    assert re.search(r"`adtrace check \S*view_cases.py:with_a_wrong_rule` with the same arguments", said)
    assert "failing node" not in said


def test_no_pointer_when_finite_differences_pass():
    from adtrace.compare.traced_call import trace_call
    from view_cases import fan_out

    assert "adtrace check" not in summary_of(render(trace_call(fan_out, (0.7,))))

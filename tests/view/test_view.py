"""The viewer's data, its passes' steps and the page's writers, without a browser (``test_page.py``: the page's
escaping; ``test_source.py``: the code panels; ``test_view_browser.py`` drives the page)."""

import html
import inspect
import json
import os
import re
import stat
import warnings
from pathlib import Path
from types import SimpleNamespace

import pytest
import autograd.numpy as anp
from autograd import grad, make_jvp

import adtrace
from adtrace.report import files, render, render_recording
from adtrace.recording.snapshots import ADD, NO_PARENTS, VJP, YIELD
from adtrace.compare.checks import skipped
from adtrace.compare.traced_call import trace_call
from adtrace.view import inline_frame, page_data
from adtrace.view.data import NO_REFERENCE, UNRECORDED_VALUE, group_key
import view_cases
from primitives import recorded_from_inside_a_vjp
from seed import SNAPSHOT_ROWS, square
from value_classes import BuggyValue
from view_cases import (dict_text, fan_out, first_derivative, forward_tangents, jacobian_recording, nested_recording,
                        replay, snapshot_rows, sum_and_sine)


def passes(data):
    return {p["id"]: p for p in data["passes"]}


def labels(data, page_pass):
    return data["graphs"][page_pass["graph"]]["nodes"]["label"]


def statements(data, page_pass):
    texts = [s["text"] for s in data["code"][page_pass["mode"]]["statements"]]
    return [texts[i] for i in page_pass["steps"]["statement"]]


def assert_same_rows(data, markdown):
    """Every reverse pass of the page has the report's rows: statement, node, outgrads after."""
    rows = snapshot_rows(markdown)
    reverse = [p for p in data["passes"] if p["mode"] == "rev"]
    assert sorted(p["query"] for p in reverse) == sorted(rows)
    for p in reverse:
        names = labels(data, p)
        nodes = [None if n is None else names[n] for n in p["steps"]["node"]]
        after = [dict_text(state) for state, _ in replay(p, names)]
        assert list(zip(statements(data, p), nodes, after)) == rows[p["query"]], p["id"]


def test_a_skipped_check_reads_skipped_on_the_page_as_in_the_report():
    """A check that could not run fails nothing but is not a pass: the page said "pass" for it."""
    call = trace_call(square, (3.0,))
    call.checks = [*call.checks, skipped("central finite differences", "the function raised next to the point")]
    rows = {name: result for name, result, _ in page_data(call=call)["checks"]}
    assert rows["central finite differences"] == "skipped" and "| skipped " in render(call)
    assert set(rows.values()) == {"pass", "skipped"}


def test_the_seed_function_has_the_reports_eleven_rows():
    call = trace_call(square, (3.0,))
    data = page_data(call=call)
    assert len(data["passes"]) == 1 and len(data["passes"][0]["steps"]["statement"]) == SNAPSHOT_ROWS
    assert_same_rows(data, render(call))
    steps, texts = data["passes"][0]["steps"], statements(data, data["passes"][0])
    no_parents = [k for k, text in enumerate(texts) if text == NO_PARENTS]
    assert no_parents and all(steps["ingrads"][k] == "()" for k in no_parents)  # the root: nothing to add
    assert all(steps["ingrads"][k] is None for k, text in enumerate(texts) if text == YIELD)
    states = [dict_text(state) for state, _ in replay(data["passes"][0], labels(data, data["passes"][0]))]
    assert states[:6] == ["{v1_multiply:(1,False)}", "{v1_multiply:(1,False)}", "{}", "{}",
                          "{v0_root:(3,False)}", "{v0_root:(6,True)}"]


@pytest.mark.parametrize("make", [
    lambda: (lambda c: (page_data(call=c), render(c)))(trace_call(fan_out, (0.7,))),
    lambda: (lambda c: (page_data(call=c), render(c)))(trace_call(first_derivative, (2.0,), capture="full")),
    lambda: (lambda r: (page_data(r), render_recording(r)))(jacobian_recording()),
], ids=["fan_out", "grad_of_grad", "jacobian"])
def test_every_query_has_the_reports_rows(make):
    data, markdown = make()
    assert_same_rows(data, markdown)


def test_an_engine_of_micrographs_shape_plays_its_own_backward():
    """The buggy ``a + a``: the page's steps are the report's rows, with the class's own statements
    highlighted in its own source, and the lecture's list [1, 1] beside the engine's .grad of 1."""
    call = view_cases.buggy_twice()
    data = page_data(call=call)
    (page_pass,) = data["passes"]
    assert page_pass["state"] == "grads" and page_pass["reference"] is None
    assert_same_rows(data, render(call))
    panel = data["code"]["rev"]
    line = inspect.getsourcelines(BuggyValue.backward)[1]
    assert panel["autograd"]["name"] == f"BuggyValue.backward (tests/value_classes.py:{line})"
    assert panel["autograd"]["lines"][0] == "def backward(self):"
    lines = {s["text"]: panel["autograd"]["lines"][s["autograd"]].strip() for s in panel["statements"]
             if s["autograd"] is not None}
    assert lines == {text: text for text in ("self.grad = 1.0", "for node in reversed(topo):", "node._backward()",
                                             "def backward(self):")}
    names = labels(data, page_pass)
    *_, (grads, lecture) = replay(page_pass, names)
    assert grads == [("v1_add", "1"), ("v0_leaf", "1")] and lecture["v0_leaf"] == (["1", "1"], "2")
    steps = page_pass["steps"]
    assert [r for r in steps["result"] if r] == ["1 (replaced: the previous value is lost)"] * 2
    assert [v for v in steps["previous"] if v] == ["0", "1"]  # .grad before each write: the second loses the 1
    summary = dict(data["summary"])
    assert summary["engine"] == "BuggyValue: BuggyValue.backward; every argument is a leaf"  # (the class, by its name)
    assert "differentiated argument" not in summary and summary["gradient (.grad of each argument)"] == "1"
    assert ["visit", names.index("v0_leaf")] in steps["state"]
    assert data["graphs"][0]["nodes"]["primitive"] == ["(leaf)", "+"]


def test_a_pass_that_zeroes_the_gradients_before_seeding_is_played_from_its_seed():
    """``backward()`` writes ``v.grad = 0.0`` into every value before ``self.grad = 1.0``: the pass's
    first events are those writes, its start (the end, the graph walked) is the seed's event."""
    from adtrace.compare.traced_engine_call import trace_engine_call
    from value_classes import ZeroingValue

    data = page_data(call=trace_engine_call(lambda a, b: a * b * a, (0.4, 1.3), engine=ZeroingValue))
    (page_pass,) = data["passes"]
    names = labels(data, page_pass)
    assert sorted(names) == ["v0_leaf", "v1_leaf", "v2_mul", "v3_mul"] and page_pass["state"] == "grads"
    *_, (grads, lecture) = replay(page_pass, names)
    assert dict(grads)["v0_leaf"] == f"{2 * 0.4 * 1.3:g}" and lecture["v3_mul"][1] == "1"


def test_children_whose_argument_order_is_lost_are_arg_question_mark_on_the_page():
    """``{self, other}`` at ``x == y``: ``x - y`` is 0 either way, its edges say ``arg ?``."""
    from adtrace.compare.traced_engine_call import trace_engine_call
    from learner_shapes import SetChildrenValue

    data = page_data(call=trace_engine_call(lambda x, y: (x - y) * x, (1.5, 1.5), engine=SetChildrenValue))
    parents = data["graphs"][0]["nodes"]["parents"]
    assert [argnum for node in parents for argnum, _ in node] == ["?", "?", 0, 1]


def test_a_write_into_no_child_lights_no_edge():
    """A backward that also writes into its own product's .grad: that write has no child position,
    so the page names no parent for it (no edge to light), and still shows the .grad it wrote."""
    from adtrace.compare.traced_engine_call import trace_engine_call

    call = trace_engine_call(lambda a, b: a * b, (2.0, 3.0), engine=view_cases.StrayWriteValue)
    data = page_data(call=call)
    (page_pass,) = data["passes"]
    names, steps = labels(data, page_pass), page_pass["steps"]
    writes = [k for k, text in enumerate(statements(data, page_pass)) if text == "v._backward()"
              and steps["previous"][k] is not None]
    assert [(names[steps["parent"][k]], steps["position"][k]) for k in writes[:2]] == [("v0_leaf", 0), ("v1_leaf", 1)]
    stray = writes[2]
    assert steps["node"][stray] == names.index("v2_mul") and steps["position"][stray] is None
    assert steps["parent"][stray] is None and steps["state"][stray] == ["set", names.index("v2_mul"), "1"]


def test_the_lecture_lists_advance_with_autograd():
    """At each add_outgrads the lecture's list of that parent grows by the reference engine's
    partial adjoint of the same (node, position); at each pop the lecture's sum is shown."""
    call = trace_call(square, (3.0,))
    data = page_data(call=call)
    lectures = [lecture for _, lecture in replay(data["passes"][0], labels(data, data["passes"][0]))]
    assert lectures[0] == {"v1_multiply": (["1"], None)}
    assert lectures[4]["v0_root"] == (["3"], None) and lectures[5]["v0_root"] == (["3", "3"], None)
    assert lectures[7]["v0_root"] == (["3", "3"], "6")
    fan = trace_call(fan_out, (0.7,))
    data = page_data(call=fan)
    *_, (_, final) = replay(data["passes"][0], labels(data, data["passes"][0]))
    for step in fan.reference.steps:  # same partial adjoints and sums, in autograd's arrival order
        items, total = final[step.label]
        assert sorted(items) == sorted(data_text(v) for v in step.partial_adjoints)
        assert total == data_text(step.v_i_bar)


def test_the_lecture_appends_the_partial_adjoint_of_a_parent_at_argument_1():
    """``3.0 * x``: the constant is not a parent, so x is multiply's argument 1 at position 0; the
    lecture's list for x gets the reference engine's partial adjoint 3 when autograd adds it."""
    call = trace_call(view_cases.triple, (2.0,))
    data = page_data(call=call)
    page_pass = data["passes"][0]
    names = labels(data, page_pass)
    node = names.index("v1_multiply")
    assert data["graphs"][0]["nodes"]["parents"][node] == [[1, names.index("v0_root")]]
    add = statements(data, page_pass).index(ADD)
    assert page_pass["steps"]["lecture"][add] == ["append", names.index("v0_root"), "3"]
    *_, (outgrads, lecture) = replay(page_pass, names)
    assert lecture["v0_root"] == (["3"], "3")


def data_text(value):
    from adtrace.report.format import fmt

    return fmt(value)


def test_without_a_reference_run_the_page_says_so():
    with adtrace.record() as rec:
        grad(square)(3.0)
    page_pass = page_data(rec)["passes"][0]
    assert page_pass["reference"] == NO_REFERENCE and not any(page_pass["steps"]["lecture"])
    call = trace_call(first_derivative, (2.0,), capture="full")
    by_id = passes(page_data(call=call))
    assert by_id["q2"]["reference"] is None and by_id["q1"]["reference"] == "the reference engine ran for query 2 only"


def test_the_page_opens_on_the_compared_pass_when_the_function_runs_backward_itself():
    """The function's own ``backward()`` is query 1; the page opens on query 2, the caller's pass,
    the one the lecture is compared with (its column filled), not on the first."""
    from adtrace.compare.traced_engine_call import trace_engine_call

    call = trace_engine_call(view_cases.backward_inside, (3.0,))
    data = page_data(call=call)
    assert [p["id"] for p in data["passes"]] == ["q1", "q2"] and call.recording.user_query() == 2
    start = passes(data)[data["start"]]
    assert data["start"] == "q2" and start["reference"] is None and any(start["steps"]["lecture"])
    assert not any(passes(data)["q1"]["steps"]["lecture"])


def test_the_page_says_no_pass_ran_only_when_none_did():
    said = "No backward pass ran in this recording."
    with adtrace.record() as nothing:
        square(3.0)
    with adtrace.record() as reverse:
        grad(square)(3.0)
    with adtrace.record() as forward:
        make_jvp(square)(3.0)(1.0)
    assert said in page_data(nothing)["notes"]
    assert said not in page_data(reverse)["notes"] and said not in page_data(forward)["notes"]


def test_the_page_of_values_whose_gradients_were_never_computed_says_so_in_one_line():
    """draw_dot before backward(): a learner's values and no pass; then a value made after the pass.
    One note says it, in place of the bare "no pass ran"; a pass that reached every value says nothing."""
    from learner_passes import Value

    with adtrace.record(engine=Value) as before:
        x = Value(2.0)
        x * x + x
    notes = page_data(before)["notes"]
    assert notes == ["No backward pass ran: no value's gradient was computed. The .grad of each of the 3 values "
                     "is what __init__ set (0), not a gradient: a graph drawn before backward() shows zeros."]
    with adtrace.record(engine=Value) as after:
        x = Value(2.0)
        y = x * x + x
        y.backward()
        y * x
    assert [n for n in page_data(after)["notes"] if "never computed" in n] == [
        "1 of 4 values' gradients were never computed: no backward pass reached them (made after the last pass, "
        "or not on the path to its output): v3_mul. Their .grad is what __init__ set, not a gradient."]
    with adtrace.record(engine=Value) as right:
        (Value(2.0) * 3.0).backward()
    assert not any("never computed" in n or "No backward pass" in n for n in page_data(right)["notes"])


def test_the_page_says_which_add_outgrads_it_shows_in_no_pass():
    """A recording entered inside a backward pass: its add_outgrads events belong to no pass the
    page shows (their query is None), and the page says so; a whole pass's adds are all steps."""
    rec, _ = recorded_from_inside_a_vjp(lambda x, tap: anp.sin(tap(x) * x) * x)
    outside = [e for e in rec.of_kind("add_outgrads") if e.query is None]
    assert outside and not rec.queries
    notes = [n for n in page_data(rec)["notes"] if "add_outgrads" in n]
    assert len(outside) == 1 and notes == [
        "Not on this page: 1 add_outgrads event outside every pass it shows (the report's call sequence and the JSON "
        "export show them)."]
    with adtrace.record() as whole:
        grad(lambda x: anp.sin(x * x) * x)(2.0)
    assert not [n for n in page_data(whole)["notes"] if "add_outgrads" in n]


def test_a_forward_pass_holds_its_own_events_only():
    """make_jvp then grad at the same level in one recording: the forward pass has the steps it has
    alone, none of the backward pass's additions."""
    with adtrace.record() as alone:
        make_jvp(sum_and_sine)(3.0)(1.0)
    with adtrace.record() as both:
        make_jvp(sum_and_sine)(3.0)(1.0)
        grad(sum_and_sine)(3.0)
    forward = passes(page_data(both))["f1"]
    assert forward["steps"] == passes(page_data(alone))["f1"]["steps"]


def test_a_forward_pass_without_lecture_tangents_says_why():
    """An output independent of the input: the reference engine has no tangent to show, and the
    forward pass's lecture column says so instead of passing for compared."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # autograd: "Output seems independent of input."
        call = trace_call(lambda x: anp.array(3.0), (2.0,), mode="fwd")
    (forward,) = page_data(call=call)["passes"]
    assert forward["reference"] and not any(forward["steps"]["lecture"])
    assert len(forward["steps"]["statement"]) == 1  # the root's tangent only
    assert forward["level"] == 0 and forward["name"] == "forward 1 (make_jvp, level 0)"


def test_a_pass_the_reference_engine_did_not_run_for_says_why():
    from adtrace.compare.traced_engine_call import trace_engine_call

    call = trace_engine_call(view_cases.twice, (3.0,), capture="structure")
    (page_pass,) = page_data(call=call)["passes"]
    assert call.reference is None and page_pass["reference"] == call.reference_note
    assert page_pass["reference"] == "reference engine: no values were recorded (capture 'structure')"


def test_the_summary_has_the_rows_of_the_modes_that_ran():
    reverse = dict(page_data(call=trace_call(sum_and_sine, (3.0,)))["summary"])
    both = dict(page_data(call=trace_call(sum_and_sine, (3.0,), mode="both"))["summary"])
    assert "JVP with a tangent of ones" not in reverse and "gradient (VJP with a seed of ones)" in reverse
    assert both["JVP with a tangent of ones"] == both["gradient (VJP with a seed of ones)"]  # (one input: J v = J^T u)


def test_forward_mode_tangents_are_the_reports():
    call = trace_call(sum_and_sine, (3.0,), mode="both")
    data = page_data(call=call)
    forward = passes(data)["f1"]
    texts = [s["text"] for s in data["code"]["fwd"]["statements"]]
    assert statements(data, forward) == [texts[i] for i in (0, 1, 1, 2, 1, 2, 1, 1, 2)]
    *_, (tangents, lecture) = replay(forward, labels(data, forward))
    assert dict(tangents) == forward_tangents(render(call))
    assert {label: value for label, (_, value) in lecture.items()} == dict(tangents)
    assert data["start"] == "q1"


def test_nodes_are_grouped_by_source_line_when_the_recording_knows_it():
    with adtrace.record(sites=True, relative_to=Path(view_cases.__file__).parent) as rec:
        grad(fan_out)(0.7)
    first = inspect.getsourcelines(fan_out)[1]  # def fan_out(x): then its two lines
    keys = {label: group_key(rec, label) for label in rec.nodes}
    assert set(keys.values()) == {("primitive", "(input)"), ("site", f"view_cases.py:{first + 1}"),
                                  ("site", f"view_cases.py:{first + 2}")}
    assert keys["v1_sin"] == ("site", f"view_cases.py:{first + 1}")
    with adtrace.record() as plain:
        grad(fan_out)(0.7)
    assert group_key(plain, "v1_sin") == ("primitive", "sin")
    assert group_key(plain, "v0_root") == ("primitive", "(input)")
    node = SimpleNamespace(site="model.py:7", primitive="dot")  # a node that carries its site itself
    assert group_key(SimpleNamespace(nodes={"v3_dot": node}), "v3_dot") == ("site", "model.py:7")


def test_a_nested_pass_knows_its_parent_and_the_vjp_that_ran_it():
    rec = nested_recording()
    data = page_data(rec)
    outer, inner = passes(data)["q1"], passes(data)["q2"]
    names = labels(data, outer)
    assert outer["parent"] is None and inner["parent"]["pass"] == "q1"
    assert names[inner["parent"]["node"]] == "v1_inner_grad_rule"
    step = inner["parent"]["step"]
    assert outer["steps"]["node"][step] == inner["parent"]["node"]
    assert statements(data, outer)[step] == VJP and data["start"] == "q1"
    call = trace_call(first_derivative, (2.0,), capture="full")  # its inner pass ran in the forward computation
    assert [p["parent"] for p in page_data(call=call)["passes"]] == [None, None]


@pytest.mark.parametrize("make, recorded", [
    (view_cases.micrograd_leaves_made_before, "v0_mul"),
    (view_cases.autograd_node_made_before, "v0_multiply"),
], ids=["micrograd", "autograd"])
def test_a_parent_made_before_the_recording_and_never_walked_is_shown_unrecorded(make, recorded, tmp_path):
    rec = make()
    data = page_data(rec)
    nodes = data["graphs"][0]["nodes"]
    parents = [nodes["label"][n] for _, n in nodes["parents"][nodes["label"].index(recorded)]]
    assert parents and all(label.endswith("_unrecorded") for label in parents)
    for label in parents:
        n = nodes["label"].index(label)
        assert nodes["primitive"][n] == "(unrecorded)" and nodes["value"][n] == UNRECORDED_VALUE
        assert n < nodes["label"].index(recorded)  # a parent before its child (the layout's order)
    page = rec.to_html(tmp_path / "page.html")
    assert json.loads(re.search(r'id="adtrace-data">(.*?)</script>', page, re.S).group(1)) == data
    assert html.unescape(rec._repr_html_().split('srcdoc="', 1)[1].split('" sandbox', 1)[0]) == page


def test_a_pass_nested_in_a_vjp_the_recording_ended_in_returns_to_the_parents_last_step():
    data = page_data(view_cases.recording_ended_inside_a_vjp())
    outer, inner = passes(data)["q1"], passes(data)["q2"]
    names = labels(data, outer)
    assert names[inner["parent"]["node"]] == "v1_cut_rule" and VJP not in statements(data, outer)[-2:]
    last = len(outer["steps"]["statement"]) - 1
    assert inner["parent"]["step"] == last and names[outer["steps"]["node"][last]] == "v1_cut_rule"


def test_recording_to_html_and_the_jupyter_frame(tmp_path):
    with adtrace.record() as rec:
        grad(square)(3.0)
    page = rec.to_html(tmp_path / "page.html")
    assert (tmp_path / "page.html").read_text() == page and "data-testid=\"step-counter\"" in page
    frame = rec._repr_html_()
    assert frame.startswith("<iframe srcdoc=\"") and 'sandbox="allow-scripts"' in frame
    assert html.unescape(frame.split('srcdoc="', 1)[1].split('" sandbox', 1)[0]) == page
    assert inline_frame("<b>&</b>").count("&lt;b&gt;&amp;&lt;/b&gt;") == 1


def test_recording_to_html_writes_as_every_writer_does(tmp_path, monkeypatch):
    """Through report.files.write_file: written whole or not at all (Path.write_text truncated the old page
    first), through a symbolic link, a mode-600 file kept 600, a folder refused."""
    with adtrace.record() as rec:
        grad(square)(3.0)
    target, link = tmp_path / "page.html", tmp_path / "link.html"
    target.write_text("old")
    os.chmod(target, 0o600)
    link.symlink_to(target.name)

    def interrupted(*args):
        raise KeyboardInterrupt

    with monkeypatch.context() as patched:
        patched.setattr(files.os, "replace", interrupted)
        with pytest.raises(KeyboardInterrupt):
            rec.to_html(link)
    assert target.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["link.html", "page.html"]
    page = rec.to_html(link)
    assert link.is_symlink() and target.read_text() == page
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    with pytest.raises(IsADirectoryError):
        rec.to_html(tmp_path)


def test_a_tensor_engine_plays_its_arrays_and_names_its_wrong_node():
    """A layer of numpy arrays (``@``, a row broadcast in ``+``, ``tanh``, ``sum``) whose ``@`` backward
    forgets a transpose: the page plays the class's own visits, the lecture's sums beside the engine's
    ``.grad`` as arrays (the bias's summed back to its shape), and the failing node in its checks."""
    import numpy as np
    from adtrace.checker.engine_rules import check_engine_call
    from adtrace.compare.traced_engine_call import trace_engine_call
    from learner_arrays import NoTransposeTensor

    args = (np.array([[0.5, -1.0], [0.2, 0.4]]), np.array([[1.0, 2.0], [0.5, -1.0]]), np.array([0.1, -0.2]))
    call = check_engine_call(trace_engine_call(lambda w, x, b: ((w @ x + b).tanh()).sum(), args,
                                               engine=NoTransposeTensor))
    data = page_data(call=call)
    (page_pass,) = data["passes"]
    names = labels(data, page_pass)
    visits = [names[state[1]] for state in page_pass["steps"]["state"] if state and state[0] == "visit"]
    assert visits[:3] == ["v6_sum", "v5_tanh", "v4_add"] and sorted(visits) == sorted(names)  # then a set's order
    *_, (grads, lecture) = replay(page_pass, names)
    grads = dict(grads)
    assert grads["v2_leaf"] == "[1.77651 1.0646]" and lecture["v2_leaf"] == (["[1.77651 1.0646]"], "[1.77651 1.0646]")
    assert all(lecture[label][1] == grads[label] for label in ("v6_sum", "v5_tanh", "v4_add", "v3_matmul"))
    checks = {name: (result, detail) for name, result, detail in data["checks"]}
    assert checks["per-node local rules"] == ("FAIL", "first failing node: v3_matmul argument 0")

"""adtrace report's "Explanations" section: shown when a gradient is zero or not finite, and only then."""

import autograd.numpy as np
from autograd import grad

import adtrace
from adtrace.compare.traced_call import trace_call
from adtrace.report import render, render_recording


def where_trap(x):
    return np.sum(np.where(x > 0, np.log(x), 0.0))


def test_a_traced_calls_report_explains_its_nan_after_the_summary():
    with np.errstate(all="ignore"):
        text = render(trace_call(where_trap, (np.array([1.0, 0.0]),)))
    section = text[text.index("## Explanations"):]
    assert text.index("## Explanations") > text.index("# adtrace report")
    assert "### `x[1]` = nan: not finite" in section and "`where-unselected-branch`" in section
    assert "### `x[0]`" not in section  # 1: finite and not zero, nothing to explain


def test_a_recordings_report_explains_a_dead_relu():
    with adtrace.record(capture="full", sites=True, calls=True) as rec:
        grad(lambda x: np.sum(np.maximum(x, 0.0)))(np.array([-1.0, 2.0]))
    section = render_recording(rec).split("## Explanations", 1)[1]
    assert "### `x[0]` = 0: zero" in section and "`relu-off`" in section


def test_no_section_when_every_gradient_is_finite_and_not_zero_or_cannot_be_explained():
    assert "## Explanations" not in render(trace_call(lambda x: np.sum(np.sin(x)), (np.array([1.0, 0.5]),)))
    with adtrace.record(capture="structure") as rec:  # values not kept: explain cannot read them
        grad(lambda x: np.sum(np.maximum(x, 0.0)))(np.array([-1.0, 2.0]))
    assert "## Explanations" not in render_recording(rec)


def test_an_output_autograd_did_not_trace_is_not_called_independent_without_running_it_again():
    text = render(trace_call(lambda x: np.floor(x) + 1.0, (np.array([1.5]),)))
    row = next(line for line in text.split("## Explanations", 1)[1].splitlines() if line.startswith("| v0_root"))
    assert "unless a value left the trace or went through floor" in row
    (probed,) = adtrace.explain(lambda x: np.float64(2.0), 1.5)
    assert "moving this element does not move the output" in probed.causes[0].detail


def test_values_kept_as_summaries_get_a_pointer_when_the_gradient_shows_a_nan():
    x = np.linspace(-1.0, 1.0, 101)  # above the inline size: capture="auto" keeps summaries
    with np.errstate(all="ignore"):
        text = render(trace_call(where_trap, (x,)))
    section = text.split("## Explanations", 1)[1]
    assert "kept its values as summaries" in section and "adtrace explain" in section
    assert "## Explanations" not in render(trace_call(lambda x: np.sum(np.sin(x)), (x,)))


def test_an_element_not_followed_for_want_of_calls_gets_a_pointer_not_a_table_of_unknowns():
    W = np.ones((3, 3))

    def f(x):
        return np.sum(np.maximum(np.dot(W, x), 0.0)) + x[1]  # every unit off: x[0]'s gradient 0
    with adtrace.record(capture="full", sites=True) as rec:  # (no calls: dot's Jacobian not known)
        grad(f)(np.array([-1.0, -1.0, -1.0]))
    section = render_recording(rec).split("## Explanations", 1)[1]
    assert "`unknown`" not in section and "did not keep its nodes' calls" in section and "`x[0]`" in section


def test_a_micrograd_report_explains_a_dead_relu():
    from adtrace.compare.traced_engine_call import trace_engine_call

    text = render(trace_engine_call(lambda w, x: (w * x).relu() + x, (0.5, -2.0), engine="micrograd"))
    section = text.split("## Explanations", 1)[1]
    assert "### `w` = 0: zero" in section and "`relu-off`" in section  # (the argument's name, as explain says)
    assert "### `v0_leaf`" not in section and "### `v1_leaf`" not in section
    assert "### `x` =" not in section  # its gradient, 1.5, is finite and not zero
    assert "## Explanations" not in render(trace_engine_call(lambda w, x: w * x, (0.5, -2.0), engine="micrograd"))


def test_a_report_of_a_class_of_numpy_arrays_explains_its_dead_unit_element_by_element():
    from adtrace.compare.traced_engine_call import trace_engine_call
    from learner_arrays import Tensor

    def layer(w, x):
        return ((w @ x).relu() * x).sum()  # w @ x = [-3, 4]: unit 0 is off, w[0, :] gets 0
    W, X = np.array([[1.0, -2.0], [3.0, 0.5]]), np.array([[1.0], [2.0]])
    section = render(trace_engine_call(layer, (W, X), engine=Tensor)).split("## Explanations", 1)[1]
    assert "### `w[0, 0]` = 0: zero" in section and "### `w[0, 1]` = 0: zero" in section  # (as explain names them)
    assert "`relu-off`" in section and "### `w[1, 1]`" not in section
    assert "### `v0_leaf" not in section  # its 4 is finite, not zero


def test_a_long_chains_causes_are_shown_twenty_and_the_rest_counted_by_reason():
    from adtrace.explain.report_section import CAUSES_SHOWN
    from view_cases import zero_chain

    rec = zero_chain(30)  # 120 nodes, each a cause (no calls: every derivative read from a VJP of 0 unknown)
    (explained,) = rec.explain()
    section = render_recording(rec).split("## Explanations", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| v")]
    assert len(rows) == CAUSES_SHOWN < len(explained.causes)
    assert f"_{len(explained.causes) - CAUSES_SHOWN} more causes not shown here (" in section
    assert "`unknown`" in section.split("more causes not shown here", 1)[1].split(")", 1)[0]
    known = [c.node for c in explained.causes if c.reason != "unknown"]
    assert known and all(row.startswith(f"| {label} ") for row, label in zip(rows, known))  # the known first


def test_a_recording_the_explainer_cannot_read_says_so_and_the_report_stands(monkeypatch):
    from view_cases import recording_ended_inside_a_vjp

    assert "## Where the work went" in render_recording(recording_ended_inside_a_vjp())
    with adtrace.record(capture="full", sites=True, calls=True) as rec:
        grad(lambda x: np.sum(np.maximum(x, 0.0)))(np.array([-1.0, 2.0]))

    def unreadable(*args, **kwargs):
        raise AttributeError("'RootCreated' object has no attribute 'value'")
    monkeypatch.setattr("adtrace.explain.report_section.explain_recording", unreadable)
    text = render_recording(rec)
    section = text.split("## Explanations", 1)[1]
    assert "could not be made" in section and "AttributeError" in section
    assert "## Where the work went" in text and "## Call sequence" in text  # the rest of the report stands


def test_a_graph_above_the_reports_limit_is_not_explained_and_the_section_says_so(monkeypatch):
    from adtrace.explain import report_section
    from view_cases import zero_chain

    rec = zero_chain(30)  # 122 nodes
    monkeypatch.setattr(report_section, "MAX_NODES", 100)
    monkeypatch.setattr(report_section, "explain_recording", None)  # (not called: it would raise)
    section = render_recording(rec).split("## Explanations", 1)[1]
    assert "this graph has 122 nodes, above the 100 a report explains" in section and "adtrace explain" in section
    with adtrace.record(capture="full", sites=True) as rec:  # every gradient finite and not zero: no section
        grad(lambda x: np.sum(np.sin(np.sin(np.sin(x)))))(np.array([0.5, 1.0]))
    monkeypatch.setattr(report_section, "MAX_NODES", 2)
    assert "## Explanations" not in render_recording(rec)


def test_the_readme_states_the_sections_limits():
    from adtrace.explain.report_section import CAUSES_SHOWN, MAX_NODES
    from readme import stated

    assert stated(r"or the graph is above ([\d,]+) nodes") == MAX_NODES
    assert stated(r"\((\d+) causes an element at most") == CAUSES_SHOWN


def test_without_calls_each_element_is_explained_by_its_own_nodes():
    def f(x):
        z = x * 2.0
        h = np.maximum(0.0, z - 3.0)
        u = np.sin(x[0]) * 0.0  # x[0]'s alone
        return np.sum(h) + u
    with adtrace.record(capture="full", sites=True) as rec:
        grad(f)(np.array([0.5, 2.5, 1.0]))
    section = render_recording(rec).split("## Explanations", 1)[1].split("\n## ", 1)[0]
    first, third = section.split("### `x[0]`", 1)[1].split("### `x[2]`")
    assert "v6_multiply" in first and "v3_maximum" in first
    assert "v3_maximum" in third and "`relu-off`" in third
    assert not any(label in third for label in ("v4_ArrayBox_getitem", "v5_sin", "v6_multiply", "`unknown`"))

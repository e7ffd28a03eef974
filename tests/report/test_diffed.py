"""A diff as Markdown and as JSON: the verdict, the first divergence with both sides, the counts, capped tables."""

import json

from autograd import grad

from adtrace.diff import diff
from adtrace.diff.calls import record_call
from adtrace.report.diffed import diff_json, diff_markdown
from learner_shapes import BuggySlotsValue


def g(x):
    a = x * x
    b = a + x
    c = a + b
    return c * c


def test_the_json_names_the_verdict_the_first_divergence_with_both_sides_and_the_counts():
    d = diff(record_call(g, (3.0,)), record_call(g, (3.0,), engine=BuggySlotsValue))
    document = json.loads(diff_json(d))
    assert document["verdict"] == "values-differ" and document["first"]["kind"] == "accumulation"
    a, b = document["first"]["a"], document["first"]["b"]
    assert (a["node"], a["primitive"], a["value"]) == ("v1_multiply", "multiply", 84.0)
    assert (b["node"], b["primitive"], b["value"]) == ("v1_mul", "*", 42.0)
    assert a["line"] == b["line"] and a["line"].endswith(f":{g.__code__.co_firstlineno + 1}")
    assert document["counts"] == {"identical": 3, "values differ": 2, "only in A": 0, "only in B": 0, "constants": 0}
    assert len(document["nodes"]) == 5 and document["follows"][0]["a"]["node"] == "v0_root"
    same = json.loads(diff_json(diff(record_call(g, (3.0,)), record_call(g, (3.0,)))))
    assert same["verdict"] == "identical" and same["first"] is None and same["follows"] == []
    assert same["values_compared"] and document["values_compared"]


def test_a_side_recorded_without_values_says_only_structure_and_order_were_compared():
    d = diff(record_call(g, (3.0,), capture="structure"), record_call(g, (2.0,)))
    assert d.verdict == "identical" and d.unkept == ["A"] and not json.loads(diff_json(d))["values_compared"]
    verdict = diff_markdown(d).split("\n")[2]
    assert "values not compared: A kept none (capture `structure`)" in verdict and "within rtol" not in verdict
    nodes = next(line for line in diff_markdown(d).split("\n") if line.startswith("Nodes:"))
    assert f"{d.counts['identical']} matched (values not compared)" in nodes and "identical" not in nodes
    assert d.exit_code == 0  # (the structure agrees: what was compared is the same)


def test_the_markdown_shows_the_first_divergence_what_follows_and_caps_the_aligned_table():
    d = diff(record_call(g, (3.0,)), record_call(g, (3.0,), engine=BuggySlotsValue))
    text = diff_markdown(d, "f.py:g", "f.py:g --engine-b Buggy", max_rows=2)
    assert text.startswith("# adtrace diff: f.py:g against f.py:g --engine-b Buggy")
    assert "**Verdict: values-differ**" in text and "**accumulation**, gradient: B lost a contribution" in text
    assert "| A      | v1_multiply | multiply" in text and "| B      | v1_mul      | *" in text
    assert grad(g)(3.0) == 546.0  # (x's gradient, that B's lost contribution makes 294)
    assert "What follows from it:" in text and "- follows, gradient of v0_root / v0_leaf: A 546, B 294" in text
    assert "3 identical, 2 values differ, 0 only in A, 0 only in B, 0 constants" in text
    assert "_3 more rows (table capped at 2 rows" in text


def test_values_that_read_the_same_in_six_digits_are_shown_whole():
    import autograd.numpy as anp

    f = lambda x, y: anp.sin(x * y)  # noqa: E731
    text = diff_markdown(diff(record_call(f, (0.5, 3.0)), record_call(f, (0.5, 3.0000001))))
    first = text.split("## The first divergence", 1)[1].split("What follows", 1)[0]
    assert "| 1.5 " in first and "| 1.50000005 " in first  # (both read 1.5 in 6 digits)


def test_a_contribution_from_a_node_only_one_side_has_is_named_so():
    import autograd.numpy as anp

    def f(x, y):
        return anp.sin(x * y) + x * x

    def g(x, y):
        return anp.cos(x * y) + x * x

    text = diff_markdown(diff(record_call(f, (0.5, 3.0)), record_call(g, (0.5, 3.0))))
    assert "(from v2_sin, a node only B has)" in text and "None" not in text


def test_a_node_whose_operands_b_swapped_shows_bs_line_and_bs_operand_order():
    import autograd.numpy as anp

    def f(x):
        s = anp.sin(x)
        c = anp.cos(x)
        return s * c

    def h(x):
        c = anp.cos(x)
        s = anp.sin(x)
        return c * s

    d = diff(record_call(f, (0.3,)), record_call(h, (0.3,)))
    product = next(r for r in d.rows if r.primitive == "multiply")
    assert product.b_operands == (d.alignment.a_to_b["v2_cos"], d.alignment.a_to_b["v1_sin"])
    assert product.b_line.endswith(f":{h.__code__.co_firstlineno + 3}") and product.line != product.b_line
    text = diff_markdown(d)
    row = next(line for line in text.splitlines() if line.startswith("| v3_multiply"))
    assert product.b_line in row and "v1_cos, v2_sin" in row
    assert json.loads(diff_json(d))["nodes"][-1]["b_operands"] == ["v1_cos", "v2_sin"]
    same = diff(record_call(f, (0.3,)), record_call(f, (0.3,)))
    assert all(r.b_operands == () for r in same.rows)


def test_each_follows_line_reads_both_values_once(monkeypatch):
    import adtrace.report.diffed as diffed

    d = diff(record_call(g, (3.0,)), record_call(g, (3.0,), engine=BuggySlotsValue))
    read, calls = diffed._values, []
    monkeypatch.setattr(diffed, "_values", lambda x: calls.append(x) or read(x))
    diff_markdown(d)
    assert len(calls) == 1 + len(d.follows) and len(d.follows) > 0  # (the first divergence's table, each line)

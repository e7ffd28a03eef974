"""The page's failing checks, each with the node it names and the step that shows it (issue 29)."""

from adtrace.compare.traced_call import trace_call
from adtrace.view import page_data
from view_cases import fan_out, wrong_rule_call


def test_each_failing_check_names_the_node_of_the_wrong_rule_and_the_step_of_its_vjp():
    data = page_data(call=wrong_rule_call())
    failures = data["failures"]
    assert [f["check"] for f in failures] == ["central finite differences", "per-node local rules"]
    labels = data["graphs"][0]["nodes"]["label"]
    assert {labels[f["node"]] for f in failures} == {"v1_double_wrongly"}
    pass_ = next(p for p in data["passes"] if p["id"] == failures[0]["pass"])
    step = failures[0]["step"]
    statement = data["code"]["rev"]["statements"][pass_["steps"]["statement"][step]]["text"]
    assert statement == "ingrads = node.vjp(outgrad[0])" and pass_["steps"]["node"][step] == failures[0]["node"]


def test_a_failure_that_names_no_node_is_listed_without_one():
    failures = page_data(call=wrong_rule_call(check_nodes=False))["failures"]
    assert [(f["check"], f["node"], f["step"]) for f in failures] == [("central finite differences", None, None)]


def test_a_passing_call_has_no_failure():
    assert page_data(call=trace_call(fan_out, (0.7,)))["failures"] == []

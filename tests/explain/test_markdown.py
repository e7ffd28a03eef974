"""Explanations rendered as Markdown: the verdict, the causes' table, the lines, the paths."""

import autograd.numpy as np

from adtrace.explain import explain, render_explanations


def test_a_zero_gradient_shows_its_cut_and_a_scalar_one_its_paths():
    def f(x):
        return np.sum(np.maximum(x, 0.0) * 2.0)
    text = render_explanations(explain(f, np.array([-1.0, 2.0])))
    assert "## `x[0]` = 0: zero" in text
    row = next(line for line in text.splitlines() if line.startswith("| v1_maximum"))
    assert "`relu-off`" in row and "100%" in row and f":{f.__code__.co_firstlineno + 1}" in row
    assert "## `x[1]` = 2: the sum of its contributions" in text
    assert "adds up, in the recorded order, to the recorded gradient bit for bit" in text
    scalar = render_explanations(explain(lambda x: x * x, 3.0))
    assert "| v0_root -> v1_multiply |" in scalar.replace("  ", " ")


def test_a_long_chain_shows_its_ends_and_one_contribution_adds_up():
    def f(x):
        for _ in range(30):
            x = np.sin(x)
        return x
    text = render_explanations(explain(f, 0.5))
    row = next(line for line in text.splitlines() if line.startswith("| v0_root"))
    assert "v0_root -> v1_sin -> v2_sin -> v3_sin -> ... 23 more ... -> v27_sin -> v28_sin -> v29_sin -> v30_sin" in row
    assert "The 1 recorded contribution into the input adds up" in text


def test_a_cause_shows_the_users_variable_beside_its_line():
    def f(x):
        y = np.where(x > 0, np.sqrt(x), 0.0)
        return np.sum(y)
    found = explain(f, np.array([1.0, 0.0]), wrt=["x[1]"])
    (cause,) = found[0].causes
    assert (cause.node, cause.name) == ("v1_sqrt", None)  # sqrt is inside y's expression: not y
    zero = explain(lambda x: np.sum(np.maximum(x, 0.0)), np.array([-1.0]))
    assert zero[0].causes[0].name is None  # a lambda assigns nothing

    def g(x):
        h = np.maximum(x, 0.0)
        return np.sum(h)
    found = explain(g, np.array([-1.0, 2.0]), wrt=["x[0]"])
    (cause,) = found[0].causes
    assert cause.name == "h" and cause.to_json()["name"] == "h"
    row = next(line for line in render_explanations(found).splitlines() if line.startswith("| v1_maximum"))
    assert f"h@{cause.line}" in row and cause.line.endswith(f":{g.__code__.co_firstlineno + 1}")


def test_no_line_is_wider_than_a_reports():
    from adtrace.report.fit import LINE_WIDTH

    key = "a_weight_matrix_" * 30  # a path starts at v0_root[key][0, 1]: one cell wider than a report's line
    def f(params):
        deep = params[key]
        for _ in range(3):
            deep = np.where(deep > 0, np.log(deep), 0.0)  # a where trap at every level
        return np.sum(deep)
    text = render_explanations(explain(f, {key: np.array([[2.0, 0.0], [0.0, 3.0]])}))
    assert "not finite" in text and max(map(len, text.splitlines())) <= LINE_WIDTH


def test_an_array_output_is_said_to_be_explained_as_the_sum_of_its_elements():
    from adtrace.explain import explain
    text = render_explanations(explain(lambda x: x * 2.0, np.array([1.0, 2.0])))
    assert "The output has 2 elements: each gradient here is that of their sum" in text
    assert "elements: each gradient" not in render_explanations(explain(lambda x: np.sum(x), np.array([1.0, 2.0])))

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
    assert "add up, in the recorded order, to the recorded gradient bit for bit" in text
    scalar = render_explanations(explain(lambda x: x * x, 3.0))
    assert "| v0_root -> v1_multiply |" in scalar.replace("  ", " ")

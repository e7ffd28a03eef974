"""``adtrace explain``: Markdown to standard output or -o, JSON with --json, its exit codes."""

import json

import pytest

from cli_run import adtrace, one_error_line

FUNCS = """\
import autograd.numpy as np


def f(x):
    return np.sum(np.where(x > 0, np.log(x), 0.0) + np.maximum(x, 0.5))


def mlp(params, x):
    h = np.maximum(np.dot(params["W"], x), 0.0)
    return np.sum(h)


def mlp_args():
    return {"W": np.array([[1.0, 2.0], [-3.0, -1.0]])}, np.array([1.0, 1.0])
"""


@pytest.fixture
def project(tmp_path):
    (tmp_path / "funcs.py").write_text(FUNCS)
    return tmp_path


def test_markdown_to_standard_output_and_json_to_a_file(project):
    out = adtrace("explain", "funcs.py:f", "--at", "[1.0, 0.0, 0.2]", "--json", "why.json", cwd=project)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("# Explanations: funcs.py:f")
    assert "## `x[1]` = nan: not finite" in out.stdout and "`where-unselected-branch`" in out.stdout
    found = {e["selector"]: e for e in json.loads((project / "why.json").read_text())}
    assert found["x[1]"]["verdict"] == "nonfinite" and found["x[1]"]["gradient"] == "nan"
    assert [c["reason"] for c in found["x[1]"]["causes"]] == ["where-unselected-branch", "log-of-zero"]
    assert found["x[1]"]["causes"][0]["line"] == "funcs.py:5"
    assert found["x[2]"]["attribution"] == [{"line": "funcs.py:5", "share": 5.0, "contributions": 2}]


def test_wrt_selects_elements_of_a_dict_argument(project):
    out = adtrace("explain", "funcs.py:mlp", "--args-from", "funcs.py:mlp_args", "--wrt", "params['W'][1, 0]",
                  "-o", "why.md", cwd=project)
    assert out.returncode == 0 and out.stdout == "", out.stderr
    text = (project / "why.md").read_text()
    assert "## `params['W'][1, 0]` = 0: zero" in text
    assert "`relu-off`" in text and "funcs.py:9" in text
    assert "## Gradient scale by line" in text and "| `params['W']` |" in text


@pytest.mark.parametrize("args, message", [
    (["--wrt", "x[5]"], "--wrt x[5]: no such element"),
    (["--wrt", "f(x)"], "--wrt f(x): not a selector"),
    (["--wrt", "x[0:1]"], "--wrt x[0:1]: subscripts must be numbers or strings"),
    (["--wrt", "y[0]"], "--wrt y[0]: the differentiated argument is called x, not y"),
    (["--argnum", "2"], "--argnum 2: the function is given 1 argument"),
])
def test_errors_are_one_clear_line(project, args, message):
    one_error_line(adtrace("explain", "funcs.py:f", "--at", "[1.0, 0.0]", *args, cwd=project), message)


def test_an_argument_with_no_element_has_nothing_to_explain(project):
    out = adtrace("explain", "funcs.py:f", "--at", "[]", cwd=project)
    assert out.returncode == 3 and "nothing to explain" in out.stderr


def test_help_states_its_own_exit_codes():
    text = " ".join(adtrace("explain", "--help").stdout.split())
    assert "exit status: 0 explained; 2 the command line, the target or a selector is wrong; 3" in text
    assert "1 a check failed" not in text


NEURON = """\
def neuron(w, x, b):
    return (w * x + b).relu()
"""


def test_engine_explains_a_micrograd_leaf_by_its_argument_name(tmp_path):
    (tmp_path / "neuron.py").write_text(NEURON)
    out = adtrace("explain", "neuron.py:neuron", "--at", "0.5", "--at", "-2.0", "--at", "0.2", "--engine", "micrograd",
                  "--wrt", "w", "--json", "why.json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "## `w` = 0: zero" in out.stdout and "`relu-off`" in out.stdout
    (found,) = json.loads((tmp_path / "why.json").read_text())
    assert (found["selector"], found["verdict"]) == ("w", "zero")
    assert found["causes"][0]["line"] == "neuron.py:2" and found["exact"] is True
    bad = adtrace("explain", "neuron.py:neuron", "--at", "0.5", "--at", "-2.0", "--at", "0.2", "--engine", "micrograd",
                  "--wrt", "q", cwd=tmp_path)
    assert bad.returncode == 2
    one_error_line(bad, "--wrt", "q names no leaf", "w, x, b")


def test_engine_a_return_value_adtrace_refuses_is_not_said_to_be_raised(tmp_path):
    (tmp_path / "flt.py").write_text("def flt(w, b):\n    return 3.0\n")
    out = adtrace("explain", "flt.py:flt", "--at", "1.0", "--at", "2.0", "--engine", "micrograd", cwd=tmp_path)
    assert out.returncode == 2
    one_error_line(out, "flt.py:flt returned a float, not a Value")
    assert "raised" not in out.stderr


def test_wrt_a_whole_part_a_whole_argument_and_a_negative_index(project):
    def headings(*args):
        out = adtrace("explain", *args, cwd=project)
        assert out.returncode == 0, out.stderr
        return [line.split("`")[1] for line in out.stdout.splitlines() if line.startswith("## `")]
    mlp = ("funcs.py:mlp", "--args-from", "funcs.py:mlp_args")
    assert headings(*mlp, "--wrt", "params['W']") == [f"params['W'][{i}, {j}]" for i in (0, 1) for j in (0, 1)]
    assert headings("funcs.py:f", "--at", "[1.0, 2.0]", "--wrt", "x") == ["x[0]", "x[1]"]
    assert headings("funcs.py:f", "--at", "[1.0, 2.0]", "--wrt", "x[-1]") == ["x[1]"]
    out = adtrace("explain", *mlp, "--wrt", "zzz['W'][0, 1]", cwd=project)
    assert out.returncode == 2 and "called params, not zzz" in out.stderr


def test_engine_explains_elements_of_a_class_of_numpy_arrays(tmp_path):
    import shutil
    from pathlib import Path

    shutil.copy(Path(__file__).parents[2] / "learner_arrays.py", tmp_path / "learner_arrays.py")
    (tmp_path / "layer.py").write_text("def layer(w, x):\n    h = (w @ x).relu()\n    return (h * x).sum()\n")
    out = adtrace("explain", "layer.py:layer", "--at", "[[1.0, -2.0], [3.0, 0.5]]", "--at", "[[1.0], [2.0]]",
                  "--engine", "learner_arrays.py:Tensor", "--wrt", "w[0, 1]", "--wrt", "x[1, 0]", "--json", "why.json",
                  cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "## `w[0, 1]` = 0: zero" in out.stdout and "`relu-off`" in out.stdout
    dead, alive = json.loads((tmp_path / "why.json").read_text())
    assert (dead["selector"], dead["causes"][0]["reason"], dead["causes"][0]["line"]) == ("w[0, 1]", "relu-off",
                                                                                          "layer.py:2")
    assert (alive["selector"], alive["gradient"], alive["exact"]) == ("x[1, 0]", 5.0, True)
    bad = adtrace("explain", "layer.py:layer", "--at", "[[1.0, -2.0], [3.0, 0.5]]", "--at", "[[1.0], [2.0]]",
                  "--engine", "learner_arrays.py:Tensor", "--wrt", "w[2, 0]", cwd=tmp_path)
    assert bad.returncode == 2

"""autograd's own examples (its sdist's examples/), each reported and checked as a user would.

The sdist is the one ``adtrace upstream`` fetches and caches (``~/.cache/adtrace``); the examples
import scipy and matplotlib (the ``test`` extra installs both).
"""

import ast
import subprocess
import sys
from dataclasses import replace
from functools import lru_cache

import pytest

from adtrace.tools.autograd_examples import EXAMPLES, module
from adtrace.tools.autograd_examples.load import definitions, examples_folder
from adtrace.report.fit import LINE_WIDTH
from adtrace.tools.autograd_examples.proof import SIZE_LIMIT, markdown, run
from readme import stated

NAMED_BY_THE_ISSUE = ["logistic_regression", "neural_net", "rnn", "lstm", "convnet", "gaussian_process", "gmm",
                      "variational_autoencoder", "black_box_svi", "fixed_points", "ode_net", "rosenbrock", "tanh"]


@lru_cache(maxsize=None)
def example_run(name):
    return run(EXAMPLES[name], rounds=0)


def test_the_examples_the_issue_names_are_all_here():
    assert set(NAMED_BY_THE_ISSUE) <= set(EXAMPLES) and len(EXAMPLES) >= 20
    assert stated(r"`adtrace upstream --examples` loads (\d+) of the examples") == len(EXAMPLES)


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_report_and_check_pass(name):
    r = example_run(name)
    failed = [f"{c.name}: {c.detail}" for c in r.checks if not c.passed]
    assert failed == [] and r.report_exit == 0
    assert r.check_exit == 0, r.node_checks.first_failure
    assert [c.name for c in r.checks if not c.skipped] == [
        "reference engine vs autograd, per node", "both visit orders are reverse topological",
        "central finite differences"]
    assert r.visited >= 2 and r.events > r.nodes


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_report_respects_the_size_and_line_limits(name):
    assert example_run(name).report_bytes < SIZE_LIMIT and example_run(name).widest_line <= LINE_WIDTH


def test_nested_passes_are_counted_and_not_taken_for_the_users():
    nested = {name: example_run(name).nested for name in ("fixed_points", "ode_net", "tanh", "gmm", "rnn")}
    assert nested["fixed_points"] > 10 and nested["ode_net"] > 10
    assert nested["tanh"] == nested["gmm"] == nested["rnn"] == 0
    assert example_run("tanh").passes == 3 and example_run("gmm").passes == 2  # run while the forward pass ran


def test_fixed_points_passes_only_at_the_tolerance_of_its_own_solve():
    example = EXAMPLES["fixed_points"]
    assert example.rtol == 1e-2
    strict = run(replace(example, rtol=None), rounds=0)
    assert strict.report_exit == 1 and strict.check_exit == 1
    assert "relative difference 2.8e-03" in strict.checks[-1].detail


def test_every_driver_returns_args_and_kwargs():
    for example in EXAMPLES.values():
        args, kwargs = example.arguments()
        assert isinstance(args, tuple) and kwargs == {} and 0 <= example.argnum < len(args)


def test_the_table_has_a_row_per_example():
    runs = [example_run(name) for name in ("rosenbrock", "fixed_points")]
    text = markdown(runs, rounds=0)
    assert text.count("\n| `") == 2 and "**2 of 2 examples pass every check within the size limit.**" in text
    assert "| `fixed_points` |" in text and "relative difference 2.8e-03" in text


# -------------------- loading an example: its definitions, not its script --------------------


def test_definitions_keep_imports_functions_registrations_and_the_globals_they_read():
    tree = ast.parse("import a\nx = 1\ny = 2\nprint(x)\ndef f():\n    return x\ndefvjp(f, None)\n"
                     "V.register(f)\nfor i in range(3):\n    pass\nz = minimize(f)\n")
    assert [ast.unparse(s) for s in definitions(tree.body)] == [
        "import a", "x = 1", "def f():\n    return x", "defvjp(f, None)", "V.register(f)"]


def test_the_script_part_of_an_example_does_not_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    module("tanh")  # its top level plots and saves tanh.png
    rosenbrock, logistic = module("rosenbrock"), module("logistic_regression")
    assert list(tmp_path.iterdir()) == []
    assert not hasattr(rosenbrock, "result") and hasattr(logistic, "inputs") and not hasattr(logistic, "weights")
    assert module("rkhs").RKHSFun in __import__("autograd").core.VSpace.mappings  # its registration ran
    folder = str(examples_folder())
    assert not any(str(getattr(m, "__file__", None) or "").startswith(folder) for m in list(sys.modules.values()))
    assert folder not in sys.path


# -------------------- the command line --------------------


def adtrace(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "adtrace", *args], capture_output=True, text=True, cwd=cwd)


def test_report_and_check_through_the_command_line(tmp_path):
    drivers = "adtrace.tools.autograd_examples.drivers"
    report = adtrace("report", f"{drivers}:rosenbrock", "--at", "[0.5, -0.3]", cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    assert "| central finite differences                | pass     |" in report.stdout
    check = adtrace("check", f"{drivers}:fixed_points", "--at", "2.0", "--rtol", "0.01", cwd=tmp_path)
    assert check.returncode == 0 and check.stdout.strip().endswith("nodes tested, all pass.")


def test_upstream_examples_writes_the_table(tmp_path):
    out = adtrace("upstream", "--examples", "--only", "rosenbrock", "--rounds", "1", "-o", "examples.md", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == "1 of 1 examples pass every check within the size limit -> examples.md"
    assert "| `rosenbrock` |" in (tmp_path / "examples.md").read_text()
    unknown = adtrace("upstream", "--examples", "--only", "nope", cwd=tmp_path)
    assert unknown.returncode == 2 and "no example named nope" in unknown.stderr
    (tmp_path / "folder").mkdir()
    folder = adtrace("upstream", "--examples", "--only", "rosenbrock", "--rounds", "1", "-o", "folder", cwd=tmp_path)
    assert folder.returncode == 2 and folder.stdout == ""  # refused before any example ran
    assert folder.stderr == "adtrace: cannot write -o folder: is a directory\n"

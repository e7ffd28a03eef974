"""``adtrace report/view/check --engine``: micrograd and a learner's own class, run as a user would
(subprocess), with the command line's exit codes: 0 all checks pass, 1 a check failed, 2 an error."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_run import adtrace as run, one_error_line

TESTS = Path(__file__).resolve().parents[1]
FUNCS = '''
def twice(a):
    return a + a


def neuron(x, w):
    n = x * w + 0.5
    return (2 * n).exp() + n.tanh() ** 2 - w / 3


def mlp_loss(a, b):
    return ((a * b + a ** 2).relu() - b / a) * 2 + (b - 3).relu()


def number(a):
    return 3.0
'''


def adtrace(*args, cwd):
    return subprocess.run([sys.executable, "-m", "adtrace", *args], capture_output=True, text=True, cwd=cwd)


@pytest.fixture
def project(tmp_path):
    (tmp_path / "funcs.py").write_text(FUNCS)
    shutil.copy(TESTS / "value_classes.py", tmp_path / "value_classes.py")
    return tmp_path


def test_the_classic_bug_is_reported_named_and_exits_1(project):
    out = adtrace("report", "funcs.py:twice", "--at", "3", "--engine", "value_classes.py:BuggyValue", "--check-nodes",
                  cwd=project)
    assert out.returncode == 1, out.stderr
    text = out.stdout
    assert ("| every write into .grad adds | FAIL | 1 of 2 writes lost a contribution; first: v1_add's write into "
            "v0_leaf.grad (argument 1) replaced 1 by 1; the lecture's node_to_grad[v0_leaf] is [1, 1], sum 2 |"
            ) in " ".join(text.split())
    assert "**First divergent node: `v0_leaf`**" in text
    assert "First failing node: `v1_add` (`+`) argument 1, called at funcs.py:3" in text
    assert "## State snapshot per statement of `BuggyValue.backward`" in text

    check = adtrace("check", "funcs.py:twice", "--at", "3", "--engine", "value_classes.py:BuggyValue", cwd=project)
    assert check.returncode == 1, check.stderr
    assert check.stdout.rstrip().splitlines()[-1].startswith(
        "First failing node: `v1_add` (`+`) argument 1, called at funcs.py:3: v0_leaf.grad = 1 replaced 1 "
        "instead of adding to it: the contribution 1 already there is lost (write it with +=)")  # as the README


@pytest.mark.parametrize("engine, target, at", [
    ("value_classes.py:Value", "funcs.py:twice", ["3"]),
    ("value_classes.py:Value", "funcs.py:neuron", ["0.5", "-0.3"]),
    ("micrograd", "funcs.py:mlp_loss", ["-1.5", "2"]),
])
def test_a_right_engine_passes_every_check_and_exits_0(project, engine, target, at):
    points = [arg for value in at for arg in ("--at", value)]
    out = adtrace("report", target, *points, "--engine", engine, "--check-nodes", "-o", "r.md", "--html", "r.html",
                  cwd=project)
    assert out.returncode == 0, out.stderr
    text = (project / "r.md").read_text()
    assert "FAIL" not in text and "| per-node local rules | pass |" in " ".join(text.split())
    assert (project / "r.html").read_text().startswith("<!DOCTYPE html>")
    check = adtrace("check", target, *points, "--engine", engine, cwd=project)
    assert check.returncode == 0 and "all pass" in check.stdout, check.stdout + check.stderr


def test_the_json_export_names_the_engine_and_each_replaced_write(project):
    out = adtrace("report", "funcs.py:twice", "--at", "3", "--engine", "value_classes.py:BuggyValue", "-o", "r.md",
                  "--json", "r.json", cwd=project)
    assert out.returncode == 1, out.stderr
    document = json.loads((project / "r.json").read_text())["reverse"]
    writes = [e for e in document["events"] if e["kind"] == "add_outgrads"]
    assert document["engine"] == "micrograd" and [w["replaced"] for w in writes] == [True, True]
    assert [(w["previous"], w["result"]) for w in writes] == [
        ([0.0, False], [1.0, False]), ([1.0, False], [1.0, False])]


def test_view_with_an_engine(project):
    out = adtrace("view", "funcs.py:twice", "--at", "3", "--engine", "value_classes.py:BuggyValue", "-o", "p.html",
                  cwd=project)
    assert out.returncode == 1 and out.stdout == "" and out.stderr.endswith("wrote p.html\n"), out.stderr
    page = (project / "p.html").read_text()
    assert '"state":"grads"' in page and "BuggyValue.backward (value_classes.py:" in page and str(project) not in page


@pytest.mark.parametrize("args, message", [
    (["--engine", "funcs.py:twice"], "adtrace: --engine funcs.py:twice is a function, not a class"),
    (["--engine", "micrograd", "--mode", "both"], "adtrace: --engine micrograd runs backward(): reverse mode only"),
    (["--engine", "nowhere.py:Value"], "adtrace: no such file: nowhere.py"),
])
def test_engine_errors_are_one_clear_line(project, args, message):
    out = adtrace("report", "funcs.py:twice", "--at", "3", *args, cwd=project)
    assert out.returncode == 2 and out.stderr.startswith(message) and out.stderr.count("\n") == 1, out.stderr


def test_a_class_not_of_the_shape_keeps_its_errors_lines_and_the_declaration_works_from_a_file(project):
    """The ``ShapeError`` as ``record()`` gives it, line by line, with what to do on the command line;
    done (the declaration in a file, the class named from it), ``check`` runs and names the ``=`` bug."""
    shutil.copy(TESTS / "learner_shapes.py", project / "learner_shapes.py")
    (project / "sums.py").write_text("def f(x, y):\n    return (x + y) * x\n")
    out = adtrace("check", "sums.py:f", "--at", "0.4", "--at", "1.3", "--engine", "learner_shapes.py:BuggyScalar",
                  cwd=project)
    lines = out.stderr.splitlines()
    assert out.returncode == 2 and lines[0].startswith("adtrace: BuggyScalar is not of micrograd's shape"), out.stderr
    assert "  - no backward() method" in lines and "    from adtrace.recording.micrograd import declare" in lines
    hint = lines.index("    with adtrace.record(engine=engine): ...") + 1
    assert lines[hint].startswith("    or put this declaration in a file and pass --engine FILE.py:NAME")
    (project / "declared.py").write_text("from adtrace.recording.micrograd import declare\n"
                                         "from learner_shapes import BuggyScalar, SCALAR_NAMES\n"
                                         "declare(BuggyScalar, **SCALAR_NAMES)\n")
    out = adtrace("check", "sums.py:f", "--at", "0.4", "--at", "1.3", "--engine", "declared.py:BuggyScalar",
                  cwd=project)
    assert out.returncode == 1 and "First failing node: `v" in out.stdout and "replaced" in out.stdout, out.stderr


def test_a_function_that_returns_no_value_and_the_limits_of_check(project):
    out = adtrace("report", "funcs.py:number", "--at", "3", "--engine", "micrograd", cwd=project)
    assert out.returncode == 2 and "returned a float, not a Value" in out.stderr
    out = adtrace("check", "funcs.py:twice", "--at", "3", "--engine", "micrograd", "--max-nodes", "1", cwd=project)
    assert out.returncode == 2 and "with --engine every node is checked" in out.stderr


# -------------------- --engine FILE.py:Value with the function's file: one class --------------------

ENGINE = (TESTS / "value_classes.py").read_text()  # its `Value`: the course's class
LOSS = '''

def loss(x):
    w = {value}(-3.0)  # a value the function builds itself: it must be of the engine's class
    return (x * w + 0.5).tanh()
'''
LAYOUTS = {  # name: the files, the target, --engine
    "one file": ({"f.py": ENGINE + LOSS.format(value="Value")}, "f.py:loss", "f.py:Value"),
    "from my_engine import Value": ({"my_engine.py": ENGINE, "f.py": "from my_engine import Value\n" +
                                    LOSS.format(value="Value")}, "f.py:loss", "my_engine.py:Value"),
    "import my_engine": ({"my_engine.py": ENGINE, "f.py": "import my_engine\n" + LOSS.format(value="my_engine.Value")},
                         "f.py:loss", "my_engine.py:Value"),
    "another folder": ({"lab/my_engine.py": ENGINE, "lab/f.py": "from my_engine import Value\n" +
                        LOSS.format(value="Value")}, "lab/f.py:loss", "lab/my_engine.py:Value"),
    "engine as a module": ({"my_engine.py": ENGINE, "f.py": "from my_engine import Value\n" +
                            LOSS.format(value="Value")}, "f.py:loss", "my_engine:Value"),
    "package, engine file": ({"pkg/__init__.py": "", "pkg/engine.py": ENGINE, "pkg/model.py": "from .engine import "
                              "Value\n" + LOSS.format(value="Value")}, "pkg.model:loss", "pkg/engine.py:Value"),
    "package, engine module": ({"pkg/__init__.py": "", "pkg/engine.py": ENGINE, "pkg/model.py": "from .engine import "
                                "Value\n" + LOSS.format(value="Value")}, "pkg.model:loss", "pkg.engine:Value"),
}


def written(folder, files):
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


@pytest.mark.parametrize("layout", LAYOUTS)
def test_the_function_and_the_engine_share_one_class_in_every_layout(tmp_path, layout):
    files, target, engine = LAYOUTS[layout]
    written(tmp_path, files)
    out = run("check", target, "--at", "2", "--engine", engine, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.rstrip().endswith("3 of 3 nodes tested, all pass."), out.stdout  # w's * and + recorded


@pytest.mark.parametrize("layout", ["one file", "from my_engine import Value"])
def test_a_report_through_the_engine_the_function_imports(tmp_path, layout):
    files, target, engine = LAYOUTS[layout]
    out = run("report", target, "--at", "2", "--engine", engine, "--check-nodes", cwd=written(tmp_path, files))
    assert out.returncode == 0, out.stderr
    assert "| per-node local rules | pass |" in " ".join(out.stdout.split())
    text = " ".join(out.stdout.split())
    assert "6 nodes recorded" in text  # x, w and 0.5 the leaves, then *, + and tanh
    assert "| gradient (.grad of each argument after backward()) | -0.000200414 |" in text  # -3 (1 - tanh(-5.5)^2)


def test_a_second_class_of_the_engine_name_is_told_in_one_line(tmp_path):
    written(tmp_path, {"my_engine.py": ENGINE, "copy_of_engine.py": ENGINE,
                       "f.py": "from copy_of_engine import Value\n" + LOSS.format(value="Value"),
                       "g.py": "from copy_of_engine import Value\n\n\ndef loss(x):\n    return Value(2.0) * 3\n",
                       # (the engine's * wraps the other class's value as the data of one of its own: nothing raises)
                       "h.py": "from copy_of_engine import Value\n\n\ndef loss(x):\n    return x * Value(2.0) + x\n"})
    for command, target in [("check", "f.py:loss"), ("report", "f.py:loss"), ("check", "g.py:loss"),
                            ("report", "g.py:loss"), ("check", "h.py:loss"), ("report", "h.py:loss")]:
        out = run(command, target, "--at", "2", "--engine", "my_engine.py:Value", cwd=tmp_path)
        one_error_line(out, "adtrace: loss built values of Value of module copy_of_engine (copy_of_engine.py:15), "
                            "not of the engine's Value of module my_engine (my_engine.py:15)")
        assert "raised" not in out.stderr


def test_a_file_of_a_package_is_told_its_module_form(tmp_path):
    files, _, _ = LAYOUTS["package, engine file"]
    out = run("check", "pkg/model.py:loss", "--at", "2", "--engine", "pkg/engine.py:Value",
              cwd=written(tmp_path, files))
    one_error_line(out, "attempted relative import", "(a module of package pkg: give it as pkg.model:NAME)")
def test_a_tensor_engine_through_report_check_and_view(tmp_path):
    """A learner's numpy ``Tensor`` (``@``, a broadcast ``+``, ``tanh``, ``sum``), the arguments from a
    function: a right class passes everything, one whose ``@`` backward forgets a transpose exits 1
    naming ``v3_matmul`` argument 0 and its line; ``(x * x).sum()`` (it crashed) reports and checks."""
    shutil.copy(TESTS / "learner_arrays.py", tmp_path / "learner_arrays.py")
    (tmp_path / "layer.py").write_text(
        "import numpy as np\n\n\ndef layer(w, x, b):\n    return ((w @ x + b).tanh()).sum()\n\n\n"
        "def square_sum(x):\n    return (x * x).sum()\n\n\n"
        "def layer_args():\n    return np.array([[0.5, -1.0], [0.2, 0.4]]), np.array([[1.0, 2.0], [0.5, -1.0]]), "
        "np.array([0.1, -0.2])\n")
    args = ("layer.py:layer", "--args-from", "layer.py:layer_args")
    right = adtrace("report", *args, "--engine", "learner_arrays.py:Tensor", "--check-nodes", "-o", "r.md",
                    "--html", "r.html", cwd=tmp_path)
    assert right.returncode == 0, right.stderr
    assert "FAIL" not in (tmp_path / "r.md").read_text() and (tmp_path / "r.html").read_text().startswith("<!DOCTYPE")
    wrong = adtrace("check", *args, "--engine", "learner_arrays.py:NoTransposeTensor", cwd=tmp_path)
    assert wrong.returncode == 1 and "First failing node: `v3_matmul` (`@`) argument 0, called at layer.py:5" in (
        wrong.stdout), wrong.stdout + wrong.stderr
    view = adtrace("view", *args, "--engine", "learner_arrays.py:NoTransposeTensor", "-o", "p.html", cwd=tmp_path)
    assert view.returncode == 1 and view.stderr.endswith("wrote p.html\n"), view.stderr
    for command in ("report", "check"):
        out = adtrace(command, "layer.py:square_sum", "--at", "[1.0, 2.0, 3.0]", "--engine", "learner_arrays.py:Tensor",
                      *(["-o", "s.md"] if command == "report" else []), cwd=tmp_path)
        assert out.returncode == 0 and "Traceback" not in out.stderr, out.stdout + out.stderr
def test_a_subtraction_written_with_minus_equals_passes(tmp_path):
    """``other.grad -= out.grad`` in ``__sub__`` (correct) was read as an assignment: "v1_sub's write into
    v0_leaf.grad (argument 1) replaced 1 by 0", exit 1. The engine and the function in one file."""
    (tmp_path / "engine.py").write_text((TESTS / "learner_writes.py").read_text()
                                        + "\n\ndef f(x):\n    return x - x\n")
    check = adtrace("check", "engine.py:f", "--at", "2", "--engine", "engine.py:SignedValue", cwd=tmp_path)
    assert check.returncode == 0, (check.stdout, check.stderr)
    assert check.stdout.rstrip().splitlines()[-1] == "1 of 1 nodes tested, all pass."
    report = adtrace("report", "engine.py:f", "--at", "2", "--engine", "engine.py:SignedValue", "--check-nodes",
                     cwd=tmp_path)
    assert report.returncode == 0, (report.stdout[-2000:], report.stderr)
    assert "| every write into .grad adds | pass | 2 writes, 2 add |" in " ".join(report.stdout.split())


@pytest.mark.parametrize("function, engine, title, node, line", [
    ("squares", "QueueValue", "the visit order is not reverse topological", "v1_mul", 2),
    ("backward_twice", "Value", "backward() ran twice over the same graph", "v3_mul", 2),
    ("not_zeroed", "Value", "a gradient was not zero when the pass began", "v0_leaf", None),
])
def test_a_bug_of_the_whole_pass_fails_check_and_report_with_its_name_and_line(tmp_path, function, engine, title,
                                                                               node, line):
    """Every local rule right, the gradient wrong: ``check`` exited 0 ("all pass")."""
    import learner_passes

    shutil.copy(TESTS / "learner_passes.py", tmp_path / "learner_passes.py")
    target = (f"learner_passes.py:{function}", "--at", "1", "--engine", f"learner_passes.py:{engine}")
    check = adtrace("check", *target, cwd=tmp_path)
    assert check.returncode == 1, (check.stdout, check.stderr)
    verdict = check.stdout.rstrip().splitlines()[-1]
    made = "(made at " if line is not None else "(an input)"  # (the argument --at made a leaf: not __main__:8)
    assert verdict.startswith(f"The backward pass is wrong: {title}, at `{node}` {made}"), verdict
    if line is not None:
        first = getattr(learner_passes, function).__code__.co_firstlineno
        assert f"(made at learner_passes.py:{first + line})" in verdict
    report = adtrace("report", *target, "-o", "r.md", cwd=tmp_path)
    assert report.returncode == 1, report.stderr
    summary = (tmp_path / "r.md").read_text().split("\n## ")[1]  # (the report's first section)
    assert summary.startswith("Summary") and f"**The backward pass is wrong: {title}**, at `{node}`" in summary


def test_a_right_pass_after_zeroing_passes_check(tmp_path):
    shutil.copy(TESTS / "learner_passes.py", tmp_path / "learner_passes.py")
    check = adtrace("check", "learner_passes.py:zeroed", "--at", "1", "--engine", "learner_passes.py:Value",
                    cwd=tmp_path)
    assert check.returncode == 0 and check.stdout.rstrip().endswith("all pass."), (check.stdout, check.stderr)


@pytest.mark.parametrize("command", ["check", "report"])
def test_a_function_returning_a_number_is_told_so_by_check_as_by_report(tmp_path, command):
    """``loss`` returns ``.data``: nothing to run ``backward()`` on. ``check`` said "raised AttributeError:
    'float' object has no attribute 'backward'" (and would have named its own wrapper)."""
    written(tmp_path, {"my_engine.py": ENGINE, "f.py": "def loss(x):\n    return (x * x).data\n"})
    out = run(command, "f.py:loss", "--at", "2", "--engine", "my_engine.py:Value", cwd=tmp_path)
    one_error_line(out, "loss returned a float, not a Value: nothing to call backward() on")
    assert "through_engine" not in out.stderr

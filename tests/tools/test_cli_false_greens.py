"""Never a pass that checked nothing, never a misleading failure: a target that exits, bad option
values, literals too deep or too large, two outputs in one file, numpy's warnings about adtrace's
own arithmetic, experiments that check nothing, reports and checks where no check could run."""

import json
import os
import shutil
import warnings

import numpy as np
import pytest

from adtrace.compare.align import compare
from adtrace.compare.checks import finite_differences
from cli_run import REPO, adtrace, one_error_line

TARGETS = {
    "exits.py": "import sys\n\ndef zero(x):\n    sys.exit(0)\n\ndef five(x):\n    sys.exit(5)\n",
    "exits_at_import_0.py": "import sys\nsys.exit(0)\n\ndef f(x):\n    return x * x\n",
    "exits_at_import_5.py": "import sys\nsys.exit(5)\n\ndef f(x):\n    return x * x\n",
    "funcs.py": "import autograd.numpy as np\n\ndef square(x):\n    return x * x\n\ndef at_zero(x):\n"
                "    return np.abs(x)\n",
    "pair.py": '''
from autograd.core import VSpace
from autograd.extend import Box


class Pair:
    def __init__(self, a, b):
        self.a, self.b = a, b


class PairSpace(VSpace):
    """A vector space with no random direction: finite differences cannot move along it."""

    def __init__(self, value):
        self.size = 2

    def zeros(self):
        return Pair(0.0, 0.0)


class PairBox(Box):
    pass


PairSpace.register(Pair)
PairBox.register(Pair)


def constant(p):
    return 3.0


def arguments():
    return (Pair(1.0, 2.0),)
''',
}


@pytest.fixture
def project(tmp_path):
    for name, source in TARGETS.items():
        (tmp_path / name).write_text(source)
    return tmp_path


@pytest.mark.parametrize("command", [["report"], ["check"], ["view", "-o", "page.html"]])
@pytest.mark.parametrize("target, message", [
    ("exits.py:zero", "exits.py:zero called sys.exit(0)"),
    ("exits.py:five", "exits.py:five called sys.exit(5)"),
    ("exits:zero", "exits:zero called sys.exit(0)"),
    ("exits_at_import_0.py:f", "exits_at_import_0.py called sys.exit(0) while loading"),
    ("exits_at_import_5.py:f", "exits_at_import_5.py called sys.exit(5) while loading"),
    ("exits_at_import_0:f", "module 'exits_at_import_0' called sys.exit(0) while loading"),
])
def test_a_target_that_exits_is_an_error_of_the_target(project, command, target, message):
    out = adtrace(command[0], target, "--at", "1.0", *command[1:], cwd=project)
    one_error_line(out, message)
    assert not (project / "page.html").exists()


@pytest.mark.parametrize("command, option, value, message", [
    ("check", "--max-nodes", "0", "must be a whole number, at least 1, got '0'"),
    ("check", "--max-nodes", "-1", "must be a whole number, at least 1, got '-1'"),
    ("check", "--sample", "0", "must be a whole number, at least 1, got '0'"),
    ("check", "--sample", "-3", "must be a whole number, at least 1, got '-3'"),
    ("check", "--max-rows", "0", "must be a whole number, at least 1, got '0'"),
    ("report", "--max-rows", "-5", "must be a whole number, at least 1, got '-5'"),
    ("report", "--rtol", "0", "must be a finite positive number, got '0'"),
    ("report", "--rtol", "inf", "must be a finite positive number, got 'inf'"),
    ("check", "--rtol", "nan", "must be a finite positive number, got 'nan'"),
    ("report", "--argnum", "-1", "must be a whole number, 0 or more, got '-1'"),
])
def test_a_bad_option_value_is_the_options_error(project, command, option, value, message):
    out = adtrace(command, "funcs.py:square", "--at", "1.0", option, value, cwd=project)
    assert out.returncode == 2 and out.stdout == ""
    assert f"error: argument {option}: {message}" in out.stderr and "Traceback" not in out.stderr


@pytest.mark.parametrize("literal", [
    "[" * 1000 + "]" * 1000,
    "-" * 50000 + "1",
    "1" + "+1" * 20000,
    "~" * 30000 + "1",
    "[" + "1.0, " * 24000 + "]",  # 120,000 characters: over the bound (and near the kernel's limit of one argument)
    "[" * 70 + "1" + "]" * 70,
])
def test_a_literal_too_deep_or_too_large_is_one_line(project, literal):
    out = adtrace("report", "funcs.py:square", f"--at={literal}", cwd=project)
    one_error_line(out, "--at ")
    assert len(out.stderr) < 300


def test_a_target_calling_os_exit_ends_adtrace_with_its_code_as_the_readme_says(project):
    (project / "hard_exit.py").write_text("import os\n\ndef f(x):\n    os._exit(0)\n")
    out = adtrace("check", "hard_exit.py:f", "--at", "1.0", cwd=project)
    assert out.returncode == 0 and out.stdout == "" and out.stderr == ""  # nothing checked, nothing said: documented


@pytest.mark.parametrize("dtype, digits", [("float64", 400), ("float32", 40)])
def test_an_integer_too_large_for_a_float_is_one_line(project, dtype, digits):
    out = adtrace("report", "funcs.py:square", "--at", "1" * digits, "--dtype", dtype, cwd=project)
    one_error_line(out, f"an integer of {digits} digits is too large for a {dtype}")
    assert adtrace("report", "funcs.py:square", "--at", "1" * 39, "--dtype", "float32", cwd=project).returncode == 0


@pytest.mark.parametrize("outputs", [
    ["-o", "r.md", "--json", "r.md"],
    ["-o", "r.md", "--json", "./r.md"],
    ["-o", "r.md", "--html", "sub/../r.md"],
    ["-o", "r.md", "--json", "{tmp}/r.md"],
    ["-o", "r.md", "--json", "link.md"],
    ["--json", "funcs.py"],
    ["-o", "./funcs.py"],
    ["-o", "-", "--json", "-"],
])
def test_two_outputs_in_one_file_are_refused(project, outputs):
    (project / "sub").mkdir()
    (project / "r.md").write_text("before\n")
    os.symlink("r.md", project / "link.md")
    source = (project / "funcs.py").read_text()
    out = adtrace("report", "funcs.py:square", "--at", "1.0", *[o.format(tmp=project) for o in outputs], cwd=project)
    one_error_line(out)
    assert any(said in out.stderr for said in ("name the same file", "both write to standard output",
                                               "would overwrite TARGET's source file funcs.py"))
    assert (project / "r.md").read_text() == "before\n" and (project / "funcs.py").read_text() == source


def test_standard_output_is_the_dash_alone(project):
    """``-`` is standard output (the report's by default); ``./-`` is a file named ``-``."""
    out = adtrace("report", "funcs.py:square", "--at", "1.0", "--json", "-", cwd=project)
    one_error_line(out, "-o and --json - both write to standard output")
    out = adtrace("report", "funcs.py:square", "--at", "1.0", "--json", "./-", cwd=project)
    assert out.returncode == 0 and out.stdout.startswith("# adtrace report"), out.stderr
    assert json.loads((project / "-").read_text())["reverse"]["events"][0]["kind"] == "root"


@pytest.mark.parametrize("target, outputs, source", [
    ("funcs:square", ["-o", "funcs.py"], "TARGET's source file"),  # module form: the module's file
    ("pkg.model:square", ["--html", "pkg/model.py"], "TARGET's source file"),
    ("funcs.py:square", ["--json", "engine.py", "--engine", "engine.py:Value"], "--engine's source file"),
    ("funcs.py:square", ["-o", "engine.py", "--engine", "engine:Value"], "--engine's source file"),
    ("funcs.py:square", ["-o", "args.py", "--args-from", "args:values"], "--args-from's source file"),
])
def test_an_output_over_a_source_in_module_form_is_refused_before_anything_runs(project, target, outputs, source):
    (project / "pkg").mkdir()
    (project / "pkg" / "__init__.py").write_text("print('pkg ran')\n")
    (project / "pkg" / "model.py").write_text("print('model ran')\n" + TARGETS["funcs.py"])
    for name in ("engine.py", "args.py"):
        (project / name).write_text("print('it ran')\n")
    before = {p: p.read_bytes() for p in project.rglob("*.py")}
    args = [] if "--args-from" in outputs else ["--at", "1.0"]
    out = adtrace("report", target, *args, *outputs, cwd=project)
    one_error_line(out, "would overwrite", source)
    assert "ran" not in out.stderr  # refused before any of the user's code ran
    assert {p: p.read_bytes() for p in project.rglob("*.py")} == before


@pytest.mark.parametrize("command", ["report", "view"])
def test_outputs_are_where_they_were_named_when_the_target_changes_folder(project, command):
    (project / "elsewhere").mkdir()
    (project / "moves.py").write_text(f"import os\n\ndef f(x):\n    os.chdir({str(project / 'elsewhere')!r})\n"
                                      "    return x * x\n")
    extra = ["--json", "r.json"] if command == "report" else []
    out = adtrace(command, "moves.py:f", "--at", "1.0", "-o", "r.out", *extra, cwd=project)
    assert out.returncode == 0, out.stderr
    assert (project / "r.out").exists() and os.listdir(project / "elsewhere") == []
    assert extra == [] or (project / "r.json").exists()


def test_an_output_through_a_linked_folder_and_dot_dot_is_where_the_system_puts_it(project, tmp_path_factory):
    """``-o sub/../funcs.py`` with ``sub`` a link to a folder elsewhere names ``elsewhere/../funcs.py``
    (as ``open`` reads it), not the TARGET's own ``funcs.py`` beside ``sub``."""
    far = tmp_path_factory.mktemp("far")
    (far / "away").mkdir()
    os.symlink(far / "away", project / "sub")
    source = (project / "funcs.py").read_text()
    out = adtrace("report", "funcs.py:square", "--at", "1.0", "-o", "sub/../funcs.py", cwd=project)
    assert out.returncode == 0, out.stderr
    assert (project / "funcs.py").read_text() == source
    assert (far / "funcs.py").read_text().startswith("# adtrace report")


def test_an_output_that_fails_after_the_run_leaves_the_other_files_as_they_were(project):
    """The target removes -o's folder while it runs: -o fails when written, and --json and --html,
    which would have been written first, keep their old text."""
    (project / "late").mkdir()
    (project / "removes.py").write_text("import shutil\n\ndef f(x):\n    shutil.rmtree('late', ignore_errors=True)\n"
                                        "    return x * x\n")
    for name in ("r.json", "r.html"):
        (project / name).write_text("before\n")
    out = adtrace("report", "removes.py:f", "--at", "1.0", "--json", "r.json", "--html", "r.html", "-o", "late/r.md",
                  cwd=project)
    one_error_line(out, "cannot write -o late/r.md")
    assert (project / "r.json").read_text() == (project / "r.html").read_text() == "before\n"
    assert sorted(os.listdir(project)) == sorted([*TARGETS, "removes.py", "r.json", "r.html"])  # no temporary left


@pytest.mark.parametrize("bad", ["folder", "a_file/r.md", "missing/r.md", "loop"])
def test_a_failing_output_leaves_no_other_output_and_runs_nothing(project, bad):
    (project / "folder").mkdir()
    (project / "a_file").write_text("")
    os.symlink("loop", project / "loop")  # a symbolic link to itself
    (project / "prints.py").write_text("def f(x):\n    print('f ran')\n    return x * x\n")
    for outputs in (["--json", "r.json", "--html", "r.html", "-o", bad], ["-o", "r.md", "--json", bad]):
        out = adtrace("report", "prints.py:f", "--at", "1.0", *outputs, cwd=project)
        one_error_line(out, f"cannot write {outputs[-2]} {bad}")
        assert "f ran" not in out.stderr
        assert sorted(os.listdir(project)) == sorted([*TARGETS, "folder", "a_file", "loop", "prints.py"])
    out = adtrace("view", "prints.py:f", "--at", "1.0", "-o", bad, cwd=project)
    one_error_line(out, f"cannot write -o {bad}")


@pytest.mark.parametrize("literal", ["1e400", "-inf", "[1e400, 1.0]", "nan"])
def test_numpy_warnings_of_adtraces_own_comparisons_do_not_leak(project, literal):
    out = adtrace("report", "funcs.py:square", f"--at={literal}", cwd=project)
    assert out.returncode in (0, 1) and "RuntimeWarning" not in out.stderr, out.stderr


def test_comparisons_of_non_finite_values_warn_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert compare(np.inf, np.inf)[0] == "exact"
        assert compare(np.array([np.inf, 1.0]), np.array([-np.inf, 1.0]))[0] == "differs"
        check = finite_differences(lambda x: x * x, np.inf, 1.0, np.inf)
        assert not check.passed


def test_an_experiment_that_checks_nothing_fails_the_command(tmp_path):
    (tmp_path / "experiments").mkdir()
    shutil.copy(REPO / "experiments" / "multiple_paths.py", tmp_path / "experiments")
    (tmp_path / "experiments" / "empty.py").write_text(
        "from adtrace.tools.experiment import Outcome\n\ndef run():\n    return Outcome(lines=['nothing'])\n")
    (tmp_path / "experiments" / "leaves.py").write_text("import sys\n\ndef run():\n    sys.exit(0)\n")
    out = adtrace("experiments", cwd=tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "empty: FAILED: checked nothing -> reports/empty.md" in out.stdout
    assert "leaves: raised SystemExit: 0" in out.stdout
    assert "multiple_paths: all checks passed" in out.stdout and "1 of 3 experiments passed" in out.stdout


def test_a_report_where_some_checks_passed_and_one_was_skipped_exits_0(project):
    (project / "constant.py").write_text("def f(x):\n    return 3.0\n")  # no node for the per-node checks
    out = adtrace("report", "constant.py:f", "--at", "1.0", "--check-nodes", "--mode", "both", cwd=project)
    table = out.stdout.split("### Checks\n\n")[1].split("\n\n")[0]
    rows = table.splitlines()[2:]
    assert [row.split("|")[2].strip() for row in rows] == ["pass", "pass", "skipped"], out.stdout
    assert out.returncode == 0 and "nothing was checked" not in out.stderr, out.stderr


def test_a_report_where_no_check_could_run_exits_3(project):
    out = adtrace("report", "pair.py:constant", "--args-from", "pair.py:arguments", cwd=project)
    assert out.returncode == 3, out.stdout + out.stderr
    assert "| central finite differences | skipped  |" in out.stdout
    assert "adtrace: no check could run on this call" in out.stderr
    page = adtrace("view", "pair.py:constant", "--args-from", "pair.py:arguments", "-o", "p.html", cwd=project)
    assert page.returncode == 3


def test_a_check_that_tested_no_node_exits_3(project):
    out = adtrace("check", "funcs.py:at_zero", "--at", "0.0", cwd=project)
    assert out.returncode == 3, out.stdout + out.stderr
    assert out.stdout.strip().splitlines()[-1] == "Nothing checked: no node could be tested; 1 skipped (see the table)."
    tested = adtrace("check", "funcs.py:at_zero", "--at", "0.5", cwd=project)
    assert tested.returncode == 0 and "1 of 1 nodes tested, all pass." in tested.stdout

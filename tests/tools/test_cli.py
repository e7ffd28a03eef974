"""The adtrace command line, run as a user would (subprocess)."""

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from adtrace.recording.autograd import drift
from cli_run import read_fifo

REPO = Path(__file__).resolve().parents[2]
FUNCS = '''
import autograd.numpy as np
from autograd.extend import primitive

def f(x, y):
    return np.sin(x * y) + np.exp(x)

def total(v):
    return np.sum(v * v)

def boom(x):
    raise ValueError("nope")

@primitive
def norule(x):
    return x

def uses_norule(x):
    return norule(x) * x

CONST = 3

def pick(v, i):
    return v[i] * v[i]

def todo(x):
    raise NotImplementedError("todo later")

def leaves(x):
    raise SystemExit(0)

def two_lines(x):
    raise ValueError("first line\\nsecond line")

from autograd.misc.fixed_points import fixed_point

def iterative_sqrt(a):
    return fixed_point(lambda a: lambda x: x - 0.05 * (x**2 - a), a, 10.0, lambda x, y: np.abs(x - y), 1e-4)

from autograd.extend import defvjp

@primitive
def double(x):
    return 2 * x

defvjp(double, lambda ans, x: lambda g: 3 * g)  # wrong, and the reference engine borrows it

def wrong_rule(x):
    return np.sin(double(x)) * x
'''


def adtrace(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "adtrace", *args], capture_output=True, text=True,
                          cwd=cwd)


@pytest.fixture
def project(tmp_path):
    (tmp_path / "funcs.py").write_text(FUNCS)
    (tmp_path / "broken.py").write_text("def f(x):\n    return x +\n")
    return tmp_path


def test_doctor_reports_version_and_every_hook_point():
    out = adtrace("doctor")
    assert out.returncode == 0, out.stderr
    assert f"autograd {drift.installed_version()}" in out.stdout
    for name in ("autograd.core.add_outgrads", "autograd.core.toposort", "autograd.core.backward_pass",
                 "autograd.core.trace", "VJPNode.__init__", "VJPNode.initialize_root",
                 "JVPNode.__init__", "JVPNode.initialize_root"):
        assert name in out.stdout
    assert out.stdout.count("| original |") == 8  # nothing is patched outside record()
    assert "ok: the installed hooks match autograd" in out.stdout
    lines = out.stdout.splitlines()
    tables = [i for i, line in enumerate(lines) if line.startswith(("| hook point", "| watched", "| compiled twin"))]
    assert len(tables) == 3 and all(lines[i - 1] == "" for i in tables)  # Markdown: a table follows a blank line


def test_report_to_stdout_by_module_and_by_path(project):
    by_module = adtrace("report", "funcs:f", "--at", "0.5", "--at", "3.0", cwd=project)
    by_path = adtrace("report", "funcs.py:f", "--at", "0.5", "--at", "3.0", cwd=project)
    assert by_module.returncode == 0 and by_path.returncode == 0, by_module.stderr + by_path.stderr
    assert by_module.stdout == by_path.stdout
    assert "| gradient (VJP with a seed of ones) | 1.86093 " in by_module.stdout
    assert "| source                             | funcs.py:5 " in by_module.stdout
    dash = adtrace("report", "funcs:f", "--at", "0.5", "--at", "3.0", "-o", "-", cwd=project)
    assert dash.returncode == 0 and dash.stdout == by_module.stdout and not (project / "-").exists()


def test_report_and_view_name_the_node_of_a_wrong_rule_both_engines_share(project):
    """Issue 29: finite differences fail, the engines agree: the per-node checker runs and the summary
    points to the node; the page marks it (its data names it)."""
    out = adtrace("report", "funcs:wrong_rule", "--at", "0.7", cwd=project)
    assert out.returncode == 1, out.stderr
    summary = out.stdout[:out.stdout.index("## Where the work went")]
    assert "| reference engine vs autograd, per node    | pass " in summary
    assert "**The failing node: `v1_double`** (`double`, argument 0, called at funcs.py:" in summary
    out = adtrace("view", "funcs:wrong_rule", "--at", "0.7", "-o", "page.html", cwd=project)
    assert out.returncode == 1 and '"check":"per-node local rules"' in (project / "page.html").read_text()


def test_report_streams_into_a_fifo_and_keeps_a_600_file_600(project):
    os.mkfifo(project / "pipe")
    (project / "r.md").write_text("old\n")
    (project / "r.md").chmod(0o600)
    runs = []
    read = read_fifo(project / "pipe", lambda: runs.append(adtrace(
        "report", "funcs:f", "--at", "0.5", "--at", "3.0", "--json", "pipe", "-o", "r.md", cwd=project)))
    assert runs[0].returncode == 0, runs[0].stderr
    assert json.loads(read)["reverse"]["events"][0]["kind"] == "root"
    assert stat.S_ISFIFO((project / "pipe").lstat().st_mode)
    assert (project / "r.md").read_text().startswith("# adtrace report")
    assert stat.S_IMODE((project / "r.md").stat().st_mode) == 0o600


def test_report_to_files_with_json_and_argnum(project):
    out = adtrace("report", "funcs:f", "--at", "0.5", "--at", "3.0", "--argnum", "1", "-o", "r.md",
                  "--json", "r.json", "--mode", "both", cwd=project)
    assert out.returncode == 0 and out.stdout == "", out.stderr
    assert out.stderr == "wrote r.json\nwrote r.md\n"  # as view says it, on standard error
    text = (project / "r.md").read_text()
    # x cos(xy) at (0.5, 3.0): the seed's 0.035369
    assert "0.0353686" in text and "## Forward mode side by side" in text
    document = json.loads((project / "r.json").read_text())
    events = document["reverse"]["events"]
    assert events[0]["kind"] == "root" and events[-1]["kind"] == "backward_end"
    assert {e["kind"] for e in document["forward"]["events"]} >= {"jvp_root", "jvp_node", "add_outgrads"}


def test_view_writes_the_step_through_page(project):
    out = adtrace("view", "funcs:f", "--at", "0.5", "--at", "3.0", "--mode", "both", "-o", "page.html", cwd=project)
    assert out.returncode == 0 and out.stdout == "" and out.stderr == "wrote page.html\n", out.stderr
    page = (project / "page.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and '"id":"q1"' in page and '"id":"f1"' in page
    assert "funcs.py:5" in page and str(project) not in page  # where f is, never an absolute path
    report = adtrace("report", "funcs:f", "--at", "0.5", "--at", "3.0", "--mode", "both", "-o", "r.md",
                     "--html", "r.html", cwd=project)
    assert report.returncode == 0, report.stderr
    assert (project / "r.html").read_text() == page  # the same call gives the same bytes


@pytest.mark.parametrize("given, shown", [("../models/m.py", "../models/m.py"), ("{abs}/models/m.py", "m.py")])
def test_a_target_outside_the_folder_is_named_by_its_path(project, given, shown):
    (project / "models").mkdir()
    (project / "models" / "m.py").write_text("import autograd.numpy as np\n\ndef f(x):\n    return np.sin(x) * x\n")
    (project / "work").mkdir()
    out = adtrace("report", given.format(abs=project) + ":f", "--at", "0.5", cwd=project / "work")
    assert out.returncode == 0, out.stderr
    assert f"| source                             | {shown}:3 " in out.stdout  # where f is defined
    assert f"| {shown}:4 " in out.stdout  # the call site of sin and multiply
    assert "adtrace_target" not in out.stdout and str(project) not in out.stdout


def test_view_errors_are_one_clear_line(project):
    out = adtrace("view", "funcs:boom", "--at", "1.0", "-o", "page.html", cwd=project)
    assert out.returncode == 2 and out.stderr == "adtrace: funcs:boom raised ValueError: nope\n"
    assert not (project / "page.html").exists()
    out = adtrace("view", "funcs:f", "--at", "1.0", "--at", "2.0", cwd=project)
    assert out.returncode == 2 and "the following arguments are required: -o/--output" in out.stderr
    out = adtrace("view", "funcs:f", "--at", "1.0", "--at", "2.0", "-o", "no/such/dir/p.html", cwd=project)
    assert out.returncode == 2 and "cannot write -o no/such/dir/p.html: no such folder" in out.stderr


def test_an_integer_index_argument_stays_an_integer(project):
    out = adtrace("report", "funcs:pick", "--at", "[1, 2, 3]", "--at", "1", cwd=project)
    assert out.returncode == 0, out.stderr
    assert "[0 4 0]" in out.stdout


def test_report_list_argument_becomes_a_float_array(project):
    out = adtrace("report", "funcs:total", "--at", "[1, 2, 3]", cwd=project)
    assert out.returncode == 0, out.stderr
    assert "[2 4 6]" in out.stdout


@pytest.mark.parametrize("args, message", [
    (["funcs.py", "--at", "1.0"], "TARGET must be module:function"),
    (["nofile.py:f", "--at", "1.0"], "no such file: nofile.py"),
    (["nomod:f", "--at", "1.0"], "cannot import module 'nomod'"),
    (["funcs:nothing", "--at", "1.0"], "funcs has no attribute 'nothing'"),
    (["funcs:CONST", "--at", "1.0"], "is not a function"),
    (["funcs:f", "--at", "'text'", "--at", "2.0"], "cannot differentiate with respect to a str"),
    (["funcs:f", "--at", "1.0+"], "is not a Python literal"),
    (["funcs:f", "--at", "1.0", "--at", "2.0", "--argnum", "5"], "argnum 5 is out of range"),
    (["funcs:boom", "--at", "1.0"], "funcs:boom raised ValueError: nope"),
    (["funcs:uses_norule", "--at", "1.0"], "VJP of norule wrt argnums (0,) not defined"),
    (["funcs:f"], "give the point to differentiate at with --at"),
    (["funcs:todo", "--at", "1.0"], "funcs:todo raised NotImplementedError: todo later"),
    (["funcs:leaves", "--at", "1.0"], "funcs:leaves called sys.exit(0)"),
    (["funcs:two_lines", "--at", "1.0"], "raised ValueError: first line / second line"),
    (["broken:f", "--at", "1.0"], "module 'broken' raised SyntaxError while loading"),
    (["funcs:f", "--at", "1.0", "--at", "2.0", "-o", "no/such/dir/r.md"], "cannot write -o no/such/dir/r.md"),
    (["funcs:f", "--at", "1.0", "--at", "2.0", "--json", "no/such/dir/r.json"],
     "cannot write --json no/such/dir/r.json"),
])
def test_report_errors_are_one_clear_line(project, args, message):
    out = adtrace("report", *args, cwd=project)
    assert out.returncode == 2
    assert out.stderr.startswith("adtrace: ") and message in out.stderr
    assert "Traceback" not in out.stderr and out.stderr.count("\n") == 1
    assert out.stdout == ""


@pytest.mark.parametrize("command", [["report"], ["check"], ["view", "-o", "p.html"]])
@pytest.mark.parametrize("returned, kind", [("3", "an int (3)"), ("'three'", "a str (three)")])
def test_a_function_returning_no_float_is_told_so(project, command, returned, kind):
    (project / "counts.py").write_text(f"def count(x):\n    return {returned}\n")
    out = adtrace(*command, "counts.py:count", "--at", "1.0", cwd=project)
    assert out.returncode == 2 and "Traceback" not in out.stderr and out.stdout == ""
    assert out.stderr.splitlines()[-1] == (f"adtrace: counts.py:count returned {kind}: autograd differentiates float "
                                           "outputs (a float, an array of floats, or a tuple/list/dict of them)")


def test_experiments_write_and_check(tmp_path):
    shutil.copytree(REPO / "experiments", tmp_path / "experiments")
    out = adtrace("experiments", "--only", "multiple_paths", cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.splitlines() == ["multiple_paths: all checks passed -> reports/multiple_paths.md",
                                       "1 of 1 experiments passed"]
    written = (tmp_path / "reports" / "multiple_paths.md").read_text()
    assert written == (REPO / "reports" / "multiple_paths.md").read_text()  # the committed golden file
    assert adtrace("experiments", "--check", "--only", "multiple_paths", cwd=tmp_path).returncode == 0
    (tmp_path / "reports" / "multiple_paths.md").write_text(written + "edited\n")
    stale = adtrace("experiments", "--check", "--only", "multiple_paths", cwd=tmp_path)
    assert stale.returncode == 1 and "report differs from the committed one: reports/multiple_paths.md" in stale.stdout
    assert (tmp_path / "reports" / "multiple_paths.md").read_text().endswith("edited\n")  # --check writes nothing


def test_experiments_write_and_check_the_pages_too(tmp_path):
    shutil.copytree(REPO / "experiments", tmp_path / "experiments")
    assert adtrace("experiments", "--only", "multiple_paths", cwd=tmp_path).returncode == 0
    page = tmp_path / "reports" / "multiple_paths.html"
    assert page.read_text() == (REPO / "reports" / "multiple_paths.html").read_text()  # committed, byte for byte
    assert "<title>Experiment: multiple paths (z = x*x at 3)</title>" in page.read_text()
    page.write_text(page.read_text().replace("step 0 of 0", "step 0 of 1"))
    stale = adtrace("experiments", "--check", "--only", "multiple_paths", cwd=tmp_path)
    assert stale.returncode == 1
    assert "report differs from the committed one: reports/multiple_paths.html" in stale.stdout
    page.unlink()
    missing = adtrace("experiments", "--check", "--only", "multiple_paths", cwd=tmp_path)
    assert missing.returncode == 1 and "reports/multiple_paths.html" in missing.stdout


def test_experiments_errors(tmp_path):
    out = adtrace("experiments", cwd=tmp_path)
    assert out.returncode == 2 and "no experiment scripts in experiments/" in out.stderr
    out = adtrace("experiments", "--only", "nope", cwd=REPO)
    assert out.returncode == 2 and "no experiment named nope" in out.stderr


def test_committed_reports_are_current():
    out = adtrace("experiments", "--check", cwd=REPO)
    assert out.returncode == 0, out.stdout


WRONG = '''
import autograd.numpy as anp
from autograd.extend import defvjp, primitive

@primitive
def double(x):
    return 2.0 * x

defvjp(double, lambda ans, x: lambda g: 3.0 * g)

def h(x):
    return anp.sin(double(x)) * x
'''


def test_check_names_the_wrong_node_and_exits_1(project):
    (project / "wrong.py").write_text(WRONG)
    out = adtrace("check", "wrong.py:h", "--at", "0.5", cwd=project)
    assert out.returncode == 1, out.stderr
    assert out.stdout.strip().splitlines()[-1].startswith("First failing node: `v1_double` (`double`) argument 0, "
                                                          "called at wrong.py:12")
    good = adtrace("check", "funcs:f", "--at", "0.5", "--at", "3.0", "--max-nodes", "2", cwd=project)
    assert good.returncode == 0 and "2 of 4 nodes tested, all pass; 2 not checked (limit)." in good.stdout
    report = adtrace("report", "wrong.py:h", "--at", "0.5", "--check-nodes", cwd=project)
    assert report.returncode == 1 and "## Checks per node" in report.stdout


@pytest.mark.parametrize("args, message", [
    (["funcs:f", "--at", "'x'", "--at", "1.0"], "cannot differentiate with respect to a str"),
    (["funcs:boom", "--at", "1.0"], "funcs:boom raised ValueError: nope"),
    (["funcs:uses_norule", "--at", "1.0"], "VJP of norule wrt argnums (0,) not defined"),
    (["funcs:f"], "give the point to check at with --at"),
])
def test_check_errors_are_one_clear_line(project, args, message):
    out = adtrace("check", *args, cwd=project)
    assert out.returncode == 2 and message in out.stderr and "Traceback" not in out.stderr


def test_rtol_states_the_tolerance_of_report_and_check(project):
    """fixed_point's VJP is an iterative solve at tol 1e-4: 0.3% from central differences."""
    strict = adtrace("check", "funcs:iterative_sqrt", "--at", "2.0", cwd=project)
    assert strict.returncode == 1
    assert "relative difference 2.8e-03 beyond tolerance 1.0e-05 (rtol 1e-05" in strict.stdout
    assert adtrace("check", "funcs:iterative_sqrt", "--at", "2.0", "--rtol", "1e-2", cwd=project).returncode == 0
    report = adtrace("report", "funcs:iterative_sqrt", "--at", "2.0", "--check-nodes", cwd=project)
    assert report.returncode == 1 and "| FAIL     | dot(gradient, u) = 0.0444306, numeric = 0.0443061, relative " \
                                     "difference 2.8e-03 beyond tolerance 1.0e-05 (rtol 1e-05" in report.stdout
    report = adtrace("report", "funcs:iterative_sqrt", "--at", "2.0", "--check-nodes", "--rtol", "0.01", cwd=project)
    assert report.returncode == 0, report.stdout
    bad = adtrace("check", "funcs:iterative_sqrt", "--at", "2.0", "--rtol", "0", cwd=project)
    assert bad.returncode == 2 and "argument --rtol: must be a finite positive number" in bad.stderr


def test_unknown_command_is_a_usage_error():
    out = adtrace("frobnicate")
    assert out.returncode == 2 and "invalid choice" in out.stderr


def test_view_open_without_a_browser_says_so(project):
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER", "TERM")}
    env["PATH"] = str(Path(sys.executable).parent)  # no browser on it
    out = subprocess.run([sys.executable, "-m", "adtrace", "view", "funcs:f", "--at", "0.5", "--at", "3.0", "-o",
                          "page.html", "--open"], capture_output=True, text=True, cwd=project, env=env)
    assert out.returncode == 0 and out.stdout == "", out.stderr
    assert out.stderr == "wrote page.html\nadtrace: no browser could open page.html: open it yourself\n"


def _with_standard_output(stdout, *args, cwd):
    return subprocess.run([sys.executable, "-m", "adtrace", *args], stdout=stdout, stderr=subprocess.PIPE,
                          text=True, cwd=cwd)


@pytest.mark.parametrize("args", [["report", "funcs:f", "--at", "0.5", "--at", "3.0"],
                                  ["report", "funcs:f", "--at", "0.5", "--at", "3.0", "-o", "-"],
                                  ["check", "funcs:f", "--at", "0.5", "--at", "3.0"], ["doctor"]])
def test_a_reader_gone_before_the_result_is_one_error_line(project, args):
    read, write = os.pipe()
    os.close(read)  # the reader went away: every write is EPIPE
    try:
        out = _with_standard_output(write, *args, cwd=project)
    finally:
        os.close(write)
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    assert out.stderr.splitlines()[-1] == "adtrace: cannot write to standard output: Broken pipe"


def test_a_closed_standard_output_is_one_error_line(project):
    out = subprocess.run(f"{sys.executable} -m adtrace report funcs:f --at 0.5 --at 3.0 >&-", shell=True,
                         stderr=subprocess.PIPE, text=True, cwd=project)
    assert out.returncode == 2 and out.stderr == "adtrace: cannot write to standard output: it is closed\n"
    written = subprocess.run(f"{sys.executable} -m adtrace report funcs:f --at 0.5 --at 3.0 -o r.md >&-",
                             shell=True, stderr=subprocess.PIPE, text=True, cwd=project)
    assert written.returncode == 0 and written.stderr == "wrote r.md\n"  # standard output was not needed


def test_a_full_disk_under_standard_output_is_one_error_line(project):
    full = '''
import errno, io, sys
from adtrace.tools.cli import main

class Full(io.StringIO):
    def write(self, text):
        raise OSError(errno.ENOSPC, "No space left on device")

sys.stdout = Full()
sys.exit(main(["report", "funcs:f", "--at", "0.5", "--at", "3.0"]))
'''
    out = subprocess.run([sys.executable, "-c", full], capture_output=True, text=True, cwd=project)
    assert out.returncode == 2 and out.stderr == "adtrace: cannot write to standard output: No space left on device\n"


def test_reference_limit_leaves_the_reference_engine_out_of_a_large_call_and_says_so(project):
    """funcs:f at (0.5, 3.0), differentiated in x, has 5 nodes."""
    small = adtrace("report", "funcs:f", "--at", "0.5", "--at", "3.0", "--reference-limit", "4", cwd=project)
    assert small.returncode == 0, small.stderr
    assert ("_Reference engine not run: reference engine: 5 nodes, above the limit of 4 (--reference-limit 5 runs "
            "it: it reruns the function, about as long again)_") in small.stdout
    assert "| the visit order is reverse topological | pass" in small.stdout
    assert "reference engine vs autograd, per node" not in small.stdout
    full = adtrace("report", "funcs:f", "--at", "0.5", "--at", "3.0", "--reference-limit", "5", cwd=project)
    assert full.returncode == 0 and "| reference engine vs autograd, per node    | pass" in full.stdout
    bad = adtrace("report", "funcs:f", "--at", "0.5", "--at", "3.0", "--reference-limit", "-1", cwd=project)
    assert bad.returncode == 2 and "argument --reference-limit: must be a whole number, 0 or more" in bad.stderr


def test_reference_limit_is_refused_with_an_engine_whose_reference_runs_over_the_recording(project):
    (project / "values.py").write_text("def f(x):\n    return x * x\n")
    done = adtrace("report", "values:f", "--at", "3.0", "--engine", "micrograd", "--reference-limit", "5", cwd=project)
    assert done.returncode == 2
    assert "no limit to set (leave out --reference-limit)" in done.stderr

"""``adtrace diff A B``: targets or saved recordings, each side's arguments and engine; exit 0 the same, 1
they differ, 2 wrong."""

import json
import textwrap

import pytest

from cli_run import adtrace, one_error_line

FUNCS = textwrap.dedent("""\
    import sys
    sys.path.insert(0, {tests!r})
    from learner_shapes import BuggySlotsValue, SlotsValue  # noqa


    def g(x):
        a = x * x
        b = a + x
        c = a + b
        return c * c


    def g_args():
        return (3.0,)


    def h(x):
        if x < 0:
            raise ValueError("x must not be negative")
        return x * x
    """)


def setup(tmp_path):
    from cli_run import REPO

    (tmp_path / "funcs.py").write_text(FUNCS.format(tests=str(REPO / "tests")))
    return tmp_path


def test_the_same_function_twice_is_identical_and_exits_0(tmp_path):
    out = adtrace("diff", "funcs.py:g", "funcs.py:g", "--at", "3.0", "--json", "d.json", cwd=setup(tmp_path))
    assert out.returncode == 0, out.stderr
    assert "**Verdict: identical**" in out.stdout
    assert json.loads((tmp_path / "d.json").read_text())["verdict"] == "identical"


def test_the_assignment_bug_against_autograd_exits_1_and_names_the_lost_contribution(tmp_path):
    out = adtrace("diff", "funcs.py:g", "funcs.py:g", "--at", "3.0", "--engine-b", "funcs.py:BuggySlotsValue",
                  "-o", "d.md", cwd=setup(tmp_path))
    assert out.returncode == 1, out.stderr
    text = (tmp_path / "d.md").read_text()
    assert "**accumulation**, gradient: B lost a contribution: v2_add's write into v1_mul.grad" in text
    assert "| engine  | autograd | BuggySlotsValue |" in text
    fixed = adtrace("diff", "funcs.py:g", "funcs.py:g", "--at", "3.0", "--engine", "funcs.py:SlotsValue",
                    "--engine-a", "funcs.py:SlotsValue", cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stderr


def test_b_its_own_arguments_and_a_saved_recording(tmp_path):
    setup(tmp_path)
    other = adtrace("diff", "funcs.py:g", "funcs.py:g", "--at", "3.0", "--at-b", "2.0", "--json", "d.json",
                    cwd=tmp_path)
    assert other.returncode == 1 and json.loads((tmp_path / "d.json").read_text())["first"]["kind"] == "input"
    from_b = adtrace("diff", "funcs.py:g", "funcs.py:g", "--at", "3.0", "--args-from-b", "funcs.py:g_args",
                     cwd=tmp_path)
    assert from_b.returncode == 0, from_b.stderr
    saved = adtrace("report", "funcs.py:g", "--at", "3.0", "-o", "r.md", "--json", "r.json", cwd=tmp_path)
    assert saved.returncode == 0, saved.stderr
    assert adtrace("diff", "r.json", "funcs.py:g", "--at", "3.0", cwd=tmp_path).returncode == 0
    assert adtrace("diff", "r.json", "r.json", cwd=tmp_path).returncode == 0
    assert adtrace("diff", "r.json", "funcs.py:g", "--at", "2.0", cwd=tmp_path).returncode == 1


def test_each_target_is_called_once_as_help_says(tmp_path):
    (tmp_path / "counted.py").write_text("def f(x):\n    print('called')\n    return x * x + x\n")
    out = adtrace("diff", "counted.py:f", "counted.py:f", "--at", "0.5", "--json", "d.json", cwd=tmp_path)
    assert out.returncode == 0 and out.stderr.count("called\n") == 2, out.stderr
    assert "called" not in out.stdout  # (what the program prints goes to standard error)
    saved = adtrace("diff", "d.json", "counted.py:f", "--at", "0.5", cwd=tmp_path)
    assert saved.returncode == 2 and "not a recording" in saved.stderr  # (a diff's JSON is no recording)
    assert "Each target is called once" in " ".join(adtrace("diff", "--help").stdout.split())


def test_a_wrong_command_line_target_or_file_exits_2_with_one_line(tmp_path):
    setup(tmp_path)
    one_error_line(adtrace("diff", "funcs.py:g", "missing.json", "--at", "3.0", cwd=tmp_path), "B: no such file")
    (tmp_path / "bad.json").write_text("[1, 2]")
    one_error_line(adtrace("diff", "bad.json", "funcs.py:g", "--at", "3.0", cwd=tmp_path), "A bad.json",
                   "not a recording")
    one_error_line(adtrace("diff", "funcs.py:nope", "funcs.py:g", "--at", "3.0", cwd=tmp_path), "nope")
    one_error_line(adtrace("diff", "funcs.py:g", "funcs.py:g", cwd=tmp_path), "--at")
    one_error_line(adtrace("diff", "r.json", "funcs.py:g", "--at", "3.0", "--engine-a", "micrograd", cwd=tmp_path),
                   "--engine-a: A is a saved recording")
    assert adtrace("diff", "funcs.py:g", cwd=tmp_path).returncode == 2
    (tmp_path / "empty.json").write_text('{"events": []}')  # (diffed with itself: "identical", exit 0)
    one_error_line(adtrace("diff", "empty.json", "empty.json", cwd=tmp_path), "A holds no backward pass")


def test_which_side_failed_is_said_and_options_nothing_uses_are_refused(tmp_path):
    setup(tmp_path)
    one_error_line(adtrace("diff", "funcs.py:h", "funcs.py:h", "--at", "3.0", "--at-b", "-1.0", cwd=tmp_path),
                   "B: funcs.py:h raised ValueError: x must not be negative")
    one_error_line(adtrace("diff", "funcs.py:g", "funcs.py:g", "--at", "3.0", "--argnum", "1", cwd=tmp_path),
                   "--argnum 1: A (funcs.py:g) is given 1 argument(s)")
    saved = adtrace("report", "funcs.py:g", "--at", "3.0", "-o", "r.md", "--json", "r.json", cwd=tmp_path)
    assert saved.returncode == 0, saved.stderr
    one_error_line(adtrace("diff", "r.json", "r.json", "--at", "2.0", cwd=tmp_path),
                   "--at: A and B are both saved recordings, nothing is run")
    one_error_line(adtrace("diff", "r.json", "r.json", "--argnum", "1", "--dtype", "float32", cwd=tmp_path),
                   "--argnum, --dtype: A and B are both saved")
    one_error_line(adtrace("diff", "r.json", "r.json", "--engine", "micrograd", cwd=tmp_path),
                   "--engine: A and B are both saved")
    one_error_line(adtrace("diff", "funcs.py:g", "funcs.py:g", "--at", "3.0", "--engine-b", "funcs.py:Nope",
                           cwd=tmp_path), "B: ", "Nope")


def test_html_writes_the_side_by_side_page_with_the_first_divergence(tmp_path):
    import html
    import re

    out = adtrace("diff", "funcs.py:g", "funcs.py:g", "--at", "3.0", "--engine-b", "funcs.py:BuggySlotsValue",
                  "--html", "d.html", "--json", "d.json", cwd=setup(tmp_path))
    assert out.returncode == 1, out.stderr
    first = json.loads((tmp_path / "d.json").read_text())["first"]
    page = (tmp_path / "d.html").read_text()
    data = json.loads(re.search(r'<script type="application/json" id="adtrace-diff">(.*?)</script>', page, re.S)[1])
    assert data["sides"] == ["funcs.py:g", "funcs.py:g"] and len(data["pages"]) == 2
    assert data["first"] == [first["a"]["node"], first["b"]["node"]] and data["firstStep"] is not None
    assert html.escape("funcs.py:g funcs.py:g") in page


def test_autograd_twice_one_target_else_exit_2(tmp_path):
    setup(tmp_path)
    one_error_line(adtrace("diff", "funcs.py:g", "--autograd", "1.9.1", "--at", "3.0", cwd=tmp_path),
                   "--autograd: give it twice")
    one_error_line(adtrace("diff", "funcs.py:g", "funcs.py:g", "--autograd", "1.8.0", "--autograd", "1.9.1",
                           "--at", "3.0", cwd=tmp_path), "B (funcs.py:g) is not wanted")
    one_error_line(adtrace("diff", "funcs.py:g", "--autograd", "1.8.0", "--autograd", "1.9.1", "--engine",
                           "micrograd", "--at", "3.0", cwd=tmp_path), "--engine cannot be used")
    one_error_line(adtrace("diff", "funcs.py:g", "--at", "3.0", cwd=tmp_path), "B is missing")


def test_a_release_that_cannot_be_installed_here_exits_2_saying_so(tmp_path):
    setup(tmp_path)
    (tmp_path / "no_wheels").mkdir()
    offline = {"ADTRACE_CACHE": str(tmp_path / "cache"), "PIP_NO_INDEX": "1",
               "PIP_FIND_LINKS": str(tmp_path / "no_wheels")}  # (no index, no wheel: as offline without a cache)
    out = adtrace("diff", "funcs.py:g", "--autograd", "1.8.0", "--autograd", "1.9.1", "--at", "3.0", cwd=tmp_path,
                  env=offline)
    one_error_line(out, "cannot install autograd 1.8.0 here")


@pytest.mark.slow
def test_one_target_under_two_releases_each_in_its_own_process(tmp_path):
    from release_venvs import installed_or_skip

    installed_or_skip("1.8.0", "1.9.1")
    setup(tmp_path)
    out = adtrace("diff", "funcs.py:g", "--autograd", "1.8.0", "--autograd", "1.9.1", "--at", "3.0", "--json",
                  "d.json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "# adtrace diff: funcs.py:g (autograd 1.8.0) against funcs.py:g (autograd 1.9.1)" in out.stdout
    document = json.loads((tmp_path / "d.json").read_text())
    assert document["verdict"] == "identical" and document["counts"]["identical"] == 5
    one_error_line(adtrace("diff", "funcs.py:nope", "--autograd", "1.8.0", "--autograd", "1.9.1", "--at", "3.0",
                           cwd=tmp_path), "under autograd 1.8.0", "nope")

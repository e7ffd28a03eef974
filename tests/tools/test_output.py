"""What the command line writes: UTF-8 files whatever the locale, and a terminal that degrades
instead of crashing."""

import shutil

import pytest

from cli_run import REPO, adtrace

ASCII_LOCALE = {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONIOENCODING": "ascii"}
DOT = '''
import autograd.numpy as np
from autograd.extend import defvjp, primitive

@primitive
def scaled(x):
    return 2.0 * x

scaled.__name__ = "x·2"
defvjp(scaled, lambda ans, x: lambda g: 2.0 * g)

def f(x):
    print("progress · 50%")
    return scaled(x) * x
'''


@pytest.mark.parametrize("env", [ASCII_LOCALE, {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0"},
                                 {"PYTHONIOENCODING": "ascii"}])
def test_experiments_write_utf8_under_any_locale(tmp_path, env):
    shutil.copytree(REPO / "experiments", tmp_path / "experiments")
    out = adtrace("experiments", "--only", "wengert_notebook", cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    written = tmp_path / "reports" / "wengert_notebook.md"
    assert written.read_bytes() == (REPO / "reports" / "wengert_notebook.md").read_bytes()  # "·" as UTF-8
    assert adtrace("experiments", "--check", "--only", "wengert_notebook", cwd=tmp_path, env=env).returncode == 0


def test_report_under_an_ascii_terminal(tmp_path):
    (tmp_path / "dot.py").write_text(DOT, encoding="utf-8")
    to_file = adtrace("report", "dot.py:f", "--at", "1.5", "-o", "r.md", cwd=tmp_path, env=ASCII_LOCALE)
    assert to_file.returncode == 0, to_file.stderr
    assert "| v1_x_2 " in (tmp_path / "r.md").read_text(encoding="utf-8")
    assert "x·2" in (tmp_path / "r.md").read_text(encoding="utf-8")
    assert "progress \\xb7 50%" in to_file.stderr  # the program's own print, degraded, not a crash
    to_terminal = adtrace("report", "dot.py:f", "--at", "1.5", cwd=tmp_path, env=ASCII_LOCALE)
    assert to_terminal.returncode == 0, to_terminal.stderr
    assert "x\\xb72" in to_terminal.stdout and "Traceback" not in to_terminal.stderr


def test_what_the_program_writes_goes_to_stderr_and_what_came_before_or_after_to_stdout():
    import os
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from adtrace.tools.output import program_output_to_stderr\n"
        "out = sys.stdout\n"
        "out.write('before ')\n"  # buffered (a pipe): flushed to standard output before the program runs
        "with program_output_to_stderr():\n"
        "    print('printed')\n"
        "    out.write('held ')\n"  # the program kept sys.stdout: still its own output, to stderr
        "print('result')\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # (a pipe: block-buffered)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, env=env,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "before result\n"
    assert done.stderr == "printed\nheld "

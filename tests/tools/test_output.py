"""What adtrace writes: UTF-8 files whatever the locale, written whole or not at all, and a
terminal that degrades instead of crashing."""

import os
import shutil
import stat

import pytest

from adtrace.tools import output
from adtrace.tools.output import write_file
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


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "r.md"
    path.write_text("old\n")
    with pytest.raises(UnicodeEncodeError):
        write_file(path, "half \ud800 written")  # a lone surrogate: no encoding can write it
    assert path.read_text() == "old\n" and os.listdir(tmp_path) == ["r.md"]


def test_an_interrupted_write_leaves_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "r.md"
    path.write_text("old\n")

    def interrupted(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(output.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_file(path, "new\n")
    assert path.read_text() == "old\n" and os.listdir(tmp_path) == ["r.md"]


def test_a_written_file_is_utf8_with_the_usual_mode(tmp_path):
    write_file(tmp_path / "r.md", "a · b\n")
    assert (tmp_path / "r.md").read_bytes() == "a · b\n".encode("utf-8")
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE((tmp_path / "r.md").stat().st_mode) == 0o666 & ~umask

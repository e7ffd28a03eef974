"""Recordings made in another process, and by another Python, diff as identical to one made here."""

import glob
import os
import subprocess
import sys
from pathlib import Path

import pytest

import adtrace
from adtrace.diff import diff
from adtrace.diff.calls import record_call
from adtrace.diff.divergence import IDENTICAL

REPO = Path(__file__).resolve().parents[2]
FUNCTION = '''
import autograd.numpy as anp


def f(x):
    y = anp.sin(x) * x
    z = y * y + anp.exp(-x) * 3.0
    return anp.tanh(z) * y + z / (1.0 + x * x)
'''
SAVE = '''
import sys
sys.path[:0] = [sys.argv[1], sys.argv[2]]
from adtrace.diff.calls import record_call
import function
record_call(function.f, (0.7,), relative_to=sys.argv[2]).save(sys.argv[3])
'''


def other_pythons():
    """Interpreters of another Python version that can import this adtrace (its dependencies installed):
    ``ADTRACE_OTHER_PYTHON``, then pyenv's. One named by ``ADTRACE_OTHER_PYTHON`` that cannot is kept, so
    that the test fails saying so instead of skipping (CI sets it to the main leg's venv)."""
    named = os.environ.get("ADTRACE_OTHER_PYTHON")
    found = []
    for python in [named, *sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.*/bin/python")))]:
        if not python or not os.path.exists(python) and python != named or python in found:
            continue
        version = probe(python)
        if version != str(tuple(sys.version_info[:2])) and (version or python == named):
            found.append(python)
    return found


def probe(python):
    """The version ``python`` runs as a tuple's text, if it imports adtrace; else None."""
    try:
        done = subprocess.run([python, "-c", "import sys, adtrace; print(sys.version_info[:2])"],
                              capture_output=True, text=True, cwd=REPO)
    except OSError:
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def saved_elsewhere(python, tmp_path):
    (tmp_path / "function.py").write_text(FUNCTION)
    subprocess.run([python, "-c", SAVE, str(REPO), str(tmp_path), str(tmp_path / "saved.json")], check=True,
                   env={**os.environ, "PYTHONPATH": ""})
    sys.path.insert(0, str(tmp_path))
    try:
        import function
        here = record_call(function.f, (0.7,), relative_to=tmp_path)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("function", None)
    return adtrace.load(tmp_path / "saved.json"), here


def check_identical(saved, here):
    d, back = diff(saved, here), diff(here, saved)
    assert d.verdict == IDENTICAL == back.verdict and d.first is None and d.order is None
    assert d.counts["identical"] == len(here.graph(here.user_query() and here.query_events(here.user_query())[0].end))
    rows = [r for r in d.rows if r.status == "identical"]
    assert all(r.line is None or r.line.startswith("function.py:") for r in rows)


def test_a_recording_saved_by_another_process_diffs_as_identical(tmp_path):
    check_identical(*saved_elsewhere(sys.executable, tmp_path))


@pytest.mark.parametrize("python", other_pythons() or [pytest.param(None, marks=pytest.mark.skip(
    reason="no other Python version that imports adtrace (set ADTRACE_OTHER_PYTHON)"))])
def test_a_recording_saved_by_another_python_version_diffs_as_identical(python, tmp_path):
    assert probe(python), f"{python} (ADTRACE_OTHER_PYTHON) cannot import adtrace"
    check_identical(*saved_elsewhere(python, tmp_path))

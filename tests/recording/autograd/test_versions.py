"""The recorder's own tests pass against every supported autograd release (.ci/versions.py)."""

import subprocess
import sys
from pathlib import Path

import pytest

from adtrace.recording.autograd import drift

REPO = Path(__file__).resolve().parents[3]


@pytest.mark.slow
def test_recorder_tests_pass_on_every_supported_release():
    releases = list(drift.known_releases())
    out = subprocess.run([sys.executable, str(REPO / ".ci" / "versions.py"), *releases],
                         capture_output=True, text=True, cwd=REPO)
    lines = [line for line in out.stdout.splitlines() if line.startswith("autograd ")]
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert [line.split(" (")[0] for line in lines] == [f"autograd {v}" for v in releases]
    assert all(f"(imported {v}): ok:" in line for v, line in zip(releases, lines))

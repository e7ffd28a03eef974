"""The code keeps its lint: ruff, configured in pyproject.toml, over the package, tests, experiments,
benchmarks and CI scripts."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_ruff_finds_nothing():
    command = [sys.executable, "-m", "ruff", "check", "adtrace", "tests", "experiments", "benchmarks", ".ci"]
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]

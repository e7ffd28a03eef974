"""Every experiment script runs and passes its own checks."""

import subprocess
import sys
from pathlib import Path

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"


def run(name):
    return subprocess.run([sys.executable, str(EXPERIMENTS / f"{name}.py")], capture_output=True, text=True)


def test_multiple_paths_prints_the_seed_numbers():
    out = run("multiple_paths")
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout == (
        "call 1: previous=None, contribution=3, accumulated=(3,False)\n"
        "call 2: previous=(3,False), contribution=3, accumulated=(6,True)\n"
        "gradient contributions: 3 + 3 = 6\n"
        "all checks passed\n")

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


def test_an_experiment_that_checks_nothing_fails(capsys):
    from adtrace.experiment import Outcome, verdict

    assert verdict(Outcome(["x"], {}, "")) == 1
    assert verdict(Outcome([], {"a claim": False}, "")) == 1
    assert verdict(Outcome([], {"a claim": True}, "")) == 0
    out = capsys.readouterr().out
    assert "the experiment checked nothing" in out and "check failed: a claim" in out

"""Every experiment script runs, passes its own checks, and its committed report is current."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from adtrace.tools.experiment import discover, load

REPO = Path(__file__).resolve().parents[2]
EXPERIMENTS = discover(REPO / "experiments")


def run_script(name, folder):
    """The experiment run as a script from a copy in ``folder/experiments``: it writes its report and page into
    ``folder/reports``, never over the committed ones."""
    (folder / "experiments").mkdir()
    script = shutil.copy(EXPERIMENTS[name], folder / "experiments")
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=folder)


def test_multiple_paths_prints_the_seed_numbers(tmp_path):
    committed = {path: path.stat().st_mtime_ns for path in (REPO / "reports").glob("multiple_paths.*")}
    out = run_script("multiple_paths", tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout == (
        "call 1: previous=None, contribution=3, accumulated=(3,False)\n"
        "call 2: previous=(3,False), contribution=3, accumulated=(6,True)\n"
        "gradient contributions: 3 + 3 = 6\n"
        "all checks passed\n")
    assert (tmp_path / "reports" / "multiple_paths.md").read_text().startswith("# ")
    assert {path: path.stat().st_mtime_ns for path in (REPO / "reports").glob("multiple_paths.*")} == committed


@pytest.mark.parametrize("name", sorted(EXPERIMENTS))
def test_experiment_passes_its_claims_and_its_report_is_committed(name):
    outcome = load(EXPERIMENTS[name]).run()
    assert outcome.checks, f"{name} checks nothing"
    assert not outcome.failed, f"{name}: failed claims {outcome.failed}"
    assert outcome.report.startswith("# "), "a report opens with its title"
    assert "## Self-test questions" in outcome.report, "a report ends with self-test questions"
    committed = REPO / "reports" / f"{name}.md"
    assert committed.exists() and committed.read_text() == outcome.report, f"regenerate {committed.name}"


def test_an_experiment_that_checks_nothing_fails(capsys):
    from adtrace.tools.experiment import Outcome, verdict

    assert verdict(Outcome(["x"], {}, "")) == 1
    assert verdict(Outcome([], {"a claim": False}, "")) == 1
    assert verdict(Outcome([], {"a claim": True}, "")) == 0
    out = capsys.readouterr().out
    assert "the experiment checked nothing" in out and "check failed: a claim" in out


def test_an_experiment_about_a_recording_alone_gets_that_recordings_page(tmp_path):
    """A graph drawn before backward() has no traced call: its Outcome holds the Recording, and its
    page is the recording's, with the note that no gradient was computed."""
    from learner_passes import Value

    import adtrace
    from adtrace.tools.experiment import Outcome, outputs
    from adtrace.view import page_data, recording_page

    with adtrace.record(engine=Value) as rec:
        Value(2.0) * 3.0
    written = outputs(tmp_path, "drawn", Outcome(["x"], {"a claim": True}, "# Drawn\n", rec))
    assert written[tmp_path / "drawn.html"] == recording_page(rec, title="Drawn")
    assert page_data(rec)["notes"][0].startswith("No backward pass ran: no value's gradient was computed.")

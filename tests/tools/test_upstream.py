"""autograd's own test suite has the same outcome, test id by test id, with --adtrace."""

import subprocess
import sys

import pytest

from adtrace.recording.autograd import drift
from adtrace.tools import upstream


@pytest.mark.slow
def test_upstream_suite_same_outcome_with_adtrace():
    plain, recorded, differences = upstream.compare()
    assert differences == [], differences[:20]
    assert plain.outcomes and plain.counts().get("passed", 0) > 500
    if drift.installed_version() == "1.9.1":
        assert plain.counts() == {"passed": 618, "skipped": 13}
    print(f"upstream suite: plain {plain.seconds:.1f} s, --adtrace {recorded.seconds:.1f} s "
          f"({recorded.seconds / plain.seconds:.2f}x)")


def test_a_failed_download_fails_loudly(tmp_path):
    with pytest.raises(upstream.UpstreamError, match="could not download the sdist of autograd 0.0.0"):
        upstream.fetch_sdist("0.0.0", cache=tmp_path)


def test_outcomes_are_compared_per_test_id():
    a = upstream.SuiteRun({"t::a": "passed", "t::b": "skipped"}, 1.0)
    b = upstream.SuiteRun({"t::a": "failed", "t::c": "passed"}, 1.0)
    assert upstream.differences(a, b) == [("t::a", "passed", "failed"), ("t::b", "skipped", "absent"),
                                          ("t::c", "absent", "passed")]


def test_a_suite_run_counts_the_cpu_time_of_its_pytest_process(tmp_path):
    """CPU time is the child pytest's own (what the benchmark's ratios divide): a test that spins for
    a second of its process's CPU time makes the run's CPU time at least that."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_spin.py").write_text(
        "import time\n\ndef test_spin():\n    end = time.process_time() + 1.0\n"
        "    while time.process_time() < end:\n        pass\n")
    run = upstream.run_suite(tmp_path)
    assert run.outcomes == {"tests.test_spin::test_spin": "passed"}
    assert run.cpu_seconds >= 1.0


def test_cli_reports_a_download_failure_in_one_line():
    out = subprocess.run([sys.executable, "-m", "adtrace", "upstream", "--version", "0.0.0"],
                         capture_output=True, text=True)
    assert out.returncode == 2 and out.stderr.startswith("adtrace: could not download the sdist of autograd 0.0.0")


def test_a_suite_that_runs_nothing_proves_nothing(tmp_path, monkeypatch):
    source = tmp_path / f"autograd-{drift.installed_version()}"
    (source / "tests").mkdir(parents=True)
    monkeypatch.setattr(upstream, "fetch_sdist", lambda version=None: source)
    with pytest.raises(upstream.UpstreamError, match="did not run cleanly without adtrace"):
        upstream.compare()


def test_compare_returns_both_runs_and_the_tests_whose_outcome_differs(tmp_path, monkeypatch):
    runs = {False: upstream.SuiteRun({"t::a": "passed", "t::b": "passed", "t::c": "skipped"}, 1.0),
            True: upstream.SuiteRun({"t::a": "passed", "t::b": "failed", "t::d": "passed"}, 1.5)}
    monkeypatch.setattr(upstream, "fetch_sdist", lambda version=None: tmp_path)
    monkeypatch.setattr(upstream, "run_suite", lambda source, adtrace=False: runs[adtrace])
    plain, recorded, differences = upstream.compare()
    assert (plain, recorded) == (runs[False], runs[True])
    assert differences == [("t::b", "passed", "failed"), ("t::c", "skipped", "absent"), ("t::d", "absent", "passed")]


def test_golden_says_which_release_cannot_be_installed_here_and_exits_2(tmp_path):
    from cli_run import adtrace, one_error_line

    (tmp_path / "no_wheels").mkdir()
    offline = {"ADTRACE_CACHE": str(tmp_path / "cache"), "PIP_NO_INDEX": "1",
               "PIP_FIND_LINKS": str(tmp_path / "no_wheels")}  # (no index, no wheel: as offline without a cache)
    out = adtrace("upstream", "--golden", "-o", str(tmp_path / "upstream_diff.md"), env=offline)
    one_error_line(out, f"cannot install autograd {list(drift.known_releases())[0]} here")
    assert not (tmp_path / "upstream_diff.md").exists()

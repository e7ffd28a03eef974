"""The pytest plugin: --adtrace, --adtrace-report-dir and the adtrace_recording fixture."""

pytest_plugins = ["pytester"]

SUITE = '''
import autograd.numpy as anp
from autograd import grad
from adtrace.recording.session import active_recordings

def test_records_everything():
    assert active_recordings() == 1   # inside adtrace.record() under --adtrace
    assert grad(lambda x: x * x)(3.0) == 6.0

def test_fails_after_a_gradient():
    assert grad(lambda x: anp.sin(x) * x)(0.5) == 0.0

def test_fails_without_autograd():
    assert 1 == 2

def test_fixture(adtrace_recording):
    grad(lambda x: x * x * x)(2.0)
    assert adtrace_recording.gradient(adtrace_recording.queries[-1]) == 12.0
'''


def test_adtrace_option_runs_every_test_inside_a_recording(pytester):
    pytester.makepyfile(SUITE)
    result = pytester.runpytest_subprocess("--adtrace", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=2)
    plain = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    plain.assert_outcomes(passed=1, failed=3)  # test_records_everything needs --adtrace


def test_report_dir_gets_a_report_per_failing_test_with_a_backward_pass(pytester):
    pytester.makepyfile(SUITE)
    pytester.runpytest_subprocess("--adtrace-report-dir", "failures", "-p", "no:cacheprovider")
    reports = sorted(p.name for p in (pytester.path / "failures").iterdir())
    assert reports == ["test_report_dir_gets_a_report_per_failing_test_with_a_backward_pass.py_test_fails_after_a_gradient.md"]
    text = (pytester.path / "failures" / reports[0]).read_text()
    assert text.startswith("# adtrace recording of failing test") and "## State snapshot" in text

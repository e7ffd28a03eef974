"""The pytest plugin: --adtrace, --adtrace-report-dir and the adtrace_recording fixture."""


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
    assert len(reports) == 1 and reports[0].startswith(
        "test_report_dir_gets_a_report_per_failing_test_with_a_backward_pass.py_test_fails_after_a_gradient-")
    text = (pytester.path / "failures" / reports[0]).read_text()
    assert text.startswith("# adtrace recording of failing test") and "## State snapshot" in text


LONG_ID = "x" * 300


def test_a_report_that_cannot_be_written_is_a_warning_and_the_other_tests_run(pytester):
    pytester.makepyfile(SUITE)
    (pytester.path / "a_file").write_text("not a folder\n")
    result = pytester.runpytest_subprocess("--adtrace-report-dir", "a_file/reports", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=2)
    output = result.stdout.str()
    assert "INTERNALERROR" not in output and result.ret == 1
    assert "adtrace could not write the report of this test: a_file/reports/" in output  # the warning
    assert "test_fails_after_a_gradient: not written (a_file/reports/" in output  # the summary


def test_a_long_test_id_gets_a_short_file_and_the_summary_names_it(pytester):
    pytester.makepyfile(f'''
import pytest
from autograd import grad

@pytest.mark.parametrize("case", [1.0], ids=["{LONG_ID}"])
def test_long(case):
    assert grad(lambda x: x * x)(case) == 0.0

def test_short():
    assert grad(lambda x: x * x * x)(1.0) == 0.0
''')
    result = pytester.runpytest_subprocess("--adtrace-report-dir", "reports", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=2)
    assert "INTERNALERROR" not in result.stdout.str()
    written = sorted(p.name for p in (pytester.path / "reports").iterdir())
    assert len(written) == 2 and all(len(name) <= 124 for name in written)
    assert any("test_short-" in name for name in written)
    summary = result.stdout.str().split("adtrace reports")[1]
    for name in written:
        assert f"reports/{name}" in summary
    assert f"[{LONG_ID}]: reports/" in summary


def test_ids_that_differ_only_in_characters_a_file_name_cannot_hold_write_distinct_reports(pytester):
    pytester.makepyfile('''
import pytest
from autograd import grad

@pytest.mark.parametrize("case", ["a b", "a/b", "a_b", "a:b"], ids=lambda case: case)
def test_case(case):
    assert grad(lambda x: x * x)(float(len(case))) == 0.0
''')
    result = pytester.runpytest_subprocess("--adtrace-report-dir", "reports", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=4)
    written = {p.name: p.read_text() for p in (pytester.path / "reports").iterdir()}
    assert len(written) == 4
    for case in ("a b", "a/b", "a_b", "a:b"):  # each report is of its own test
        assert sum(f"test_case[{case}]" in text.splitlines()[0] for text in written.values()) == 1, case


def test_a_patch_conflict_warning_points_at_the_test(pytester):
    pytester.makepyfile('''
import autograd.core as core
from autograd import grad

def test_wraps_a_hooked_attribute(monkeypatch):
    wrapped = core.add_outgrads
    monkeypatch.setattr(core, "add_outgrads", lambda p, g: wrapped(p, g))
    assert grad(lambda x: x * x)(3.0) == 6.0
''')
    result = pytester.runpytest_subprocess("--adtrace", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    output = result.stdout.str()
    assert "test_a_patch_conflict_warning_points_at_the_test.py:4: PatchConflictWarning" in output, output
    assert "pluggy" not in output.split("warnings summary")[1]
    strict = pytester.runpytest_subprocess("--adtrace", "-p", "no:cacheprovider", "-W", "error::UserWarning")
    strict.assert_outcomes(failed=1)  # an error where warnings are errors, in the test, not INTERNALERROR
    assert "INTERNALERROR" not in strict.stdout.str()


def test_a_monkeypatch_of_a_hooked_function_leaves_autograd_as_it_was_after_the_test(pytester):
    """The test's monkeypatch, undone at teardown after the recording ended, puts back what it found:
    adtrace's wrapper of that recording. It is taken off after the teardown: each later test, and
    the program after the last one, find autograd's own functions (with the fixture as with --adtrace)."""
    pytester.makepyfile('''
import autograd.core as core
import pytest
from autograd import grad

ORIGINAL = core.add_outgrads

def test_wraps_a_hooked_attribute(monkeypatch):
    wrapped = core.add_outgrads
    monkeypatch.setattr(core, "add_outgrads", lambda p, g: wrapped(p, g))
    assert grad(lambda x: x * x)(3.0) == 6.0

def test_wraps_it_under_the_fixture(monkeypatch, adtrace_recording):
    wrapped = core.add_outgrads
    monkeypatch.setattr(core, "add_outgrads", lambda p, g: wrapped(p, g))
    assert grad(lambda x: x * x)(3.0) == 6.0

def test_after(request):
    assert core.add_outgrads is ORIGINAL or request.config.getoption("adtrace")
''')
    pytester.makeconftest('''
import autograd.core as core

ORIGINAL = core.add_outgrads

def pytest_unconfigure(config):
    print("add_outgrads at the end:", "autograd's own" if core.add_outgrads is ORIGINAL else core.add_outgrads)
''')
    for options in (["--adtrace", "-k", "hooked_attribute"], ["-k", "fixture or after"]):
        result = pytester.runpytest_subprocess(*options, "-p", "no:cacheprovider", "-s")
        assert result.ret == 0, result.stdout.str()
        assert "add_outgrads at the end: autograd's own" in result.stdout.str(), (options, result.stdout.str())


def test_a_patch_conflict_warning_under_the_fixture_points_at_the_test(pytester):
    pytester.makepyfile('''
import autograd.core as core
from autograd import grad

def test_wraps_a_hooked_attribute(monkeypatch, adtrace_recording):
    wrapped = core.add_outgrads
    monkeypatch.setattr(core, "add_outgrads", lambda p, g: wrapped(p, g))
    assert grad(lambda x: x * x)(3.0) == 6.0
''')
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    output = result.stdout.str()
    assert "test_a_patch_conflict_warning_under_the_fixture_points_at_the_test.py:4: PatchConflictWarning" in output, \
        output


def test_a_test_that_changes_folder_has_its_report_where_the_folder_was_named(pytester):
    """``monkeypatch.chdir(tmp_path)`` (undone only at teardown) does not move the report folder."""
    pytester.makepyfile('''
from autograd import grad

def test_moves(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert grad(lambda x: x * x)(3.0) == 0.0
''')
    result = pytester.runpytest_subprocess("--adtrace-report-dir", "reports", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    written = [p.name for p in (pytester.path / "reports").iterdir()] if (pytester.path / "reports").exists() else []
    assert len(written) == 1 and f"::test_moves: reports/{written[0]}" in result.stdout.str()

"""adtrace's pytest plugin (registered through the ``pytest11`` entry point).

- ``--adtrace``: every test's call phase runs inside ``adtrace.record()`` (``--adtrace-capture``
  picks the capture level), so a suite shows whether recording changes any outcome;
- ``--adtrace-report-dir DIR``: for each failing test that recorded a backward pass, a Markdown
  report of its recording in ``DIR/<test id>-<hash of the id>.md`` (see ``_file_name``); the
  terminal summary lists them, and a report that cannot be written is a warning, not an error;
- the ``adtrace_recording`` fixture: a test's own recording, active for the whole test;
- after each test's teardown, a hook of an ended recording that the test's monkeypatch put back
  (undoing its patch of a hooked function) is taken off: later tests find autograd as it was.
"""

import hashlib
import re
import sys
import warnings
from contextlib import ExitStack
from pathlib import Path

import pytest

from ..recording.session import record

_RECORDING = pytest.StashKey()
_WRITTEN = pytest.StashKey()  # on the config: (test id, path or None, why not) per report
_NAME_LIMIT = 120  # characters of a report's file name taken from the test id


def pytest_addoption(parser):
    group = parser.getgroup("adtrace", "record autograd's internals with adtrace")
    group.addoption("--adtrace", action="store_true", help="run every test inside adtrace.record()")
    group.addoption("--adtrace-capture", default="auto", choices=("auto", "full", "structure"),
                    help="capture level of --adtrace recordings (default: auto)")
    group.addoption("--adtrace-report-dir", metavar="DIR",
                    help="write a report for each failing test that recorded a backward pass")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    config = item.config
    if not (config.getoption("adtrace") or config.getoption("adtrace_report_dir")):
        yield
        return
    stack = ExitStack()
    # Entered through the ExitStack, not in this generator's own frame: the test's autograd
    # calls, made while this hook wrapper is suspended at its yield, are what it records.
    item.stash[_RECORDING] = stack.enter_context(record(capture=config.getoption("adtrace_capture")))
    try:
        yield
    finally:
        _close_at_test(stack, item)


def _close_at_test(stack, item):
    """Close the recording; what it warns (a ``PatchConflictWarning``: the test replaced a hooked
    function) is issued again at the test's own line, not inside pytest's machinery."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        stack.close()
    if not caught:  # (most tests: reportinfo finds the test's source line, a few dozen microseconds)
        return
    path, line, _ = item.reportinfo()
    for w in caught:
        warnings.warn_explicit(w.message, w.category, str(path), (line or 0) + 1,
                               module=getattr(getattr(item, "module", None), "__name__", None))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item, nextitem):
    """After the test's fixtures are torn down: a monkeypatch of a hooked function, undone there
    after the recording ended, put back the recording's (stale) wrapper; autograd's own goes back."""
    yield
    if "adtrace.recording.autograd" in sys.modules:  # (adtrace hooked autograd in this process)
        from ..recording.registry import remove_stale_hooks

        remove_stale_hooks()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    folder = item.config.getoption("adtrace_report_dir")
    if report.when != "call":
        return
    recording = item.stash.get(_RECORDING, None)
    if _RECORDING in item.stash:
        del item.stash[_RECORDING]  # items live for the whole session: keep no recording there
    if folder and report.failed and recording is not None and recording.queries:
        shown = Path(folder) / f"{_file_name(item.nodeid)}.md"
        _write_report(item, recording, shown, item.config.invocation_params.dir / shown)


def _write_report(item, recording, shown, path):
    """Write ``path`` (absolute: a test's ``os.chdir`` does not move it), named ``shown`` as given."""
    from ..report import render_recording
    from .output import write_file

    written = item.config.stash.setdefault(_WRITTEN, [])
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_file(path, render_recording(recording, title=f"adtrace recording of failing test {item.nodeid}"))
    except OSError as exc:
        written.append((item.nodeid, None, f"{shown}: {exc.strerror or exc}"))
        try:
            item.warn(pytest.PytestWarning(f"adtrace could not write the report of this test: {shown}: "
                                           f"{exc.strerror or exc}"))
        except Warning:  # (warnings are errors): the terminal summary says it all the same
            pass
    else:
        written.append((item.nodeid, shown, None))


def pytest_terminal_summary(terminalreporter, config):
    written = config.stash.get(_WRITTEN, [])
    if not written:
        return
    terminalreporter.section("adtrace reports")
    for nodeid, path, why_not in written:
        terminalreporter.write_line(f"{nodeid}: {path}" if path else f"{nodeid}: not written ({why_not})")


@pytest.fixture
def adtrace_recording(request):
    """A recording of everything the test does with autograd (setup of later fixtures included)."""
    stack = ExitStack()  # (entered outside this generator's frame: see pytest_runtest_call)
    try:
        yield stack.enter_context(record())
    finally:
        _close_at_test(stack, request.node)


def _file_name(nodeid):
    """The test id as a file name: letters, digits, ``._-``, a long one cut; where that changed the
    id (pytest's ids always hold ``::``), a hash of the whole id added, so that ids differing only
    there (``[a b]``, ``[a/b]``, ``[a_b]``, ``[a:b]``; ``a/b.py``, ``a_b.py``) never share a file."""
    name = re.sub(r"[^0-9A-Za-z._-]+", "_", nodeid).strip("_")
    if name == nodeid and len(name) <= _NAME_LIMIT:
        return name
    return f"{name[:_NAME_LIMIT - 13]}-{hashlib.sha256(nodeid.encode()).hexdigest()[:12]}"

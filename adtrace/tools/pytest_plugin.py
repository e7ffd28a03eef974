"""adtrace's pytest plugin (registered through the ``pytest11`` entry point).

- ``--adtrace``: every test's call phase runs inside ``adtrace.record()`` (``--adtrace-capture``
  picks the capture level), so a suite shows whether recording changes any outcome;
- ``--adtrace-report-dir DIR``: for each failing test that recorded a backward pass, a Markdown
  report of its recording in ``DIR/<test id>.md``;
- the ``adtrace_recording`` fixture: a test's own recording, active for the whole test.
"""

import re
from contextlib import ExitStack
from pathlib import Path

import pytest

from ..recording.session import record

_RECORDING = pytest.StashKey()


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
    with ExitStack() as stack:
        # Entered through the ExitStack, not in this generator's own frame: the test's autograd
        # calls, made while this hook wrapper is suspended at its yield, are what it records.
        item.stash[_RECORDING] = stack.enter_context(record(capture=config.getoption("adtrace_capture")))
        yield


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
        from ..report import render_recording

        path = Path(folder) / f"{_safe(item.nodeid)}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render_recording(recording, title=f"adtrace recording of failing test {item.nodeid}"))


@pytest.fixture
def adtrace_recording():
    """A recording of everything the test does with autograd (setup of later fixtures included)."""
    with ExitStack() as stack:  # (entered outside this generator's frame: see pytest_runtest_call)
        yield stack.enter_context(record())


def _safe(nodeid):
    return re.sub(r"[^0-9A-Za-z._-]+", "_", nodeid).strip("_")

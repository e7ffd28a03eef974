"""Regression against upstream: autograd's own test suite, without and with recording.

The sdist of the installed autograd version comes from the package index, verified against the
sha256 the index publishes and cached under ``$ADTRACE_CACHE`` (default ``~/.cache/adtrace``),
never committed (``tools/sdist.py``). Its ``tests/`` run twice, once plain and once with
``--adtrace``; the outcome of every test id must be the same. A failed download is an error that
says so, never a silent skip.
"""

import os
import resource
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from . import sdist
from ..recording.autograd.drift import installed_version
from .sdist import UpstreamError, cache_dir  # noqa: F401  (the command line and the tests use them here)


@dataclass
class SuiteRun:
    outcomes: dict  # test id -> passed | skipped | failed | error
    seconds: float  # wall time
    cpu_seconds: float = None  # the child's user + system time (what other processes on the machine move less)

    def counts(self):
        totals = {}
        for outcome in self.outcomes.values():
            totals[outcome] = totals.get(outcome, 0) + 1
        return totals


def fetch_sdist(version=None, cache=None, indexes=None):
    """The unpacked, verified sdist of autograd ``version`` (default: the installed one)."""
    return sdist.fetch_sdist(version or installed_version(), cache, indexes)


def run_suite(source, adtrace=False, extra=()):
    """Run ``source/tests`` in a fresh interpreter; outcomes per test id from its JUnit XML."""
    with tempfile.TemporaryDirectory() as folder:
        junit = Path(folder) / "junit.xml"
        # -c /dev/null: upstream's own pytest configuration demands plugins (pytest-cov, xdist)
        command = [sys.executable, "-m", "pytest", "-c", os.devnull, "--rootdir", str(source), "-q",
                   "-p", "no:cacheprovider", "-o", "junit_family=xunit2", f"--junitxml={junit}",
                   str(source / "tests"), *(["--adtrace"] if adtrace else []), *extra]
        start, children = time.perf_counter(), _children_cpu()
        done = subprocess.run(command, capture_output=True, text=True, cwd=source)
        seconds, cpu_seconds = time.perf_counter() - start, _children_cpu() - children
        if not junit.exists():
            raise UpstreamError(f"autograd's test suite in {source} did not run: "
                                f"{done.stdout[-500:]}{done.stderr[-500:]}")
        return SuiteRun(_outcomes(junit), seconds, cpu_seconds)


def _children_cpu():
    """User + system time of this process's ended (waited-for) children, and theirs."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _outcomes(junit):
    outcomes = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        test_id = f"{case.get('classname')}::{case.get('name')}"
        kinds = {child.tag for child in case}
        outcome = ("error" if "error" in kinds else "failed" if "failure" in kinds
                   else "skipped" if "skipped" in kinds else "passed")
        outcomes[test_id] = outcome
    return outcomes


def differences(plain, recorded):
    """Test ids whose outcome differs, with both outcomes."""
    ids = sorted(set(plain.outcomes) | set(recorded.outcomes))
    return [(i, plain.outcomes.get(i, "absent"), recorded.outcomes.get(i, "absent"))
            for i in ids if plain.outcomes.get(i) != recorded.outcomes.get(i)]


def compare(version=None):
    """``(plain run, recorded run, differences)`` for autograd's own suite; an error if the plain
    run passed nothing or had errors (then the comparison would prove nothing)."""
    source = fetch_sdist(version)
    plain = run_suite(source)
    counts = plain.counts()
    if not counts.get("passed") or counts.get("error"):
        raise UpstreamError(f"autograd's own suite in {source} did not run cleanly without adtrace: "
                            f"{counts or 'no test'}")
    recorded = run_suite(source, adtrace=True)
    return plain, recorded, differences(plain, recorded)

"""Regression against upstream: autograd's own test suite, without and with recording.

The sdist of the installed autograd version is fetched from the package index when the check
runs (``pip download --no-binary :all:``), cached under ``$ADTRACE_CACHE`` (default
``~/.cache/adtrace``), never committed. Its ``tests/`` run twice, once plain and once with
``--adtrace``; the outcome of every test id must be the same. A failed download is an error that
says so, never a silent skip.
"""

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from ..recording.autograd.drift import installed_version


class UpstreamError(RuntimeError):
    """The upstream suite could not be fetched or run."""


@dataclass
class SuiteRun:
    outcomes: dict  # test id -> passed | skipped | failed | error
    seconds: float

    def counts(self):
        totals = {}
        for outcome in self.outcomes.values():
            totals[outcome] = totals.get(outcome, 0) + 1
        return totals


def cache_dir():
    return Path(os.environ.get("ADTRACE_CACHE", Path.home() / ".cache" / "adtrace"))


def fetch_sdist(version=None, cache=None):
    """The unpacked sdist of autograd ``version`` (default: the installed one), from the cache or
    the package index."""
    version = version or installed_version()
    cache = Path(cache or cache_dir())
    source = cache / f"autograd-{version}"
    if (source / "tests").is_dir() and (source / ".complete").exists():
        return source
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache) as download:
        command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
                   "--dest", download, f"autograd=={version}"]
        done = subprocess.run(command, capture_output=True, text=True)
        archives = list(Path(download).glob(f"autograd-{version}.tar.gz"))
        if done.returncode != 0 or not archives:
            raise UpstreamError(f"could not download the sdist of autograd {version} from the package index: "
                                f"{(done.stderr or done.stdout).strip().splitlines()[-1:] or 'no archive'}")
        unpacked = Path(download) / "unpacked"
        with tarfile.open(archives[0]) as archive:
            try:
                archive.extractall(unpacked, filter="data")
            except TypeError:  # Python before 3.10.12 / 3.11.4: no extraction filters
                archive.extractall(unpacked)
        if not (unpacked / source.name / "tests").is_dir():
            raise UpstreamError(f"the sdist of autograd {version} has no tests/ folder")
        shutil.rmtree(source, ignore_errors=True)  # a partial copy from an interrupted run
        (unpacked / source.name).rename(source)  # into place whole, then marked complete
        (source / ".complete").touch()
    return source


def run_suite(source, adtrace=False, extra=()):
    """Run ``source/tests`` in a fresh interpreter; outcomes per test id from its JUnit XML."""
    with tempfile.TemporaryDirectory() as folder:
        junit = Path(folder) / "junit.xml"
        # -c /dev/null: upstream's own pytest configuration demands plugins (pytest-cov, xdist)
        command = [sys.executable, "-m", "pytest", "-c", os.devnull, "--rootdir", str(source), "-q",
                   "-p", "no:cacheprovider", "-o", "junit_family=xunit2", f"--junitxml={junit}",
                   str(source / "tests"), *(["--adtrace"] if adtrace else []), *extra]
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, cwd=source)
        seconds = time.perf_counter() - start
        if not junit.exists():
            raise UpstreamError(f"autograd's test suite did not run: {done.stdout[-500:]}{done.stderr[-500:]}")
        return SuiteRun(_outcomes(junit), seconds)


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
        raise UpstreamError(f"autograd's own suite did not run cleanly without adtrace: {counts or 'no test'}")
    recorded = run_suite(source, adtrace=True)
    return plain, recorded, differences(plain, recorded)

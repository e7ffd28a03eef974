"""Shared test configuration: pytest's own pytester, for the tests that run pytest in a subprocess; and the
guard that no test writes into the committed reports (``git status`` of ``reports/`` the same after the session
as before it; nothing checked outside a git checkout)."""

import shutil
import subprocess
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]
REPO = Path(__file__).resolve().parents[1]


def reports_status():
    """``git status --porcelain`` of ``reports/``, or None outside a git checkout (a copy, an sdist, no git)."""
    if shutil.which("git") is None or not (REPO / ".git").exists() or not (REPO / "reports").is_dir():
        return None
    out = subprocess.run(["git", "status", "--porcelain", "--", "reports"], cwd=REPO, capture_output=True, text=True)
    return out.stdout if out.returncode == 0 else None


def pytest_sessionstart(session):
    session.config.stash[REPORTS] = reports_status()


def pytest_sessionfinish(session, exitstatus):
    before = session.config.stash.get(REPORTS, None)
    after = reports_status() if before is not None else None
    if after is not None and after != before:
        terminal = session.config.pluginmanager.get_plugin("terminalreporter")
        if terminal is not None:
            terminal.write_line(f"a test changed the committed reports/ (git status before:\n{before}after:\n{after})",
                                red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


REPORTS = pytest.StashKey()

"""Run the adtrace command as a user would (a subprocess), for the command-line tests."""

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def adtrace(*args, cwd=None, env=None):
    """``adtrace ARGS`` in ``cwd``; ``env``: variables to set (or, as ``None``, unset) for this run."""
    environment = dict(os.environ)
    for name, value in (env or {}).items():
        if value is None:
            environment.pop(name, None)
        else:
            environment[name] = value
    return subprocess.run([sys.executable, "-m", "adtrace", *args], capture_output=True, text=True, cwd=cwd,
                          env=environment, encoding="utf-8", errors="surrogateescape")


def one_error_line(out, *fragments):
    """``out`` ended with exit 2 and one ``adtrace:`` line on standard error naming every fragment."""
    assert out.returncode == 2, (out.returncode, out.stdout[-500:], out.stderr[-2000:])
    assert out.stderr.startswith("adtrace: ") and out.stderr.count("\n") == 1, out.stderr[-2000:]
    assert "Traceback" not in out.stderr and out.stdout == ""
    for fragment in fragments:
        assert fragment in out.stderr, (fragment, out.stderr)

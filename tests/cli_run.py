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


def read_fifo(fifo, write):
    """The bytes ``write()`` writes into the FIFO ``fifo`` (at most a pipe's 64 KiB). Its reader is
    opened first, without waiting for a writer: a ``write()`` that replaced the FIFO instead of
    writing into it gives ``b""`` here, never a test that hangs."""
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        write()
        chunks = []
        while chunk := _read_now(reader):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(reader)


def _read_now(fd):
    try:
        return os.read(fd, 1 << 16)
    except BlockingIOError:  # (a writer still holds it open: what it wrote so far is all)
        return b""

"""What the command line writes: the terminal (nothing invisible, nothing that cannot be encoded)
and the traced program's own prints (to standard error, never into a report written to standard
output). Files are written by ``report.files`` (re-exported here for the commands)."""

import os
import sys
from contextlib import contextmanager, redirect_stdout

from ..report.files import (FileError, StandardOutputError, read_file, same_files, standard_output, writable,
                            write_file, write_files)
from ..report.format import visible

__all__ = ["FileError", "StandardOutputError", "read_file", "same_files", "standard_output", "writable", "write_file",
           "write_files", "terminal_safe", "show", "program_output_to_stderr"]


def terminal_safe(stream):
    """Let ``stream`` write what its encoding cannot as ``\\xb7``-style escapes instead of failing."""
    if hasattr(stream, "reconfigure"):
        stream.reconfigure(errors="backslashreplace")


def show(text, stream=None, end="\n"):
    """Print adtrace's own ``text`` (which may quote the user's program) to ``stream`` (standard
    output by default): control characters and bidirectional overrides shown as escapes, line
    breaks and tabs kept."""
    text = visible(text, keep="\n\t") + end
    if stream is not None:
        stream.write(text)
        return
    with standard_output() as out:
        out.write(text)


@contextmanager
def program_output_to_stderr():
    """While the traced program loads and runs, what it prints goes to standard error (its
    ``print``, and writes to file descriptor 1 from C code), so standard output holds adtrace's
    result alone."""
    out = sys.stdout
    if out is not None:
        out.flush()
    saved = _dup_stdout_to_stderr(out)
    try:
        with redirect_stdout(sys.stderr):
            yield
    finally:
        if out is not None:
            out.flush()
        sys.stderr.flush()
        if saved is not None:
            os.dup2(saved, out.fileno())
            os.close(saved)


def _dup_stdout_to_stderr(out):
    try:
        fd, err = out.fileno(), sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):  # not a real file (pytest's capture, a StringIO)
        return None
    saved = os.dup(fd)
    sys.stderr.flush()
    os.dup2(err, fd)
    return saved

"""What adtrace writes: files (UTF-8, atomically), the terminal (nothing invisible, nothing that
cannot be encoded), and the traced program's own prints (to standard error, never into a report
written to standard output)."""

import os
import secrets
import sys
from contextlib import contextmanager, redirect_stdout
from pathlib import Path

from ..report.format import visible


def write_file(path, text):
    """Write ``text`` to ``path`` as UTF-8 through a temporary file renamed over it: a failure
    leaves the old file (or none), never an empty or half-written one."""
    path = Path(path)
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    data = text.encode("utf-8")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # mode as umask allows, as open() would
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def read_file(path):
    return Path(path).read_text(encoding="utf-8")


def same_files(paths):
    """The pairs of ``paths`` (``{option: path}``) that name one file, however spelled (``r.md``,
    ``./r.md``, an absolute path, a symbolic or hard link)."""
    named = [(option, path) for option, path in paths.items() if path]
    return [(a, b) for i, (a, path_a) in enumerate(named) for b, path_b in named[i + 1:] if _same(path_a, path_b)]


def _same(a, b):
    try:
        return os.path.samefile(a, b)
    except OSError:  # (one does not exist yet)
        return Path(a).resolve() == Path(b).resolve()


def terminal_safe(stream):
    """Let ``stream`` write what its encoding cannot as ``\\xb7``-style escapes instead of failing."""
    if hasattr(stream, "reconfigure"):
        stream.reconfigure(errors="backslashreplace")


def show(text, stream=None, end="\n"):
    """Print adtrace's own ``text`` (which may quote the user's program): control characters and
    bidirectional overrides shown as escapes, line breaks and tabs kept."""
    stream = stream or sys.stdout
    stream.write(visible(text, keep="\n\t") + end)


@contextmanager
def program_output_to_stderr():
    """While the traced program loads and runs, what it prints goes to standard error (its
    ``print``, and writes to file descriptor 1 from C code), so standard output holds adtrace's
    result alone."""
    out = sys.stdout
    out.flush()
    saved = _dup_stdout_to_stderr(out)
    try:
        with redirect_stdout(sys.stderr):
            yield
    finally:
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

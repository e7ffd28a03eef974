"""Where a report's text goes: a file written safely whatever its path names (a regular file
atomically, keeping its mode and owner; a hard-linked file in place; a symbolic link written
through; standard output, a character device or a FIFO streamed, never renamed over; a folder
refused), several files all or none, and standard output with its failures named. Every writer of
adtrace (the command line, ``Recording.to_html``, the pytest plugin, the experiments) uses it."""

import errno
import os
import secrets
import stat
import sys
from contextlib import contextmanager
from pathlib import Path


def write_file(path, text):
    """Write ``text`` to ``path`` as UTF-8, whatever ``path`` names (see ``_write_kind``):

    - a regular file (or none yet): through a temporary file in its folder, renamed over it, with
      the old file's permission bits (and owner, where allowed): a failure leaves the old file (or
      none), never a half-written one;
    - a regular file with more than one hard link: in place, so that every link sees the new text
      (a rename would give this name a new file and leave the other links on the old one), at the
      cost of atomicity; so too a file in a folder that cannot be written (no temporary file beside it);
    - a regular file that cannot be written (read-only): a ``PermissionError``, as ``open`` would;
    - a symbolic link: written through, its target replaced as above; the link stays a link;
    - ``-`` (standard output), a character device, a FIFO: written directly, streamed, no rename
      (a rename would replace ``/dev/null`` with a regular file);
    - a directory: an ``IsADirectoryError``."""
    try:
        write_files([(path, text)])
    except FileError as exc:
        raise exc.__cause__ from None  # (the OSError itself: IsADirectoryError, PermissionError...)


def write_files(texts):
    """Write each ``(path, text)`` of ``texts`` as ``write_file`` does, the regular files all or
    none: each first into its temporary file, then the streams and in-place files, then every
    rename; a failure before the renames leaves every regular file as it was (raised as a
    ``FileError`` naming which path failed)."""
    staged = []
    try:
        for path, text in texts:
            try:
                staged.append(_stage(path, text))
            except OSError as exc:
                raise FileError(path, exc) from exc
        paths = [path for path, _ in texts]
        direct = [(path, write) for path, (temporary, write) in zip(paths, staged) if temporary is None]
        renamed = [(path, write) for path, (temporary, write) in zip(paths, staged) if temporary is not None]
        for path, write in direct + renamed:
            try:
                write()
            except OSError as exc:
                raise FileError(path, exc) from exc
    finally:
        for temporary, _ in staged:
            if temporary is not None:
                temporary.unlink(missing_ok=True)  # (renamed: gone already)


class FileError(OSError):
    """Writing ``path`` failed; why: its ``__cause__``, the ``OSError`` raised."""

    def __init__(self, path, exc):
        super().__init__(exc.errno, exc.strerror or str(exc), str(path))
        self.path = path


def _stage(path, text):
    """``(temporary, write)``: a regular file's text written into its temporary file (``write``
    renames it), or, for the other kinds, ``None`` and the ``write`` that writes directly."""
    data = text.encode("utf-8")  # first: a text that cannot be encoded leaves the file as it was
    kind, path, old = _write_kind(path)
    if kind == "stdout":
        return None, lambda: _to_standard_output(text)
    if kind in ("stream", "in place"):  # the same file, truncated and written (a FIFO: opening waits for its reader)
        return None, lambda: path.write_bytes(data)
    temporary = _temporary(path, data, old)
    return temporary, lambda: os.replace(temporary, path)


def _to_standard_output(text):
    with standard_output() as out:
        out.write(text)


def writable(path):
    """Raise the ``OSError`` that writing to ``path`` would raise, found without writing: a
    directory, a read-only file, a folder that does not exist or cannot be written into."""
    kind, path, _ = _write_kind(path)
    if kind == "stdout":
        return
    written = path if kind in ("stream", "in place") else path.parent  # (a new file: its folder)
    if not written.exists():
        raise FileNotFoundError(errno.ENOENT, f"no such folder: {written}")
    if not written.is_dir() and kind == "file":
        raise NotADirectoryError(errno.ENOTDIR, f"not a folder: {written}")
    if not os.access(written, os.W_OK):
        raise PermissionError(errno.EACCES, f"permission denied: {written}")


def _write_kind(path):
    """``(kind, path, old)``: how ``write_file`` writes ``path`` (a symbolic link followed to what
    it names); ``old``: the ``os.stat`` of the file there (``None`` for a new file)."""
    if str(path) == "-":
        return "stdout", None, None
    if str(path).endswith(("/", os.sep)):  # a folder's name (realpath would drop the slash): as `> out/` refuses
        raise IsADirectoryError(errno.EISDIR, "names a folder (it ends with /)", str(path))
    path = Path(os.path.realpath(path))  # (a dangling link: the file it names, created)
    try:
        st = os.stat(path)  # never opens: a FIFO with no reader does not block here
    except (FileNotFoundError, NotADirectoryError):  # (a new file, or a folder that is not one)
        return "file", path, None
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(errno.EISDIR, "is a directory", str(path))
    if not stat.S_ISREG(st.st_mode):
        return "stream", path, None
    if not os.access(path, os.W_OK):  # (a rename would replace a file its owner made read-only)
        raise PermissionError(errno.EACCES, "permission denied (a read-only file)", str(path))
    in_place = st.st_nlink > 1 or not os.access(path.parent, os.W_OK)
    return ("in place" if in_place else "file"), path, st


def _temporary(path, data, old):
    """A new file beside ``path`` holding ``data``, with the mode and owner of ``old`` (its stat)."""
    short = os.fsdecode(os.fsencode(path.name)[:200])  # (a name of 255 bytes has a temporary under 255 too)
    temporary = path.with_name(f".{short}.{secrets.token_hex(4)}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # mode as umask allows, as open() would
    try:
        with os.fdopen(fd, "wb") as file:
            if old is not None:
                _keep_owner(file.fileno(), old)
                os.fchmod(file.fileno(), stat.S_IMODE(old.st_mode))  # the old file's (a mode-600 file stays 600)
            file.write(data)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return temporary


def _keep_owner(fd, old):
    """The old file's owner and group, where this process may give them (root; or a group of its own)."""
    if (old.st_uid, old.st_gid) != (os.geteuid(), os.getegid()):
        try:
            os.fchown(fd, old.st_uid, old.st_gid)
        except PermissionError:
            pass


def read_file(path):
    return Path(path).read_text(encoding="utf-8")


def same_files(paths):
    """The pairs of ``paths`` (``{option: path}``) that name one file, however spelled (``r.md``,
    ``./r.md``, an absolute path, a symbolic or hard link), or both ``-`` (standard output)."""
    named = [(option, path) for option, path in paths.items() if path]
    return [(a, b) for i, (a, path_a) in enumerate(named) for b, path_b in named[i + 1:] if _same(path_a, path_b)]


def _same(a, b):
    if "-" in (str(a), str(b)):  # standard output (``./-`` is a file named -)
        return str(a) == str(b)
    try:
        return os.path.samefile(a, b)
    except OSError:  # (one does not exist yet, or is a symbolic link loop: realpath, unlike resolve, never raises)
        return os.path.realpath(a) == os.path.realpath(b)


class StandardOutputError(Exception):
    """Standard output could not be written: its reader went away, it is closed, the disk is full."""


@contextmanager
def standard_output():
    """``sys.stdout``, written and flushed; what fails raises a ``StandardOutputError``."""
    try:
        if sys.stdout is None:  # (adtrace started with standard output closed)
            raise OSError(errno.EBADF, "it is closed")
        yield sys.stdout
        sys.stdout.flush()
    except (OSError, ValueError) as exc:  # (ValueError: a file closed in this process)
        raise StandardOutputError(getattr(exc, "strerror", None) or str(exc)) from exc

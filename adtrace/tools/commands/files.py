"""Files the commands write (``output.write_file``): checked before anything runs, never two
outputs (or an output and the user's source) in one file."""

import os
import sys

from ..output import FileError, same_files, show, writable, write_files
from . import UserError


def outputs(named, sources=None):
    """``named`` (``{option: path}``, ``-`` standard output) checked before anything runs or is
    written: none over another or over a source (``sources``: ``{option: path}``), each writable;
    returned absolute, so that a target changing folder (``os.chdir``) does not move them."""
    named = {option: path for option, path in named.items() if path}
    refuse_same_files(named, sources)
    for option, path in named.items():
        try:
            writable(path)
        except OSError as exc:
            raise UserError(f"cannot write {option} {path}: {_why(exc)}") from exc
    # (joined, not os.path.abspath: that folds `sub/..` away, where the system follows a linked `sub`)
    return {option: path if path == "-" else os.path.join(os.getcwd(), path) for option, path in named.items()}


def write(path, text, shown=None):
    """Write ``text`` to ``path``; ``shown``: its name as the user gave it, to say it was written
    (on standard error, which keeps standard output for the result)."""
    write_all([(None, shown or path, path, text)], say=shown is not None)


def write_all(texts, say=True):
    """Write each ``(option, given, path, text)`` (``-o``, ``r.md`` as the user gave it, its absolute
    path), the regular files all or none (``output.write_files``); ``say``: say on standard error
    what was written (``wrote r.md``)."""
    named = {path: (option, given) for option, given, path, _ in texts}
    try:
        write_files([(path, text) for *_, path, text in texts])
    except FileError as exc:
        option, given = named[exc.path]
        raise UserError(f"cannot write {f'{option} ' if option else ''}{given}: {_why(exc)}") from exc
    for _, given, path, _ in texts:
        if say and path != "-":
            show(f"wrote {given}", sys.stderr)


def refuse_same_files(outputs, sources=None):
    """``outputs``, ``sources``: ``{option: path}``. Two outputs in one file would overwrite each
    other; an output over a source would overwrite the user's program."""
    for a, b in same_files(outputs):
        if outputs[a] == "-":  # (-o's default)
            raise UserError(f"{a} and {b} - both write to standard output: give one of them a file")
        raise UserError(f"{a} and {b} name the same file ({outputs[a]}): give each output its own")
    for option, path in (sources or {}).items():
        for _, output in same_files({option: path, **outputs}):
            if output != option:
                raise UserError(f"{output} {outputs[output]} would overwrite {option}'s source file {path}")


def _why(exc):
    return exc.strerror or str(exc)

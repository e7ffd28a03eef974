"""Files the commands write: UTF-8, atomically, never two outputs (or an output and the user's
source) in one file."""

from ..output import same_files, write_file
from . import UserError


def write(path, text):
    try:
        write_file(path, text)
    except OSError as exc:
        raise UserError(f"cannot write {path}: {exc.strerror or exc}") from exc


def refuse_same_files(outputs, sources=None):
    """``outputs``, ``sources``: ``{option: path}``. Two outputs in one file would overwrite each
    other; an output over a source would overwrite the user's program."""
    for a, b in same_files(outputs):
        raise UserError(f"{a} and {b} name the same file ({outputs[a]}): give each output its own")
    for option, path in (sources or {}).items():
        for _, output in same_files({option: path, **outputs}):
            if output != option:
                raise UserError(f"{output} {outputs[output]} would overwrite {option}'s source file {path}")

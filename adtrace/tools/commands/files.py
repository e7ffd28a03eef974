"""Files the commands write."""

from pathlib import Path

from . import UserError


def write(path, text):
    try:
        Path(path).write_text(text)
    except OSError as exc:
        raise UserError(f"cannot write {path}: {exc.strerror or exc}") from exc

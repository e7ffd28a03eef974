"""What the command line is pointed at: ``module:function`` or ``path/to/file.py:function``, and
arguments given as Python literals."""

import ast
import importlib
import importlib.util
import sys
from pathlib import Path

import numpy as np


class TargetError(Exception):
    """A TARGET or ARG the command line cannot use; the message says why."""


def load_target(target):
    """The function named by ``module:function`` or ``path/to/file.py:function``."""
    where, sep, name = target.rpartition(":")
    if not sep or not where or not name:
        raise TargetError(f"TARGET must be module:function or path/to/file.py:function, got {target!r}")
    module = _load_file(where) if where.endswith(".py") or "/" in where else _import(where)
    obj = module
    for part in name.split("."):
        if not hasattr(obj, part):
            raise TargetError(f"{where} has no attribute {name!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise TargetError(f"{target} is not a function (it is a {type(obj).__name__} object)")
    return obj


def _import(module):
    if "" not in sys.path:
        sys.path.insert(0, "")  # modules of the working directory, as `python -m` would see them
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise TargetError(f"cannot import module {module!r}: {exc}") from exc
    except Exception as exc:  # a syntax error, or the module raised while loading
        raise TargetError(f"module {module!r} raised {type(exc).__name__} while loading: {exc}") from exc


def _load_file(path):
    file = Path(path)
    if not file.is_file():
        raise TargetError(f"no such file: {path}")
    spec = importlib.util.spec_from_file_location(f"adtrace_target_{file.stem}", file)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(file.parent))  # the file's own imports of its neighbours
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        raise TargetError(f"{path} raised {type(exc).__name__} while loading: {exc}") from exc
    finally:
        sys.path.remove(str(file.parent))
    return module


def parse_arg(text):
    """A Python literal; a list (or nested lists) becomes a float array (ints stay ints: an index
    argument must stay one; the CLI makes the differentiated argument a float)."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError) as exc:
        raise TargetError(f"--at {text!r} is not a Python literal (e.g. 3.0 or [1.0, 2.0])") from exc
    if isinstance(value, list):
        try:
            return np.array(value, dtype=float)
        except (TypeError, ValueError) as exc:
            raise TargetError(f"--at {text!r}: a list must hold numbers (it becomes a float array)") from exc
    return value  # kept as given: fine for a fixed argument, refused if differentiated

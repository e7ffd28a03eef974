"""What the command line is pointed at: ``module:function`` or ``path/to/file.py:function``, and
its arguments: Python literals (``--at``, ``--kw NAME=VALUE``) or a function returning them
(``--args-from``)."""

import ast
import importlib
import importlib.machinery
import importlib.util
import keyword
import math
import os
import sys
from pathlib import Path

import numpy as np

from ..recording.callsite import name_file

MAX_LITERAL = 100_000  # characters of one --at or --kw value
MAX_DEPTH = 64  # nesting of one literal (numpy arrays have at most 64 dimensions)
_NAMES = {"nan": math.nan, "inf": math.inf}


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


def source_file(spec):
    """The file of the module that ``module:name`` or ``path/to/file.py:name`` names, found without
    importing anything (``None`` if it is not a file on the import path)."""
    where, sep, _ = spec.rpartition(":")
    if not sep or not where:
        return None
    if where.endswith(".py") or "/" in where:
        return where
    search, spec = [os.getcwd(), *sys.path], None  # ("": the working directory, as `_import` adds it)
    for depth, name in enumerate(where.split(".")):
        try:
            spec = importlib.machinery.PathFinder.find_spec(".".join(where.split(".")[:depth + 1]), search)
        except (ImportError, ValueError):
            return None
        if spec is None:
            return None
        search = spec.submodule_search_locations or []
    return spec.origin if spec.has_location else None


def _import(module):
    if "" not in sys.path:
        sys.path.insert(0, "")  # modules of the working directory, as `python -m` would see them
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise TargetError(f"cannot import module {module!r}: {exc}") from exc
    except (Exception, SystemExit) as exc:  # a syntax error, or the module raised (or exited) while loading
        raise TargetError(_while_loading(f"module {module!r}", exc)) from exc


def _load_file(path):
    """The module of the file ``path``, loaded once: a file an import (or an earlier target) already
    loaded is that module, so a function and its engine share one ``Value`` class however they name
    it. A new file is loaded under the name ``import`` gives it with its folder first on ``sys.path``
    (its stem; ``adtrace_target_STEM`` where that name is another module's) and kept in
    ``sys.modules`` as an import keeps it, the file's own imports with it; the folder is on
    ``sys.path`` while the file loads, then removed."""
    file = Path(path)
    if not file.is_file():
        raise TargetError(f"no such file: {path}")
    # outside the working folder, shown as given (never absolute: an absolute path by its file name)
    name_file(file, file.name if file.is_absolute() else file.as_posix())
    loaded = _module_of(file)
    if loaded is not None:
        return loaded
    name = _import_name(file)
    spec = importlib.util.spec_from_file_location(name, file.absolute())
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # before it runs, as an import does (its neighbours may import it back)
    sys.path.insert(0, str(file.parent))  # the file's own imports of its neighbours
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:
        if sys.modules.get(name) is module:
            del sys.modules[name]
        raise TargetError(_while_loading(path, exc) + _package_hint(file, exc)) from exc
    finally:
        sys.path.remove(str(file.parent))
    return module


def _module_of(file):
    """The module in ``sys.modules`` loaded from ``file`` (``None`` if none is)."""
    wanted = os.path.realpath(file)
    for module in list(sys.modules.values()):
        origin = getattr(module, "__file__", None)
        if isinstance(origin, str) and os.path.basename(origin) == file.name and os.path.realpath(origin) == wanted:
            return module
    return None


def _import_name(file):
    """``file``'s stem if ``import STEM`` from its folder would give this file and the name is free (not a
    module already loaded or found elsewhere on ``sys.path``, e.g. the standard library's)."""
    name = file.stem
    if name.isidentifier() and not keyword.iskeyword(name) and name not in sys.modules:
        try:
            found = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            found = False
        if found is None or (found and found.has_location and found.origin
                             and os.path.realpath(found.origin) == os.path.realpath(file)):
            return name
    return f"adtrace_target_{name}"


def _package_hint(file, exc):
    """A file of a package that imports its neighbours relatively, or its own package by name (``from
    pkg.engine import Value``: not found from the file's folder), loads as a module of its package."""
    if not (isinstance(exc, ImportError) and (file.parent / "__init__.py").is_file()):
        return ""
    parts, folder = [file.stem], file.absolute().parent
    while (folder / "__init__.py").is_file():
        parts.insert(0, folder.name)
        folder = folder.parent
    if "relative import" not in str(exc) and (getattr(exc, "name", None) or "").split(".")[0] != parts[0]:
        return ""
    where = "" if folder == Path.cwd() else f", run from {os.path.relpath(folder)}"
    return f" (a module of package {parts[0]}: give it as {'.'.join(parts)}:NAME{where})"


def _while_loading(what, exc):
    if isinstance(exc, SystemExit):
        return f"{what} called sys.exit({exc.code!r}) while loading"
    return f"{what} raised {type(exc).__name__} while loading: {exc}"


# -------------------- --args-from --------------------


def arguments_from(spec):
    """``(args, kwargs)`` from the function ``spec`` names, called without arguments: it returns
    the positional arguments (a tuple or list), or ``(args, kwargs)`` (a tuple or list, and a dict
    of keyword arguments)."""
    function = load_target(spec)
    try:
        returned = function()
    except (Exception, SystemExit) as exc:
        if isinstance(exc, SystemExit):
            happened = f"called sys.exit({exc.code!r})"
        else:
            happened = f"raised {type(exc).__name__}: {exc}"
        raise TargetError(f"--args-from {spec} {happened}") from exc
    if _is_pair(returned):
        args, kwargs = returned
        bad = [k for k in kwargs if not (isinstance(k, str) and k.isidentifier())]
        if bad:
            raise TargetError(f"--args-from {spec}: keyword argument names must be identifiers, got {bad[0]!r}")
        return tuple(args), dict(kwargs)
    if isinstance(returned, (tuple, list)):
        return tuple(returned), {}
    raise TargetError(f"--args-from {spec} returned a {type(returned).__name__}: return the arguments as a "
                      "tuple, e.g. (x,), or (args, kwargs), e.g. ((x, y), {'scale': 2.0})")


def _is_pair(value):
    return (isinstance(value, (tuple, list)) and len(value) == 2 and isinstance(value[0], (tuple, list))
            and isinstance(value[1], dict))


# -------------------- literals: --at and --kw --------------------


def parse_keyword(text, dtype=np.float64):
    """``NAME=VALUE`` as ``(name, value)``, the value a literal as ``parse_arg`` reads it."""
    name, sep, value = text.partition("=")
    if not sep or not name.isidentifier():
        raise TargetError(f"--kw {_shown(text)} is not NAME=VALUE (e.g. --kw scale=2.0)")
    return name, parse_arg(value, dtype, option=f"--kw {name}=")


def parse_arg(text, dtype=np.float64, option="--at"):
    """A Python literal, ``nan`` and ``inf`` included; a list (or nested lists), also inside a
    tuple or dict, becomes an array of ``dtype`` (complex numbers: the complex dtype of that
    precision); a float becomes ``dtype`` when it is not float64. Ints stay ints (an index argument
    must stay one; the CLI makes the differentiated argument a float)."""
    if len(text) > MAX_LITERAL:
        raise TargetError(f"{option} {_shown(text)}: a literal of {len(text)} characters is longer than "
                          f"{MAX_LITERAL}; pass large arguments with --args-from")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise TargetError(f"{option} {_shown(text)} is not a Python literal (e.g. 3.0, -1e-3, nan or "
                          "[1.0, 2.0])") from exc
    if _depth(tree) > MAX_DEPTH:
        raise TargetError(f"{option} {_shown(text)} is nested deeper than {MAX_DEPTH} levels")
    try:
        value = ast.literal_eval(_NamedFloats().visit(tree))
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError) as exc:
        raise TargetError(f"{option} {_shown(text)} is not a Python literal (e.g. 3.0, -1e-3, nan or "
                          "[1.0, 2.0])") from exc
    return _arrays(value, np.dtype(dtype), option, text)


class _NamedFloats(ast.NodeTransformer):
    def visit_Name(self, node):
        return ast.copy_location(ast.Constant(_NAMES[node.id]), node) if node.id in _NAMES else node


def _depth(tree):
    """How deeply the literal ``tree`` nests (``1.0``: 0, ``[1.0]``: 1, ``-(-1.0)``: 2), walked
    without recursion."""
    deepest, stack = 0, [(tree.body, 0)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return deepest


_NUMPY_MAX_DIMS = 64 if np.lib.NumpyVersion(np.__version__) >= "2.0.0" else 32


def _list_depth(value):
    """How many lists deep ``value``'s first items go."""
    depth = 0
    while isinstance(value, list) and value:
        depth, value = depth + 1, value[0]
    return depth


def _arrays(value, dtype, option, text):
    if isinstance(value, list):
        try:
            array = np.array(value)
        except ValueError as exc:  # ragged, or deeper than numpy's arrays
            if _list_depth(value) > _NUMPY_MAX_DIMS:
                raise TargetError(f"{option} {_shown(text)}: {_list_depth(value)} lists deep: numpy {np.__version__}'s "
                                  f"arrays have at most {_NUMPY_MAX_DIMS} dimensions") from exc
            raise TargetError(f"{option} {_shown(text)}: the lists must nest evenly (it becomes an array)") from exc
        if array.dtype.kind not in "biufc":
            raise TargetError(f"{option} {_shown(text)}: a list must hold numbers (it becomes an array)")
        return array.astype(np.result_type(dtype, np.complex64) if array.dtype.kind == "c" else dtype)
    if isinstance(value, tuple):
        return tuple(_arrays(v, dtype, option, text) for v in value)
    if isinstance(value, dict):
        return {k: _arrays(v, dtype, option, text) for k, v in value.items()}
    if isinstance(value, float) and dtype != np.float64:
        return dtype.type(value)
    if isinstance(value, complex) and dtype != np.float64:
        return np.result_type(dtype, np.complex64).type(value)
    return value  # kept as given: fine for a fixed argument, refused if differentiated


def _shown(text, limit=60):
    text = repr(text)
    return text if len(text) <= limit else text[:limit] + "...'"

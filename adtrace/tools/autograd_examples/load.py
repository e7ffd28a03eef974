"""An example of autograd's sdist loaded as a module: its definitions, not its script.

The examples are scripts: a few run their work at the top level (``tanh.py`` plots and saves
``tanh.png``, ``rosenbrock.py`` runs ``minimize``, ``fixed_points.py`` prints), the others under
``if __name__ == "__main__"``. ``module(name)`` runs an example's imports, function and class
definitions, its registrations of rules and vector spaces, and the assignments of the globals
its functions read (``logistic_regression``'s toy data set, ``convnet``'s ``convolve``); nothing
else of its top level.
"""

import ast
import os
import symtable
import sys
import types
from contextlib import contextmanager

from ..upstream import fetch_sdist

_modules = {}


def examples_folder():
    """``examples/`` of the installed autograd's sdist (fetched and cached on first use)."""
    return fetch_sdist() / "examples"


def module(name):
    """``examples/NAME.py`` as the module ``examples.NAME`` (loaded once)."""
    if name not in _modules:
        source = examples_folder() / f"{name}.py"
        tree = ast.parse(source.read_text(), str(source))
        tree.body = definitions(tree.body)
        loaded = types.ModuleType(f"examples.{name}")
        loaded.__file__ = str(source)
        with _importable(source.parent):
            exec(compile(tree, str(source), "exec"), loaded.__dict__)
        _modules[name] = loaded
    return _modules[name]


def definitions(statements):
    """The top-level statements of a module that define it: imports, functions, classes, rule and
    vector-space registrations (``defvjp(...)``, ``RKHSFunVSpace.register(RKHSFun)``), and the
    assignments of names a function or class reads."""
    kept = [s for s in statements if isinstance(s, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef))
            or _registers(s)]
    read = _globals_read(kept)
    return [s for s in statements if s in kept or isinstance(s, ast.Assign) and any(
        isinstance(target, ast.Name) and target.id in read for target in s.targets)]


def _globals_read(statements):
    """The global names the functions and classes among ``statements`` refer to."""
    tables = symtable.symtable(ast.unparse(ast.Module(statements, type_ignores=[])), "example", "exec").get_children()
    names = set()
    while tables:
        table = tables.pop()
        tables.extend(table.get_children())
        names |= {symbol.get_name() for symbol in table.get_symbols() if symbol.is_global()}
    return names


def _registers(statement):
    """A call of autograd's extension API for its effect: ``defvjp``, ``defjvp``, ``X.register``."""
    if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)):
        return False
    called = statement.value.func
    name = called.id if isinstance(called, ast.Name) else called.attr if isinstance(called, ast.Attribute) else ""
    return name.startswith(("defvjp", "defjvp")) or name == "register"


@contextmanager
def _importable(folder):
    """The examples import one another by top-level name (``from data import make_pinwheel``): the
    folder and the sdist's root are on ``sys.path`` while one loads, and the modules it brings are
    not left in ``sys.modules`` (a user's own ``data`` module stays reachable). Plots never open a
    window (matplotlib's non-interactive backend)."""
    os.environ.setdefault("MPLBACKEND", "Agg")
    paths, before = [str(folder.parent), str(folder)], set(sys.modules)
    sys.path[:0] = paths
    try:
        yield
    finally:
        for path in paths:
            sys.path.remove(path)
        for key in set(sys.modules) - before:
            if str(getattr(sys.modules[key], "__file__", None) or "").startswith(str(folder)):
                del sys.modules[key]

"""Upstream drift: is the installed autograd one whose hooked functions adtrace knows?

A fingerprint is the SHA-256 of a function's canonical AST text: parsed from the module's source
file (never from the live object, which may be adtrace's own wrapper), written out node by node
(class name, then the fields by name, leaving out docstrings, line numbers and the fields a
Python version adds empty, such as 3.12's ``type_params``), so formatting changes (autograd 1.7's
hand formatting against 1.9's ``ruff format``) and the Python that parses the source do not count,
and any change of code does. ``drift_fingerprints.json`` holds the fingerprints of the supported
releases, computed from their wheels by ``.ci/fingerprints.py``.
"""

import ast
import hashlib
import importlib.util
import json
import warnings
from functools import lru_cache
from pathlib import Path

from .hooks import HOOK_POINTS, RELIED_ON

_DATA = Path(__file__).with_name("drift_fingerprints.json")

# (module, qualified name, why adtrace depends on it): the hooked functions where they are defined,
# and those whose behaviour the recorder's bookkeeping assumes (hooks.HOOK_POINTS, hooks.RELIED_ON)
WATCHED = tuple((*p.defined.split(":"), p.reason) for p in HOOK_POINTS) + tuple(
    (*defined.split(":"), reason) for defined, reason in RELIED_ON)


class UnknownAutogradError(RuntimeError):
    """A hooked autograd function differs from every supported release (``strict=True``)."""


class UnknownAutogradWarning(UserWarning):
    """A hooked autograd function differs from every supported release."""


def fingerprint(source, qualname):
    """The canonical-AST fingerprint of ``qualname`` (``"f"`` or ``"Class.method"``) in ``source``."""
    return _fingerprint(ast.parse(source), qualname)


def _fingerprint(tree, qualname):
    node = _find(tree, qualname.split("."))
    if node is None:
        return None
    return hashlib.sha256(canonical(node).encode()).hexdigest()[:16]


def _find(tree, path):
    for child in getattr(tree, "body", ()):
        if isinstance(child, (ast.FunctionDef, ast.ClassDef)) and child.name == path[0]:
            return child if len(path) == 1 else _find(child, path[1:])
    return None


_DOCUMENTED = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def canonical(node):
    """``node`` as text that only its code decides, the same under every Python from 3.10 on.

    ``ast.dump`` is not that: 3.12 adds ``type_params=[]`` to every function and 3.13 leaves out
    empty and ``None`` fields. Here fields come sorted by name, a field that is ``None`` or an empty
    list is left out whatever the version, and a docstring is not code. ``None`` inside a list is
    kept: it holds a position (``kw_defaults`` of a keyword-only argument without default).
    """
    if isinstance(node, list):
        return "[" + ", ".join(canonical(item) for item in node) + "]"
    if not isinstance(node, ast.AST):
        return f"{type(node).__name__}:{node!r}"  # an identifier, a constant's value, None in a list
    fields = []
    for name in sorted(node._fields):
        value = getattr(node, name, None)
        if name == "body" and isinstance(node, _DOCUMENTED):
            value = _without_docstring(value)
        if value is None or (isinstance(value, list) and not value):
            continue
        fields.append(f"{name}={canonical(value)}")
    return f"{type(node).__name__}({', '.join(fields)})"


def _without_docstring(body):
    first = body[0] if body else None
    is_docstring = (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str))
    return body[1:] if is_docstring else body


def fingerprints_of(source_of):
    """``{"module:qualname": fingerprint}`` for every watched function; ``source_of(module)``
    returns a module's source text. Each module is read and parsed once (11 of the 14 are in autograd.core:
    parsing it for each was most of the time of the first ``record()``)."""
    trees = {}
    for module, _, _ in WATCHED:
        if module not in trees:
            trees[module] = ast.parse(source_of(module))
    return {f"{m}:{q}": _fingerprint(trees[m], q) for m, q, _ in WATCHED}


def installed_source(module):
    return Path(importlib.util.find_spec(module).origin).read_text()


def known_releases():
    return json.loads(_DATA.read_text())["releases"]


def installed_version():
    from importlib import metadata  # (here: it is most of the time of importing this module)

    return metadata.version("autograd")


@lru_cache(maxsize=1)
def status():
    """``[(module:qualname, reason, matching releases)]`` for the installed autograd."""
    releases = known_releases()
    rows = []
    for (module, qualname, reason), (key, value) in zip(WATCHED, fingerprints_of(installed_source).items()):
        matches = tuple(v for v, prints in releases.items() if prints.get(key) == value)
        rows.append((key, reason, matches))
    return rows


def check_installed(strict=False):
    """Warn (or raise with ``strict``) for each watched function no supported release has."""
    unknown = [key for key, _, matches in status() if not matches]
    if not unknown:
        return
    message = (f"autograd {installed_version()}: {', '.join(unknown)} differ(s) from the releases "
               f"adtrace knows ({', '.join(known_releases())}); recordings may be wrong")
    if strict:
        raise UnknownAutogradError(message)
    warnings.warn(UnknownAutogradWarning(message), stacklevel=3)

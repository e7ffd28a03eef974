"""Upstream drift: is the installed autograd one whose hooked functions adtrace knows?

A fingerprint is the SHA-256 of a function's normalized AST: parsed from the module's source
file (never from the live object, which may be adtrace's own wrapper), docstrings dropped, dumped
without line numbers, so formatting changes (autograd 1.7's hand formatting against 1.9's
``ruff format``) do not count and any change of code does. ``drift_fingerprints.json`` holds the
fingerprints of the supported releases, computed from their wheels by ``.ci/fingerprints.py``.
"""

import ast
import hashlib
import importlib.util
import json
import warnings
from functools import lru_cache
from importlib import metadata
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
    """The normalized-AST fingerprint of ``qualname`` (``"f"`` or ``"Class.method"``) in ``source``."""
    node = _find(ast.parse(source), qualname.split("."))
    if node is None:
        return None
    _drop_docstrings(node)
    return hashlib.sha256(ast.dump(node, annotate_fields=False).encode()).hexdigest()[:16]


def _find(tree, path):
    for child in getattr(tree, "body", ()):
        if isinstance(child, (ast.FunctionDef, ast.ClassDef)) and child.name == path[0]:
            return child if len(path) == 1 else _find(child, path[1:])
    return None


def _drop_docstrings(tree):
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]


def fingerprints_of(source_of):
    """``{"module:qualname": fingerprint}`` for every watched function; ``source_of(module)``
    returns a module's source text."""
    return {f"{m}:{q}": fingerprint(source_of(m), q) for m, q, _ in WATCHED}


def installed_source(module):
    return Path(importlib.util.find_spec(module).origin).read_text()


def known_releases():
    return json.loads(_DATA.read_text())["releases"]


def installed_version():
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

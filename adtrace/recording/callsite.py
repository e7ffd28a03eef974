"""Where in the user's code something happened, as ``path:line`` relative to a folder (``relative_to``).

Never an absolute path: code outside that folder is named by its module (``module:line``), or, for a
file the user named by its path (a command line's ``../models/f.py:loss``), as the user named it.
"""

import contextlib
import functools
import inspect
import os
import sys
import warnings
from pathlib import Path

import autograd
import numpy

_INSTALLED = frozenset({"site-packages", "dist-packages"})  # where installed packages live

# Frames in these folders are machinery, not the user's code.
_MACHINERY = tuple(str(Path(m.__file__).resolve().parent) + os.sep for m in (autograd, numpy)) + (
    str(Path(__file__).resolve().parents[1]) + os.sep,  # adtrace itself
    contextlib.__file__,  # (an ExitStack or a contextmanager that enters or leaves record() for the user)
)


INPUT = "(input)"  # the site of a value made from an argument of the call, not by a line of the user's code
_NAMED = {}  # absolute path -> how the user named that file (outside the folder: shown so, not by its module)
_CALLERS = set()  # code of adtrace's functions that call the user's function for the user (calls_user_code)
_SHOWN = {}  # a site's file as shown (before ":line") -> its absolute path (source_file)
_USER, _MACHINE, _CALLER = 0, 1, 2
_KINDS = {}  # code object -> _USER, _MACHINE or _CALLER: a frame's kind found once per code object, not per node
_SITES = {}  # (code, line, relative_to, working folder) -> the site shown: one per line of the user's that makes nodes
# (the working folder is still read per site, os.getcwd(): a site is relative to the folder of the moment)


def calls_user_code(function):
    """Mark ``function`` as one that calls the user's function for the user (the command line's traced
    calls): the frames above it (the ``adtrace`` script's) are not the user's code, so what it makes
    before the call (an engine's argument leaves) has no user line: it is an input."""
    _CALLERS.add(function.__code__)
    _KINDS.clear()
    return function


def name_file(path, shown):
    """Show the file ``path``, where it is outside the folder sites are relative to, as ``shown``."""
    _NAMED[os.path.abspath(path)] = shown
    _location.cache_clear()
    _SITES.clear()


def relative_location(path, line, module, relative_to=None):
    """``path:line`` relative to ``relative_to`` (the working directory by default) or ``module:line``
    outside it, and for an installed package wherever it is (a venv inside the project too)."""
    return _location(path, line, module, relative_to, os.getcwd())


@functools.lru_cache(maxsize=4096)  # a site per node: os.path.relpath was most of its cost, and one string per line
def _location(path, line, module, relative_to, cwd):
    relative = os.path.relpath(path, relative_to or cwd) if path else None  # (a relative path is read against cwd)
    if relative is None or relative.startswith("..") or _INSTALLED.intersection(Path(relative).parts):
        shown = (path and _NAMED.get(os.path.abspath(path))) or module or "unknown"
    else:
        shown = relative.replace(os.sep, "/")
    if path:
        full = os.path.normpath(os.path.join(cwd, path))
        if _SHOWN.setdefault(shown, full) != full:
            _SHOWN[shown] = None  # two files shown alike (model.py of two folders): neither is the site's for sure
    return f"{shown}:{line}"


def source_file(site):
    """The absolute path of the file a site (``path:line``) names, as this process made it, or None (also when
    this process showed two files so)."""
    shown = site.rsplit(":", 1)[0]
    if shown in _SHOWN:
        return _SHOWN[shown]
    return os.path.abspath(shown) if os.path.isfile(shown) else None


def source_location(f, relative_to=None):
    """Where a function is defined."""
    try:
        path, line = inspect.getsourcefile(f), inspect.getsourcelines(f)[1]
    except (TypeError, OSError):
        return getattr(f, "__module__", None) or "unknown"
    return relative_location(path, line, getattr(f, "__module__", None), relative_to)


def user_frame(skip=frozenset()):
    """The innermost frame on the stack outside autograd, numpy and adtrace: the user's code
    (``None`` if there is none, or if a function marked ``calls_user_code`` comes first). Frames
    running a code object in ``skip`` are machinery too (an engine's own methods: the user's line is
    the one that called ``a + b``, not ``__add__``)."""
    frame, kinds = sys._getframe(1), _KINDS
    while frame is not None:
        code = frame.f_code
        kind = kinds.get(code)  # (a walk per node: a dict read per frame, not each file name's prefixes)
        if kind is None:
            kind = _kind(code)
        if kind == _USER:
            if code not in skip:
                return frame
        elif kind == _CALLER:
            return None
        frame = frame.f_back
    return None


def _kind(code):
    """Whether frames running ``code`` are the user's, machinery, or a ``calls_user_code`` function's (kept)."""
    filename = code.co_filename
    if code in _CALLERS:
        kind = _CALLER
    elif filename.startswith(_MACHINERY) or filename.startswith("<frozen"):
        kind = _MACHINE
    else:
        kind = _USER
    if len(_KINDS) >= 65536:  # (code made on the fly, by exec: not kept without bound)
        _KINDS.clear()
    _KINDS[code] = kind
    return kind


def user_call_site(relative_to=None, skip=frozenset()):
    """The line of the user's code that called the primitive being recorded, as ``path:line``
    (``None`` if there is none); ``skip`` as for ``user_frame``."""
    frame = user_frame(skip)
    if frame is None:
        return None
    code, line, cwd = frame.f_code, frame.f_lineno, os.getcwd()  # (a site is relative to the folder of the moment)
    site = _SITES.get((code, line, relative_to, cwd))
    if site is None:
        if len(_SITES) >= 4096:
            _SITES.clear()
        site = _SITES[code, line, relative_to, cwd] = _location(code.co_filename, line,
                                                               frame.f_globals.get("__name__"), relative_to, cwd)
    return site


def warn_at_user(warning):
    """Issue ``warning`` at the user's line (the innermost frame outside the machinery)."""
    frame = user_frame()
    if frame is None:
        warnings.warn(warning, stacklevel=2)
        return
    module = frame.f_globals.get("__name__")
    registry = frame.f_globals.setdefault("__warningregistry__", {}) if module in sys.modules else None
    warnings.warn_explicit(warning, type(warning), frame.f_code.co_filename, frame.f_lineno, module=module,
                           registry=registry)


def relative_to_given(relative_to, root, stacklevel=3):
    """``relative_to``, or ``root``: its name before issue 25 (``root`` now names only the input node),
    still accepted with a ``DeprecationWarning``."""
    if root is None:
        return relative_to
    if relative_to is not None:
        raise TypeError("give relative_to= alone (root= is its old name)")
    warnings.warn("root= is now relative_to= (the folder the user's lines are named relative to)",
                  DeprecationWarning, stacklevel=stacklevel)
    return root

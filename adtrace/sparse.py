"""autograd's sparse cotangents (``SparseObject``, the VJP of ``x[index]``) described without
mutating anything: the index and the value they add, read from the closure autograd's ``untake`` /
``container_untake`` built, their vector space, and their dense form in fresh zeros."""

import math

import numpy as np


def _densifiable(vs, limit):
    """Arrays up to ``limit`` elements (any size under ``full``); containers never: densifying one
    costs a copy of every element, and index and value already say everything."""
    return getattr(vs, "dtype", None) is not None and (limit is None or math.prod(vs.shape) <= limit)


def sparse_parts(sparse):
    """``(index, value)`` that a ``SparseObject`` adds, read from the closure autograd's ``untake`` /
    ``container_untake`` built (pinned in tests/test_pinned.py); ``None`` for any other."""
    try:
        cells = _cells(sparse.mut_add)
        if "x" not in cells and "accum" in cells:
            cells = _cells(cells["accum"])
        return cells["idx"], cells["x"]
    except (AttributeError, KeyError, TypeError, ValueError):
        return None


def _cells(function):
    """A closure's free variables by name, for the names sparse_parts reads."""
    closure = function.__closure__ or ()
    positions = _POSITIONS.get(function.__code__)
    if positions is None:  # once per code object: autograd builds these closures from a few functions
        names = function.__code__.co_freevars
        positions = _POSITIONS[function.__code__] = {n: names.index(n) for n in _NAMES if n in names}
    return {name: closure[i].cell_contents for name, i in positions.items()}


_NAMES = ("idx", "x", "accum")
_POSITIONS = {}  # code object -> {free variable name: position in the closure}


def describe_index(index):
    """An index as text: ``1``, ``1:3``, ``(0, :)``, ``[0 2]`` (no memory addresses)."""
    if isinstance(index, tuple):
        return "(" + ", ".join(describe_index(i) for i in index) + ")"
    if isinstance(index, slice):
        parts = ["" if p is None else str(p) for p in (index.start, index.stop, index.step)]
        return ":".join(parts[:2] if index.step is None else parts)
    if isinstance(index, (list, np.ndarray)):
        flat = np.asarray(index).ravel()
        text = " ".join(str(i) for i in flat[:8]) + (" ..." if flat.size > 8 else "")
        return f"[{text}]"
    return str(index)



def densify(sparse):
    """The dense value of a ``SparseObject``: its ``mut_add`` applied to fresh zeros of its space."""
    return sparse.mut_add(sparse.vs.zeros())


def describe_vspace(vs):
    """A vector space without memory addresses, e.g. ``ArrayVSpace(shape=(2,), dtype=float64)``."""
    shape, dtype = getattr(vs, "shape", None), getattr(vs, "dtype", None)
    if dtype is not None:
        key = (type(vs), tuple(shape), dtype)
        text = _SPACES.get(key)
        if text is None:  # str(dtype) is slow, and a run sees few array spaces
            if len(_SPACES) >= 4096:  # a bounded cache
                _SPACES.clear()
            text = _SPACES[key] = f"{type(vs).__name__}(shape={key[1]}, dtype={dtype})"
        return text
    if isinstance(shape, (list, tuple, dict)):  # a container's space: one space per element
        return f"{type(vs).__name__}(len={len(shape)})"
    return type(vs).__name__


_SPACES = {}  # (vspace type, shape, dtype) -> description

"""autograd's sparse cotangents (``SparseObject``, the VJP of ``x[index]``) described without
mutating anything: the index and the value they add, read from the closure autograd's ``untake`` /
``container_untake`` built, their vector space, and their dense form in fresh zeros."""

import math

import numpy as np
from autograd.numpy.numpy_vjps import untake
from autograd.numpy.numpy_vspaces import ArrayVSpace

from ..values import DenseLater


def densifiable(vs, limit):
    """Arrays up to ``limit`` elements (any size under ``full``); containers never: densifying one
    costs a copy of every element, and index and value already say everything."""
    return getattr(vs, "dtype", None) is not None and (limit is None or math.prod(vs.shape) <= limit)


def sparse_parts(sparse):
    """``(index, value)`` that a ``SparseObject`` adds, read from the closure autograd's ``untake`` /
    ``container_untake`` built (pinned in tests/recording/autograd/test_pinned.py); ``None`` for any other."""
    try:
        idx, x, accum = _free_variables(sparse.mut_add)
        if x is _MISSING and accum is not _MISSING:  # container_untake's mut_add wraps an accumulator
            inner_idx, x, _ = _free_variables(accum)
            idx = idx if inner_idx is _MISSING else inner_idx
    except (AttributeError, TypeError, ValueError):
        return None
    return None if idx is _MISSING or x is _MISSING else (idx, x)


_NAMES = ("idx", "x", "accum")  # the free variables sparse_parts reads
_MISSING = object()
_POSITIONS = {}  # code object -> position of each of _NAMES in its closure (None: not a free variable)


def _free_variables(function):
    """The values of ``_NAMES`` in a closure (``_MISSING`` where it has no such variable)."""
    code, closure = function.__code__, function.__closure__ or ()
    positions = _POSITIONS.get(code)
    if positions is None:  # once per code object: autograd builds these closures from a few functions
        names = code.co_freevars
        positions = _POSITIONS[code] = tuple(names.index(n) if n in names else None for n in _NAMES)
    i, j, k = positions  # written out: a generator would be a function built per call
    return (_MISSING if i is None else closure[i].cell_contents, _MISSING if j is None else closure[j].cell_contents,
            _MISSING if k is None else closure[k].cell_contents)


def describe_index(index):
    """An index as text: ``1``, ``1:3``, ``(0, :)``, ``[0 2]`` (no memory addresses). Once per
    sparse value recorded: an int first, and loops rather than generators."""
    if type(index) is int:
        return str(index)
    if isinstance(index, tuple):  # x[:, 0:64] (each step of an LSTM's gates)
        parts = []
        for i in index:
            parts.append(str(i) if type(i) is int else _describe_slice(i) if type(i) is slice else describe_index(i))
        return "(" + ", ".join(parts) + ")"
    if isinstance(index, slice):
        return _describe_slice(index)
    if isinstance(index, (list, np.ndarray)):
        flat = np.asarray(index).ravel()
        text = " ".join(str(i) for i in flat[:8]) + (" ..." if flat.size > 8 else "")
        return f"[{text}]"
    return str(index)


def _describe_slice(index):
    start, stop, step = index.start, index.stop, index.step
    text = ("" if start is None else str(start)) + ":" + ("" if stop is None else str(stop))
    return text if step is None else text + ":" + str(step)


def densify(sparse):
    """The dense value of a ``SparseObject``: its ``mut_add`` applied to fresh zeros of its space. For
    autograd's ``untake`` of a basic index (ints and slices: each element added into once, as
    ``x[:, 0:64]`` of an LSTM's gates) the same additions as its ``np.add.at``, ``0.0 + x`` element by
    element, made by ``zeros[index] += x`` without ``ufunc.at``'s cost per element (270k instructions
    for 2,048 elements)."""
    zeros = sparse.vs.zeros()
    if getattr(sparse.mut_add, "__code__", None) is _UNTAKE_ADD:
        parts = sparse_parts(sparse)
        if parts is not None and type(parts[1]) is np.ndarray and type(zeros) is np.ndarray \
                and parts[1].dtype == zeros.dtype and _basic(parts[0]):
            part = zeros[parts[0]]
            if type(part) is np.ndarray and part.shape == parts[1].shape:
                np.add(part, parts[1], out=part)
                return zeros
    return sparse.mut_add(zeros)


def dense_later(sparse, kept_part):
    """``densify(sparse)`` as a ``DenseLater`` made from ``kept_part`` (the kept value of the array it adds)
    when the event is built, where densify would add it into a view of fresh zeros (untake of a basic index, an
    array's space, the same dtype and shape); else ``None`` (densify now)."""
    parts = _untake_parts(sparse) if type(kept_part) is np.ndarray else None
    if parts is None:
        return None
    (index, part), vs = parts, sparse.vs
    if part.dtype != vs.dtype or getattr(type(vs), "zeros", None) is not ArrayVSpace.zeros:  # (np.zeros of its shape)
        return None
    try:
        at = np.empty(vs.shape, dtype=vs.dtype)[index]  # (the view densify adds into; no page written)
    except (IndexError, TypeError, ValueError):  # (densify raises it)
        return None
    if type(at) is not np.ndarray or at.shape != part.shape or kept_part.shape != at.shape:
        return None
    return DenseLater(vs.shape, vs.dtype, index)


def replayable_part(sparse):
    """The array a ``SparseObject`` adds when it is untake's of a basic index (its ``mut_add`` adds the same
    into any array, and the index cannot change after): a copy-on-write History may add it again; else ``None``."""
    parts = _untake_parts(sparse)
    return None if parts is None else parts[1]


def _untake_parts(sparse):
    """``sparse_parts`` of untake's ``SparseObject`` of a basic index adding an array, else ``None``."""
    if getattr(sparse.mut_add, "__code__", None) is not _UNTAKE_ADD:
        return None
    parts = sparse_parts(sparse)
    if parts is None or type(parts[1]) is not np.ndarray or not _basic(parts[0]):
        return None
    return parts


def _basic(index):
    """An index of ints and slices alone (no arrays, lists, booleans, None or Ellipsis)."""
    if type(index) is tuple:
        return all(type(i) is int or type(i) is slice for i in index)
    return type(index) is int or type(index) is slice


# the code of untake's mut_add (autograd.numpy.numpy_vjps: onp.add.at(A, idx, x)), which densify knows
_UNTAKE_ADD = next((c for c in getattr(untake, "fun", untake).__code__.co_consts
                    if getattr(c, "co_name", None) == "mut_add"), None)  # (untake is a primitive: .fun is its own)


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

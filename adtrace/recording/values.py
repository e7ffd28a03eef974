"""Captured values: what an event holds in place of a live value, for every engine.

Exact values (scalars, arrays, containers) or, where the capture level keeps less, an
``ArraySummary`` (shape, dtype, min, max, mean) or a ``ContainerSummary``; a ``Sparse``
cotangent described by its index and value; a ``Boxed`` value of an outer trace. How an engine's
live values become these is its own (``recording/autograd/capture.py``).

Stored forms: in the event log a ``Boxed``, ``Sparse``, ``ArraySummary`` or ``ContainerSummary``
may be a plain tuple headed by its tag (``BOXED``, ``SPARSE``, ``ARRAY_SUMMARY``,
``CONTAINER_SUMMARY``), and an array autograd will write into a ``Version`` (copy-on-write);
``resolve`` builds what the event shows when it is read.
"""

import dataclasses
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

CAPTURE_LEVELS = ("auto", "full", "structure")
DEFAULT_INLINE_SIZE = 64
# values kept as they are (immutable); hot callers test this themselves before calling a Capture
SCALARS = frozenset({float, int, complex, bool, type(None), str, np.float64, np.float32, np.complex128})

# The tags of the stored forms: strings made at run time, so no value a program holds is one of
# these objects (they are told apart by identity, never by equality).
BOXED, SPARSE, ARRAY_SUMMARY, CONTAINER_SUMMARY = ("".join(("<adtrace ", name, ">"))
                                                   for name in ("Boxed", "Sparse", "ArraySummary", "ContainerSummary"))


@dataclass(frozen=True, slots=True)
class ArraySummary:
    """An array too large to keep under ``capture="auto"``."""

    shape: tuple
    dtype: str
    min: float
    max: float
    mean: float


@dataclass(frozen=True, slots=True)
class ContainerSummary:
    """A list, tuple or dict holding more than the inline size under ``capture="auto"``."""

    type: str
    length: int


@dataclass(frozen=True, slots=True)
class Boxed:
    """A value boxed by the trace ``level`` (an outer trace under higher-order differentiation)."""

    value: Any
    level: int


@dataclass(frozen=True, slots=True)
class Sparse:
    """A ``SparseObject`` cotangent (the VJP of ``x[index]``): the space it adds into, the index
    and the value it adds there, and its dense equivalent (``None`` for containers, and for arrays
    above the inline size under ``capture="auto"``: densifying costs a copy of the whole space)."""

    vspace: str
    index: Optional[str]  # None when autograd built the SparseObject in a way adtrace does not know
    value: Any
    dense: Any


class Version:
    """One state of an array autograd accumulates into (``adtrace.history``): the live array until
    autograd is about to write into it, a copy of it from then on. Snapshots in the event log
    hold Versions; built events hold arrays."""

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array


# snapshot types that never hold a live array: hot callers test this before holds_reference
NO_REFERENCE = SCALARS | {ArraySummary, ContainerSummary}


def built(stored, inner):
    """The ``Boxed``, ``Sparse``, ``ArraySummary`` or ``ContainerSummary`` a stored form stands for,
    with ``inner(part)`` for the snapshot a Boxed or Sparse holds; ``None`` for any other tuple."""
    tag = stored[0]
    if tag is BOXED:
        return Boxed(inner(stored[1]), stored[2])
    if tag is SPARSE:
        return Sparse(stored[1], stored[2], inner(stored[3]), stored[4])
    if tag is ARRAY_SUMMARY:
        return ArraySummary(*stored[1:])
    if tag is CONTAINER_SUMMARY:
        return ContainerSummary(*stored[1:])
    return None


def summarize(array):
    """Shape, dtype and a few statistics of an array (NaN-aware, complex reduced to magnitudes)."""
    return ArraySummary(*stored_summary(array)[1:])


def stored_summary(array):
    """``summarize`` in its stored form. Straight ufunc reductions, bound once, positional
    arguments: this runs once per large value recorded, on the hot path."""
    if array.dtype is _FLOAT64 and array.size:  # the common case: sums as itself (no cast: the same bits, sooner)
        return (ARRAY_SUMMARY, array.shape, "float64", *_statistics(array, None))
    data = np.abs(array) if array.dtype.kind == "c" else array
    if data.size == 0 or data.dtype.kind not in "biuf":
        return (ARRAY_SUMMARY, array.shape, _dtype_name(array.dtype), *(float("nan"),) * 3)
    return (ARRAY_SUMMARY, array.shape, _dtype_name(array.dtype), *_statistics(data, np.float64))


def _statistics(data, dtype):
    """Min, max and mean of a non-empty real array, its sum taken in ``dtype``."""
    low, high = float(_MINIMUM(data, None)), float(_MAXIMUM(data, None))
    if max(-low, high) * data.size < 1e300:  # finite and no overflow: the sum cannot warn
        return low, high, float(_ADD(data, None, dtype)) / data.size
    with np.errstate(all="ignore"):
        return low, high, float(_ADD(data, None, dtype)) / data.size


_MINIMUM, _MAXIMUM, _ADD = np.minimum.reduce, np.maximum.reduce, np.add.reduce
_FLOAT64 = np.dtype(np.float64)
_DTYPE_NAMES = {}


def _dtype_name(dtype):
    name = _DTYPE_NAMES.get(dtype)
    if name is None:
        name = _DTYPE_NAMES[dtype] = str(dtype)  # str(dtype) is slow; a run sees few dtypes
    return name


def snapshot_arrays(snapshot):
    """Every array a snapshot (or a whole event) holds, through containers, boxes and sparse values:
    what a recording keeps alive."""
    if dataclasses.is_dataclass(snapshot) and not isinstance(snapshot, (Boxed, Sparse, ArraySummary, ContainerSummary)):
        for f in dataclasses.fields(snapshot):  # an event
            yield from snapshot_arrays(getattr(snapshot, f.name))
    elif type(snapshot) is np.ndarray:
        yield snapshot
    elif type(snapshot) is Boxed:
        yield from snapshot_arrays(snapshot.value)
    elif type(snapshot) is Sparse:
        yield from snapshot_arrays(snapshot.value)
        yield from snapshot_arrays(snapshot.dense)
    elif isinstance(snapshot, (tuple, list)):
        for item in snapshot:
            yield from snapshot_arrays(item)
    elif isinstance(snapshot, dict):
        for item in snapshot.values():
            yield from snapshot_arrays(item)


def holds_reference(snapshot):
    """True when a snapshot shares memory with a live array (so it needs copy-on-write)."""
    kind = type(snapshot)
    while kind is Boxed:  # (values of an outer trace, under higher order)
        snapshot = snapshot.value
        kind = type(snapshot)
    if kind in NO_REFERENCE:
        return False
    if kind is np.ndarray or kind is Version:
        return True
    if isinstance(snapshot, (list, tuple)):
        return any(holds_reference(v) for v in snapshot)
    if isinstance(snapshot, dict):
        return any(holds_reference(v) for v in snapshot.values())
    return False


def plain(snapshot):
    """A snapshot with ``Boxed`` wrappers removed and ``Sparse`` replaced by its dense value."""
    if type(snapshot) is Boxed:
        return plain(snapshot.value)
    if type(snapshot) is Sparse:
        return plain(snapshot.dense)
    if isinstance(snapshot, tuple) and not hasattr(snapshot, "_fields"):
        return tuple(plain(v) for v in snapshot)
    if isinstance(snapshot, list):
        return [plain(v) for v in snapshot]
    if isinstance(snapshot, dict):
        return {k: plain(v) for k, v in snapshot.items()}
    return snapshot


def resolve(snapshot):
    """A snapshot as its event shows it (when the event is built): Versions replaced by the arrays
    they hold, stored forms by their dataclasses (adtrace.values)."""
    kind = type(snapshot)
    if kind is Version:
        return snapshot.array
    if kind is tuple or kind is list or kind is dict or kind is Boxed or isinstance(snapshot, tuple):  # (namedtuples)
        return map_arrays(snapshot, None)
    return snapshot


def map_arrays(snapshot, change):
    """``snapshot`` with ``change(array)`` for each array in it (``None``: Versions resolved);
    the same object when nothing changed."""
    kind = type(snapshot)
    if kind is Version:
        return snapshot.array if change is None else snapshot
    if kind is np.ndarray:
        return snapshot if change is None else change(snapshot)
    if kind is Boxed:
        inner = map_arrays(snapshot.value, change)
        return snapshot if inner is snapshot.value else Boxed(inner, snapshot.level)
    if kind is Sparse:
        value = map_arrays(snapshot.value, change)
        return snapshot if value is snapshot.value else dataclasses.replace(snapshot, value=value)
    if kind is tuple and snapshot and type(snapshot[0]) is str and change is None:  # a stored form (capture auto)?
        stored = built(snapshot, resolve)
        if stored is not None:
            return stored
    if isinstance(snapshot, (tuple, list)):
        items = [map_arrays(s, change) for s in snapshot]
        if all(a is b for a, b in zip(items, snapshot)):
            return snapshot
        return tuple.__new__(kind, items) if hasattr(snapshot, "_fields") else kind(items)  # (no __new__ of theirs run)
    if isinstance(snapshot, dict):
        items = {k: map_arrays(v, change) for k, v in snapshot.items()}
        return snapshot if all(items[k] is snapshot[k] for k in snapshot) else items
    return snapshot


def capture_options(level, inline_size):
    """``(level, inline_size)`` checked: a capture level and a non-negative element count."""
    if level not in CAPTURE_LEVELS:
        raise ValueError(f"capture must be one of {', '.join(CAPTURE_LEVELS)}; got {level!r}")
    if not isinstance(inline_size, int) or isinstance(inline_size, bool) or inline_size < 0:
        raise ValueError(f"inline_size must be a non-negative int; got {inline_size!r}")
    return level, inline_size

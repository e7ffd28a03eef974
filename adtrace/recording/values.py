"""Value snapshots: what an event keeps of a value, under a capture level.

Capture levels:

- ``auto`` (default): scalars, arrays and containers of at most ``inline_size`` elements exactly;
  larger arrays as an ``ArraySummary`` (shape, dtype, min, max, mean), larger containers as a
  ``ContainerSummary`` and larger sparse cotangents described only, so a recording of a large
  model retains no intermediate array and costs no copy of a whole parameter list per event;
- ``full``: every value exactly;
- ``structure``: no values at all (``None``), only the graph and the order of events.

Under ``auto`` an exact array is a copy: at most ``inline_size`` elements, cheaper than keeping
the live array true (``reports/benchmarks.md``, autograd's own test suite). Under ``full`` it is
kept by reference, not copied: autograd writes in place only into an ``outgrads`` entry flagged
mutable, and the recorder copies such a value just before autograd mutates it (copy-on-write,
``adtrace.history``). Views are copied at once, because they share memory with arrays autograd
does not own (``x.T`` of the user's input). Sparse cotangents (``SparseObject``, from ``x[i]``)
are densified into fresh zeros, which mutates nothing else; values boxed by an outer trace
(under ``grad(grad(f))``) become ``Boxed(value, level)``.

Stored forms: under ``auto`` a ``Capture`` returns each ``Boxed``, ``Sparse``, ``ArraySummary`` and
``ContainerSummary`` as a plain tuple headed by its tag (``BOXED``, ``SPARSE``, ``ARRAY_SUMMARY``,
``CONTAINER_SUMMARY``), built into the dataclass when its event is built
(``adtrace.history.resolve``). Python's garbage collector stops tracking a tuple of arrays, numbers
and strings at its first collection, and tracks a dataclass instance for as long as it lives: on
autograd's own suite with ``--adtrace``, collections took 0.84 s more than without, about 0.5 s of
it for those instances.
"""

import dataclasses
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
from autograd.core import SparseObject
from autograd.tracer import box_types, getval

from .autograd.sparse import _densifiable, densify, describe_index, describe_vspace, sparse_parts

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


class Capture:
    """Turns live values into snapshots for one capture level."""

    def __init__(self, level="auto", inline_size=DEFAULT_INLINE_SIZE, box_level=None):
        if level not in CAPTURE_LEVELS:
            raise ValueError(f"capture must be one of {', '.join(CAPTURE_LEVELS)}; got {level!r}")
        if not isinstance(inline_size, int) or inline_size < 0:
            raise ValueError(f"inline_size must be a non-negative int; got {inline_size!r}")
        self.level = level
        self.keeps_values = level != "structure"
        # "full" keeps arrays by reference (adtrace.history keeps them true); "auto" copies the
        # small arrays it keeps exactly: cheaper than following references it would have to correct
        self.by_reference = level == "full"
        self.stored = level == "auto"  # snapshots in their stored forms (see the module's docstring)
        self._protected = {}  # id(array) -> count: the user's arrays (seeds), copied wherever seen
        self.limit = None if level == "full" else inline_size
        # a box's level; the recorder sets it to the level of the box's node
        self.box_level = box_level or (lambda box: box._trace)

    def __call__(self, value, copy=False):
        """The snapshot of ``value``; ``copy=True`` copies arrays that would be kept by reference."""
        if not self.keeps_values:
            return None
        t = type(value)
        if t is np.ndarray:
            if self.limit is not None:
                return _summary(value) if value.size > self.limit else value.copy()
            return value.copy() if copy or value.base is not None or id(value) in self._protected else value
        if t in SCALARS:
            return value
        if (t is tuple or t is list) and self.limit is not None:  # most often flat: arrays and scalars
            flat = _flat_copy(value, self.limit)
            if flat is not None:
                return flat
        if t in box_types:
            inner = value._value
            if type(inner) is np.ndarray and self.limit is not None:  # (the common case, written out)
                inner = _summary(inner) if inner.size > self.limit else inner.copy()
            elif type(inner) not in SCALARS:  # (a scalar of an outer trace, under grad(grad(f)), is kept as it is)
                inner = self(inner, copy)
            return (BOXED, inner, self.box_level(value)) if self.stored else Boxed(inner, self.box_level(value))
        if isinstance(value, SparseObject):
            parts = sparse_parts(value)
            index, part = (describe_index(parts[0]), self(parts[1], copy)) if parts else (None, None)
            dense = densify(value) if _densifiable(value.vs, self.limit) else None  # fresh zeros: ours
            if self.stored:
                return SPARSE, describe_vspace(value.vs), index, part, dense
            return Sparse(describe_vspace(value.vs), index, part, dense)
        if isinstance(value, (tuple, list, dict)):
            limit = self.limit
            if limit is not None:
                try:  # nested, boxed or other parts: sized and copied in one walk
                    return self._part(value, [limit])
                except _OverTheLimit:
                    return CONTAINER_SUMMARY, type(value).__name__, len(value)
            return self._container(value, copy)
        if isinstance(value, np.ndarray):  # a subclass (np.matrix, a masked array): copied at once
            return _summary(np.asarray(value)) if self.limit is not None and value.size > self.limit else value.copy()
        return value  # numpy scalars and other immutable objects

    def _part(self, value, left):
        """Capture ``auto`` of a container or one of its parts, counting its elements (an array's
        size, a scalar's or any other value's 1, through boxes and containers) off ``left[0]``;
        raises ``_OverTheLimit`` past the inline size, before copying the array that passes it."""
        t = type(value)
        if t is np.ndarray or t in SCALARS:
            left[0] -= value.size if t is np.ndarray else 1
            if left[0] < 0:
                raise _OverTheLimit
            return value.copy() if t is np.ndarray else value
        if t in box_types:
            return BOXED, self._part(value._value, left), self.box_level(value)
        if isinstance(value, (tuple, list)):
            items = []  # a loop, not a comprehension: no function built per call
            for v in value:
                items.append(self._part(v, left))
            if t is tuple:
                return tuple(items)
            if isinstance(value, list):  # (a list's subclass too: a list)
                return items
            return tuple.__new__(t, items) if hasattr(value, "_fields") else tuple(items)  # (no __new__ of theirs run)
        if isinstance(value, dict):
            items = {}
            for k, v in value.items():
                items[k] = self._part(v, left)
            return items
        left[0] -= value.size if isinstance(value, np.ndarray) else 1  # sparse values, numpy scalars...
        if left[0] < 0:
            raise _OverTheLimit
        return self(value)

    def _container(self, value, copy):
        """A tuple, list or dict, item by item (apart from __call__: its comprehensions would make
        every call's locals cells)."""
        if isinstance(value, tuple):
            items = [self(v, copy) for v in value]
            return tuple(items) if type(value) is tuple or not hasattr(value, "_fields") else tuple.__new__(type(value), items)
        if isinstance(value, list):
            return [self(v, copy) for v in value]
        return {k: self(v, copy) for k, v in value.items()}

    def protect(self, value):
        """The arrays of ``value`` (a seed the user owns and may change) are copied wherever a
        snapshot would hold them by reference, until ``unprotect(value)``."""
        for array in array_leaves(value):
            self._protected[id(array)] = self._protected.get(id(array), 0) + 1

    def unprotect(self, value):
        for array in array_leaves(value):
            count = self._protected.pop(id(array), 0) - 1
            if count > 0:
                self._protected[id(array)] = count


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


def is_immutable(value):
    """A scalar, or a scalar boxed by an outer trace: nothing can write into it."""
    while type(value) in box_types:
        value = value._value
    return type(value) in SCALARS


def is_part_of(value, args):
    """Whether ``value`` is one of ``args``, or an element of a tuple, list or dict among them
    (``t[0]`` of the user's tuple ``t``)."""
    for arg in args:
        if arg is value:
            return True
        kind = type(arg)
        if (kind is tuple or kind is list) and any(item is value for item in arg):
            return True
        if kind is dict and any(item is value for item in arg.values()):
            return True
    return False


class _OverTheLimit(Exception):
    """A container holds more than the inline size (``Capture._part``)."""


def _flat_copy(value, limit):
    """The ``auto`` snapshot of a plain tuple or list of arrays and scalars: copies of its arrays,
    or a ``ContainerSummary`` (stored form) above ``limit`` elements; ``None`` when it holds anything else
    (boxes, containers, sparse values: ``Capture`` walks those)."""
    left = limit
    items = []  # a loop, not a comprehension: that would be a function built and called per call
    for v in value:  # one pass: each array sized before it is copied
        kind = type(v)
        if kind is np.ndarray:
            left -= v.size
            if left < 0:  # (any walk of the rest only counts more)
                return CONTAINER_SUMMARY, type(value).__name__, len(value)
            items.append(v.copy())
        elif kind in SCALARS:
            left -= 1
            if left < 0:
                return CONTAINER_SUMMARY, type(value).__name__, len(value)
            items.append(v)
        else:
            return None
    return tuple(items) if type(value) is tuple else items


def summarize(array):
    """Shape, dtype and a few statistics of an array (NaN-aware, complex reduced to magnitudes)."""
    return ArraySummary(*_summary(array)[1:])


def _summary(array):
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


def array_leaves(value):
    """The ndarrays a live value holds (through boxes and containers): what an in-place add writes."""
    value = getval(value)
    if type(value) is np.ndarray:
        return [value]
    if isinstance(value, (list, tuple)):
        return [a for v in value for a in array_leaves(v)]
    if isinstance(value, dict):
        return [a for v in value.values() for a in array_leaves(v)]
    return []


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

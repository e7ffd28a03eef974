"""Kept values: what an event holds in place of a live value, for every engine.

Exact values (scalars, arrays, containers) or, where the capture level keeps less, an
``ArraySummary`` (shape, dtype, min, max, mean) or a ``ContainerSummary``; a ``Sparse``
cotangent described by its index and value; a ``Boxed`` value of an outer trace. How an engine's
live values become these is its own (``recording/autograd/capture.py``).

Stored forms: in the event log a ``Boxed``, ``Sparse``, ``ArraySummary`` or ``ContainerSummary``
may be a plain tuple headed by its tag (``BOXED``, ``SPARSE``, ``ARRAY_SUMMARY``,
``CONTAINER_SUMMARY``), an array autograd will write into a ``Version`` (copy-on-write), and a
``Sparse``'s dense value a ``DenseLater``; ``resolve`` builds what the event shows when it is read.
"""

import dataclasses
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from . import compiled

CAPTURE_LEVELS = ("auto", "full", "structure")
DEFAULT_INLINE_SIZE = 64
# values kept as they are (immutable); hot callers test this themselves before calling a Keeper
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
    """A list, tuple or dict holding more than the inline size under ``capture="auto"``: its type
    and length, and each leaf (an array or number inside it, through nested containers) as its
    path and ``ArraySummary``, the first ``MAX_LEAVES`` of them (``more``: how many were left out)."""

    type: str
    length: int
    leaves: tuple = ()  # ((path, ArraySummary), ...), paths as in the program: "[0][1]", "['W']"
    more: int = 0


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


class DenseLater:
    """A ``Sparse``'s dense value under ``capture="full"``, made when its event is built rather than when it is
    recorded: zeros of ``shape`` and ``dtype`` with the ``Sparse``'s own kept value added at ``index`` (ints and
    slices: each element added into once, ``0.0 + x``, the additions autograd's ``untake`` makes). Densifying every
    ``x[i]`` cotangent of an LSTM's gates at once cost a fresh zeros of the whole space each (about 0.25x of the
    recorded run). autograd never writes into the value it is made from (a cotangent a VJP received); a user's rule
    that does shows under ``full`` in every field holding it, this one too (``copy_on_write.py``).

    Made once per kept value (the events sharing a ``Sparse``, a VJP's ingrad and the accumulation of it, share its
    dense array, as when it was made at once); made again from another value (copy-on-write's copy of it)."""

    __slots__ = ("shape", "dtype", "index", "_from", "_made")

    def __init__(self, shape, dtype, index):
        self.shape, self.dtype, self.index = shape, dtype, index
        self._from = self._made = None

    def made(self, part):
        if self._from is not part:
            dense = np.zeros(self.shape, dtype=self.dtype)
            at = dense[self.index]
            np.add(at, part, out=at)
            self._from, self._made = part, dense
        return self._made


class Version:
    """One state of an array autograd accumulates into (``recording/autograd/copy_on_write.py``): the live array until
    autograd is about to write into it, a copy of it from then on. Kept values in the event log
    hold Versions; built events hold arrays."""

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def made(self):
        """Its array (a ``History``'s Version: made with the others of its History when first read)."""
        array = self.array
        if type(array) is History:
            array.make()
            array = self.array
        return array


class History:
    """The states of one array autograd adds into in place (capture ``full``), kept as a copy of the first
    (``start``) and the contributions added since (``steps``): ``x += g`` for an array ``g`` (``vs.mut_add``),
    ``g.mut_add(x)`` for ``x[i]``'s sparse ``g`` of a basic index (untake's ``np.add.at``). ``versions[k]`` holds
    the state before ``steps[k]`` (its ``array`` is this History until made). Made when one is first read: each
    state a copy of the one before with its step added, the same additions autograd made into the live array, so
    the same bits. The steps are cotangents autograd never writes into (copy_on_write.py); keeping them, not a
    copy of the accumulator before each write, saves a copy of the whole array per contribution (a weight's
    gradient, added into once per step of a recurrence)."""

    __slots__ = ("start", "steps", "versions")

    def __init__(self, start):
        self.start, self.steps, self.versions = start, [], []

    def make(self):
        """Every Version its array; the History holds nothing after (made once)."""
        versions, steps, state = self.versions, self.steps, self.start
        if state is None:
            return
        last = len(versions) - 1
        for k, version in enumerate(versions):  # (start is never written: a copy is added into)
            version.array = state
            if k < last:
                state = state.copy()
                step = steps[k]
                if type(step) is np.ndarray:
                    state += step  # (vs.mut_add: x += y)
                else:
                    step.mut_add(state)  # (untake's np.add.at, in place)
        self.start = self.steps = None  # (after: a copy that raised leaves it whole, made again when read)
        self.versions = ()


# kept value types that never hold a live array: hot callers test this before holds_reference
NO_REFERENCE = SCALARS | {ArraySummary, ContainerSummary}


def built(stored, inner):
    """The ``Boxed``, ``Sparse``, ``ArraySummary`` or ``ContainerSummary`` a stored form stands for,
    with ``inner(part)`` for the kept value a Boxed or Sparse holds; ``None`` for any other tuple."""
    tag = stored[0]
    if tag is BOXED:
        return Boxed(inner(stored[1]), stored[2])
    if tag is SPARSE:
        return Sparse(stored[1], stored[2], inner(stored[3]), stored[4])
    if tag is ARRAY_SUMMARY:
        return ArraySummary(*stored[1:])
    if tag is CONTAINER_SUMMARY:
        kind, length, leaves, more = stored[1:]
        return ContainerSummary(kind, length, tuple((path, ArraySummary(*leaf[1:])) for path, leaf in leaves), more)
    return None


MAX_LEAVES = 64  # leaves summarized per container (each costs three reductions)


def leaf_paths(value, unwrap=None, path=""):
    """``(path, leaf)`` for each leaf of a container, depth first, named as the program would index
    it (``[0][1]``, ``['W']``); ``unwrap`` takes an engine's wrapper off a value (autograd's boxes)."""
    if unwrap is not None:
        value = unwrap(value)
    if isinstance(value, (tuple, list)):
        for i, item in enumerate(value):
            yield from leaf_paths(item, unwrap, f"{path}[{i}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            name = repr(key) if type(key) in (str, int) else f"<{type(key).__name__}>"  # (no repr with an address)
            yield from leaf_paths(item, unwrap, f"{path}[{name}]")
    else:
        yield path, value


def summarize(array):
    """Shape, dtype and a few statistics of an array (NaN-aware, complex reduced to magnitudes)."""
    return ArraySummary(*stored_summary(array)[1:])


def stored_summary(array):
    """``summarize`` in its stored form (once per large value recorded: the hot path)."""
    if _twin is not None and type(array) is np.ndarray:  # the common case, a float64 array, in one call: one loop
        # over its buffer (None: another dtype, more than _PAIRWISE_MAX elements, or a case this code decides; a
        # subclass's buffer is not its values: a masked array's masked ones)
        stored = _twin.float64_summary(array, ARRAY_SUMMARY)
        if stored is not None:
            return stored
    return own_summary(array)


def own_summary(array):
    """``stored_summary`` by this module's own code (every case the twin hands back, and without it)."""
    if array.dtype is _FLOAT64 and array.size:  # sums as itself (no cast: the same bits, sooner)
        if array.size > _ARG_EXTREMES:
            return (ARRAY_SUMMARY, array.shape, "float64", *_statistics(array, None))
        return (ARRAY_SUMMARY, array.shape, "float64", *_float64_statistics(array))
    data = np.abs(array) if array.dtype.kind == "c" else array
    if data.size == 0 or data.dtype.kind not in "biuf":
        return (ARRAY_SUMMARY, array.shape, _dtype_name(array.dtype), *(float("nan"),) * 3)
    return (ARRAY_SUMMARY, array.shape, _dtype_name(array.dtype), *_statistics(data, np.float64))


# up to this size argmin / argmax cost less than the reductions (fewer set-up instructions, more per element:
# callgrind, 2,048 elements: 7.2k against 10.3k; 8,192: 18.0k against 16.4k)
_ARG_EXTREMES = 4096


def _float64_statistics(array):
    """``_statistics`` of a non-empty float64 array of at most ``_ARG_EXTREMES`` elements, its extremes
    found by ``argmin`` / ``argmax`` (no reduction's set-up). The element found has the extreme's own bits,
    unless it is a zero (0.0 and -0.0 compare equal: which one a reduction keeps depends on its
    order) or NaN (which NaN): those take the reductions."""
    low, high = array.item(array.argmin()), array.item(array.argmax())
    if not low or not high or low != low:
        return _statistics(array, None)
    if max(-low, high) * array.size < 1e300:  # finite and no overflow: the sum cannot warn
        return low, high, float(np.add.reduce(array, None, None)) / array.size
    with np.errstate(all="ignore"):
        return low, high, float(np.add.reduce(array, None, None)) / array.size


def _statistics(data, dtype):
    """Min, max and mean of a non-empty real array, its sum taken in ``dtype``."""
    low, high = float(np.minimum.reduce(data, None)), float(np.maximum.reduce(data, None))
    if max(-low, high) * data.size < 1e300:  # finite and no overflow: the sum cannot warn
        return low, high, float(np.add.reduce(data, None, dtype)) / data.size
    with np.errstate(all="ignore"):
        return low, high, float(np.add.reduce(data, None, dtype)) / data.size


_FLOAT64 = np.dtype(np.float64)
_DTYPE_NAMES = {}
# the compiled twin (_values.c): _float64_statistics in one loop over a buffer, the same bits
_twin = compiled.twin("adtrace.recording._values")
_PAIRWISE_MAX = 8192  # the twin's PAIRWISE_MAX: numpy's buffer size, the most it sums in one pairwise loop


def _dtype_name(dtype):
    name = _DTYPE_NAMES.get(dtype)
    if name is None:
        name = _DTYPE_NAMES[dtype] = str(dtype)  # str(dtype) is slow; a run sees few dtypes
    return name


def kept_arrays(kept):
    """Every array a kept value (or a whole event) holds, through containers, boxes and sparse values:
    what a recording keeps alive."""
    if dataclasses.is_dataclass(kept) and not isinstance(kept, (Boxed, Sparse, ArraySummary, ContainerSummary)):
        for f in dataclasses.fields(kept):  # an event
            yield from kept_arrays(getattr(kept, f.name))
    elif type(kept) is np.ndarray:
        yield kept
    elif type(kept) is Boxed:
        yield from kept_arrays(kept.value)
    elif type(kept) is Sparse:
        yield from kept_arrays(kept.value)
        yield from kept_arrays(kept.dense)
    elif isinstance(kept, (tuple, list)):
        for item in kept:
            yield from kept_arrays(item)
    elif isinstance(kept, dict):
        for item in kept.values():
            yield from kept_arrays(item)


def holds_reference(kept):
    """True when a kept value shares memory with a live array (so it needs copy-on-write)."""
    kind = type(kept)
    while kind is Boxed:  # (values of an outer trace, under higher order)
        kept = kept.value
        kind = type(kept)
    if kind in NO_REFERENCE:
        return False
    if kind is np.ndarray or kind is Version:
        return True
    if isinstance(kept, (list, tuple)):
        return any(holds_reference(v) for v in kept)
    if isinstance(kept, dict):
        return any(holds_reference(v) for v in kept.values())
    return False


def plain(kept):
    """A kept value with ``Boxed`` wrappers removed and ``Sparse`` replaced by its dense value."""
    if type(kept) is Boxed:
        return plain(kept.value)
    if type(kept) is Sparse:
        return plain(kept.dense)
    if isinstance(kept, tuple) and not hasattr(kept, "_fields"):
        return tuple(plain(v) for v in kept)
    if isinstance(kept, list):
        return [plain(v) for v in kept]
    if isinstance(kept, dict):
        return {k: plain(v) for k, v in kept.items()}
    return kept


def resolve(kept):
    """A kept value as its event shows it (when the event is built): Versions replaced by the arrays
    they hold, stored forms by their dataclasses (above)."""
    kind = type(kept)
    if kind is Version:
        return kept.made()
    if kind is tuple or kind is list or kind is dict or kind is Boxed or kind is Sparse or isinstance(kept, tuple):
        return map_arrays(kept, None)  # (isinstance: namedtuples)
    return kept


def map_arrays(kept, change):
    """``kept value`` with ``change(array)`` for each array in it (``None``: Versions resolved);
    the same object when nothing changed."""
    kind = type(kept)
    if kind is Version:
        return kept.made() if change is None else kept
    if kind is np.ndarray:
        return kept if change is None else change(kept)
    if kind is Boxed:
        inner = map_arrays(kept.value, change)
        return kept if inner is kept.value else Boxed(inner, kept.level)
    if kind is Sparse:
        value = map_arrays(kept.value, change)
        if change is None and type(kept.dense) is DenseLater:  # (resolved: made from the value it adds)
            return Sparse(kept.vspace, kept.index, value, kept.dense.made(value))
        return kept if value is kept.value else dataclasses.replace(kept, value=value)
    if kind is tuple and kept and type(kept[0]) is str and change is None:  # a stored form (capture auto)?
        stored = built(kept, resolve)
        if stored is not None:
            return stored
    if isinstance(kept, (tuple, list)):
        items = [map_arrays(s, change) for s in kept]
        if all(a is b for a, b in zip(items, kept)):
            return kept
        return tuple.__new__(kind, items) if hasattr(kept, "_fields") else kind(items)  # (no __new__ of theirs run)
    if isinstance(kept, dict):
        items = {k: map_arrays(v, change) for k, v in kept.items()}
        return kept if all(items[k] is kept[k] for k in kept) else items
    return kept


def capture_options(capture, inline_size):
    """``(capture, inline_size)`` checked: a capture level and a non-negative element count."""
    if capture not in CAPTURE_LEVELS:
        raise ValueError(f"capture must be one of {', '.join(CAPTURE_LEVELS)}; got {capture!r}")
    if not isinstance(inline_size, int) or isinstance(inline_size, bool) or inline_size < 0:
        raise ValueError(f"inline_size must be a non-negative int; got {inline_size!r}")
    return capture, inline_size

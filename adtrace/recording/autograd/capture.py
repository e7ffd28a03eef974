"""Capture levels: what an event keeps of a live autograd value (boxes, sparse cotangents,
containers, arrays), as the values of ``recording/values.py``.

- ``auto`` (default): scalars, arrays and containers of at most ``inline_size`` elements exactly;
  larger arrays as an ``ArraySummary``, larger containers as a ``ContainerSummary`` and larger
  sparse cotangents described only, so a recording of a large model retains no intermediate array;
- ``full``: every value exactly;
- ``structure``: no values at all (``None``), only the graph and the order of events.

Under ``auto`` an exact array is a copy: at most ``inline_size`` elements, cheaper than keeping the
live array true. Under ``full`` it is kept by reference, not copied: autograd writes in place only
into an ``outgrads`` entry flagged mutable, and the recorder copies such a value just before
autograd mutates it (``copy_on_write.py``). Views are copied at once, because they share memory
with arrays autograd does not own (``x.T`` of the user's input), unless nothing else holds their base. Sparse cotangents
(``SparseObject``, from ``x[i]``) are densified into fresh zeros, which mutates nothing else (under ``full``, an
array's basic index, when the event is built: ``values.DenseLater``);
values boxed by an outer trace (under ``grad(grad(f))``) become ``Boxed(value, level)``.

Under ``auto`` a ``Keeper`` returns ``Boxed``, ``Sparse``, ``ArraySummary`` and
``ContainerSummary`` in their stored forms (plain tagged tuples, ``values.built``): Python's
garbage collector stops tracking such a tuple at its first collection, and would track a
dataclass instance for as long as it lives.
"""

import sys

import numpy as np
from autograd.core import SparseObject
from autograd.tracer import box_types, getval

from .. import values
from ..values import (ARRAY_SUMMARY, BOXED, CONTAINER_SUMMARY, DEFAULT_INLINE_SIZE, MAX_LEAVES, SCALARS, SPARSE,
                      Boxed, Sparse, capture_options, leaf_paths, own_summary, stored_summary)
from .sparse import dense_later, densifiable, densify, describe_index, describe_vspace, sparse_parts


class Keeper:
    """Turns live autograd values into kept values (``recording/values.py``) for one capture level."""

    def __init__(self, capture="auto", inline_size=DEFAULT_INLINE_SIZE, box_level=None):
        self.capture, inline_size = capture_options(capture, inline_size)
        self.keeps_values = capture != "structure"
        # "full" keeps arrays by reference (copy_on_write keeps them true); "auto" copies the
        # small arrays it keeps exactly: cheaper than following references it would have to correct
        self.by_reference = capture == "full"
        self.stored = capture == "auto"  # kept values in their stored forms (see the module's docstring)
        self.protected = {}  # id(array) -> count: the user's arrays (seeds), copied wherever seen
        self.limit = None if capture == "full" else inline_size
        # a box's level; the recorder sets it to the level of the box's node
        self.box_level = box_level or (lambda box: box._trace)

    def __call__(self, value, copy=False):
        """The kept value of ``value``; ``copy=True`` copies arrays that would be kept by reference."""
        if not self.keeps_values:
            return None
        t = type(value)
        if t is np.ndarray:
            if self.limit is not None:
                if value.size <= self.limit:
                    return value.copy()
                twin = values._twin  # (stored_summary written out: one call less per summary)
                stored = None if twin is None else twin.float64_summary(value, ARRAY_SUMMARY)
                return own_summary(value) if stored is None else stored
            if copy or (value.base is not None and not owns_its_base(value)) or id(value) in self.protected:
                return value.copy()
            return value
        if t in box_types:  # (before scalars: hot callers keep those themselves)
            inner = value._value
            kind = type(inner)
            if kind is np.ndarray and self.limit is not None:  # (the common case, written out)
                inner = stored_summary(inner) if inner.size > self.limit else inner.copy()
            elif kind not in SCALARS:  # (a scalar of an outer trace, under grad(grad(f)), is kept as it is)
                inner = self(inner, copy)
            return (BOXED, inner, self.box_level(value)) if self.stored else Boxed(inner, self.box_level(value))
        if t in SCALARS:
            return value
        if (t is tuple or t is list) and self.limit is not None:  # most often flat: arrays and scalars
            flat = _flat_copy(value, self.limit)
            if flat is not None:
                return flat
        if isinstance(value, SparseObject):
            parts = sparse_parts(value)
            index, part = (describe_index(parts[0]), self(parts[1], copy)) if parts else (None, None)
            # fresh zeros: ours (under full made when the event is built, from the part kept: DenseLater)
            dense = None if not densifiable(value.vs, self.limit) \
                else (self.limit is None and dense_later(value, part)) or densify(value)
            if self.stored:
                return SPARSE, describe_vspace(value.vs), index, part, dense
            return Sparse(describe_vspace(value.vs), index, part, dense)
        if isinstance(value, (tuple, list, dict)):
            limit = self.limit
            if limit is not None:
                try:  # nested, boxed or other parts: sized and copied in one walk
                    return self._part(value, [limit])
                except _OverTheLimit:
                    return container_summary(value)
            return self._container(value, copy)
        if isinstance(value, np.ndarray):  # a subclass (np.matrix, a masked array): copied at once
            if self.limit is not None and value.size > self.limit:
                return stored_summary(np.asarray(value))
            return value.copy()
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
            items = []  # (a loop: before Python 3.12 a comprehension builds and calls a function)
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
        """A tuple, list or dict, item by item (capture full: no inline size to count against)."""
        if isinstance(value, tuple):
            items = [self(v, copy) for v in value]
            if type(value) is tuple or not hasattr(value, "_fields"):
                return tuple(items)
            return tuple.__new__(type(value), items)  # a namedtuple (no __new__ of theirs run)
        if isinstance(value, list):
            return [self(v, copy) for v in value]
        return {k: self(v, copy) for k, v in value.items()}

    def protect(self, value):
        """The arrays of ``value`` (a seed the user owns and may change) are copied wherever a
        kept value would hold them by reference, until ``unprotect(value)``."""
        for array in array_leaves(value):
            self.protected[id(array)] = self.protected.get(id(array), 0) + 1

    def unprotect(self, value):
        for array in array_leaves(value):
            count = self.protected.pop(id(array), 0) - 1
            if count > 0:
                self.protected[id(array)] = count


def owns_its_base(view):
    """Whether nothing but ``view`` holds the arrays it is a view of (``tensordot``'s reshape of its
    fresh result): no one else can write into that memory, so it is kept by reference as a fresh array
    is. Views of anything held elsewhere (``x.T`` of the user's input, a slice of a node's value) are not."""
    base = view.base
    while type(base) is np.ndarray:
        if sys.getrefcount(base) > 3:  # the view's reference, this name's and the call's argument
            return False
        if base.base is None:
            return True
        base = base.base
    return False


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
    """A container holds more than the inline size (``Keeper._part``)."""


def _flat_copy(value, limit):
    """The ``auto`` kept value of a plain tuple or list of arrays and scalars: copies of its arrays,
    or a ``ContainerSummary`` (stored form) above ``limit`` elements; ``None`` when it holds anything else
    (boxes, containers, sparse values: ``Keeper`` walks those)."""
    left = limit
    items = []  # (a loop: before Python 3.12 a comprehension builds and calls a function)
    for v in value:  # one pass: each array sized before it is copied
        kind = type(v)
        if kind is np.ndarray:
            left -= v.size
            if left < 0:  # (any walk of the rest only counts more)
                return container_summary(value)
            items.append(v.copy())
        elif kind in SCALARS:
            left -= 1
            if left < 0:
                return container_summary(value)
            items.append(v)
        else:
            return None
    return tuple(items) if type(value) is tuple else items


def container_summary(value, reuse=None):
    """The stored form of a ``ContainerSummary`` of a live container: its leaves, depth first, each
    as its path and the stored form of its ``ArraySummary`` (a leaf that is not a number: its type
    name as the dtype, no statistics). ``reuse`` maps a path to a leaf summary still true."""
    if type(value) in (list, tuple):  # most often flat: a list of arrays (a model's parameters)
        flat = _flat_leaves(value, reuse)
        if flat is not None:
            return CONTAINER_SUMMARY, type(value).__name__, len(value), flat, max(len(value) - MAX_LEAVES, 0)
    leaves, more = [], 0
    for path, leaf in leaf_paths(value, getval):
        if len(leaves) == MAX_LEAVES:
            more += 1
            continue
        if reuse is not None and path in reuse:
            leaves.append((path, reuse[path]))
        elif isinstance(leaf, (np.ndarray, np.number, int, float, complex)) and not isinstance(leaf, bool):
            leaves.append((path, stored_summary(np.asarray(leaf))))
        else:
            leaves.append((path, (ARRAY_SUMMARY, (), type(leaf).__name__, _NAN, _NAN, _NAN)))
    return CONTAINER_SUMMARY, type(value).__name__, len(value), tuple(leaves), more


_INDEX_PATHS = tuple(f"[{i}]" for i in range(MAX_LEAVES))  # leaf_paths' names of a flat sequence's leaves


def _flat_leaves(value, reuse):
    """``container_summary``'s leaves of a list or tuple of plain arrays (its first ``MAX_LEAVES``,
    named ``[i]`` as ``leaf_paths`` names them), without the walk; ``None`` for any other content."""
    for item in value:
        if type(item) is not np.ndarray:
            return None
    leaves = []  # (a loop: before Python 3.12 a comprehension builds and calls a function)
    for path, leaf in zip(_INDEX_PATHS, value):
        leaves.append((path, reuse[path] if reuse is not None and path in reuse else stored_summary(leaf)))
    return tuple(leaves)


def summary_after_sparse_add(before, kept, after, g):
    """Capture ``auto`` of ``after``, the accumulated gradient of a list or tuple that autograd's
    ``add_outgrads`` made from ``before`` (kept as the ContainerSummary ``kept``) by adding the sparse
    ``g`` (the VJP of ``xs[i]``) into element ``i`` alone; ``None`` where that is not the case.

    autograd's ``container_untake`` rebuilds the sequence around the same element objects and writes
    into element ``i`` only, so the other elements' leaf statistics still hold: a model's parameter
    list, added into once per parameter read, is not summarized whole at each addition."""
    if type(kept) is not tuple or kept[0] is not CONTAINER_SUMMARY or type(after) is not type(before) \
            or type(after) not in (list, tuple) or len(after) != len(before):
        return None
    parts = sparse_parts(g)
    index = parts[0] if parts is not None else None
    if type(index) is not int or not -len(after) <= index < len(after):
        return None
    index %= len(after)
    flat = True  # every element a plain array: leaf i is element i
    for i, (old, new) in enumerate(zip(before, after)):  # the same objects but at the index
        if old is not new and i != index:
            return None
        if type(new) is not np.ndarray:
            flat = False
    old, new = getval(before[index]), getval(after[index])
    if type(old) is not type(new) or (type(old) is np.ndarray and old.shape != new.shape):
        return None
    if flat:  # container_summary's flat leaves, the one at the index summarized again
        leaves = kept[3]
        if index < len(leaves):
            leaves = (*leaves[:index], (leaves[index][0], stored_summary(new)), *leaves[index + 1:])
        return CONTAINER_SUMMARY, type(after).__name__, len(after), leaves, kept[4]
    paths = [path for path, _ in kept[3]]
    if len(set(paths)) != len(paths):  # two leaves of one path (dict keys named by type only): ambiguous
        return None
    changed = f"[{index}]"  # element i's leaves: "[i]", "[i][0]", ... (not "[i0]")
    return container_summary(after, {path: leaf for path, leaf in kept[3] if not path.startswith(changed)})


_NAN = float("nan")


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

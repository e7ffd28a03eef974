"""Copy-on-write: keep recorded values true while autograd accumulates in place (capture
``full``, which keeps arrays by reference; ``auto`` copies the small arrays it keeps).

autograd writes in place only into an ``outgrads`` entry flagged mutable: ``vs.mut_add`` (third and
later dense contributions) and ``sparse_add`` (sparse ones) in ``add_outgrads``. Under
``grad(grad(f))`` the same arrays are also the values of the outer trace's ``VSpace.add`` /
``VSpace.mut_add`` nodes. Events keep exact arrays by reference; the recorder ``share``s the
values holding such an accumulator, and just before autograd writes into some of its arrays
(all of them, or for ``x[i]`` into a container the one element) those arrays are copied, once
each. Kept values hold such an array through a ``Version``, shared by every event that holds it, so
the copy reaches them all at once; events resolve Versions when they are built. Copying every
value instead would cost a copy per event, and
copying a whole list of parameters per contribution is quadratic.

What autograd hands to the user (the gradient a query returns, make_vjp's end value, make_jvp's
value and tangent) belongs to the user, who may change it in place, through a view too: the
recorder notes which events hold which live value by reference (``hold``, per query and per open
trace) and ``detach`` gives those events their own copy. The user's seeds are copied wherever a
pass carries them (``Keeper.protect``). A rule that writes into the cotangent it received is not
seen here: under ``full`` the events holding that cotangent show what it wrote (``auto`` records
such a rule truthfully: backward.py).
"""


from operator import is_

import numpy as np

from autograd.core import SparseObject
from autograd.tracer import getval

from ..values import NO_REFERENCE, Boxed, Version, map_arrays, holds_reference
from .capture import array_leaves
from .sparse import sparse_parts


class CopyOnWrite:
    def __init__(self):
        self._live = {}  # id(array) -> the Version that still holds that live array

    def share(self, kept, value):
        """``kept value`` (of the live ``value``) with each of ``value``'s arrays as its current
        Version: every event holding it sees the copy taken before autograd writes into it."""
        if kept is value and type(value) is np.ndarray:  # the common case: one array, by reference
            return self._version(value)
        leaves = {id(a) for a in array_leaves(value)}
        return map_arrays(kept, lambda a: self._version(a) if id(a) in leaves else a)

    def shared_after_sparse_add(self, before, kept, after, g, keep):
        """``share`` of ``after``, the accumulator list or tuple ``add_outgrads`` made from ``before``
        (shared as ``kept``) by adding the sparse ``g`` (the VJP of ``xs[i]``) into element ``i``:
        ``kept`` with element ``i`` kept and shared again, when every other element is the same array
        and ``kept`` holds it through its Version still live; ``None`` otherwise. A model's parameter
        list, added into once per parameter read, is not kept and shared whole at each addition."""
        kind = type(after)
        if (kind is not list and kind is not tuple) or type(before) is not kind or type(kept) is not kind \
                or len(after) != len(before) or len(kept) != len(after):
            return None
        parts = sparse_parts(g)
        index = parts[0] if parts is not None else None
        if type(index) is not int or not -len(after) <= index < len(after):
            return None
        index %= len(after)
        others = after[:index] + after[index + 1:]
        live = self._live  # (C-level scans: no Python frame per element)
        if not all(map(is_, before, after)) or not all(map(is_, map(live.get, map(id, others)),
                                                           kept[:index] + kept[index + 1:])):
            return None
        element = keep(after[index])
        if holds_reference(element):
            element = self.share(element, after[index])
        items = list(kept)
        items[index] = element
        return items if kind is list else tuple(items)

    @property
    def live(self):
        """Whether some Version still holds a live array (else a write changes no event)."""
        return bool(self._live)

    def _version(self, array):
        version = self._live.get(id(array))
        if version is None:
            version = self._live[id(array)] = Version(array)
        return version

    def before_writing(self, leaves, copies=None):
        """autograd writes into ``leaves`` next: their current Versions keep copies (one copy per
        written array, however many events hold it), noted in ``copies`` (id -> copy) if given."""
        live = self._live
        for leaf in leaves:
            version = live.pop(id(leaf), None)
            if version is not None:
                version.array = copy = _copy(leaf)
                if copies is not None:
                    copies[id(leaf)] = copy

    def freeze_all(self):
        """Every Version still holding a live array keeps a copy (the recording is read, or stops)."""
        for version in self._live.values():
            version.array = version.array.copy()
        self._live.clear()

    def copy_held(self, writer, held):
        """Every event ``held`` notes keeps copies of the arrays it holds by reference (the
        recorder stops while a pass or trace is open: nothing will detach them later)."""
        def copy(stored):
            return stored.copy() if type(stored) is np.ndarray else map_arrays(stored, lambda a: a.copy())

        for position in sorted(set(held[1::2])):
            writer.update(position, copy)

    def detach(self, writer, held, result, also=()):
        """``result`` goes to the user: the events ``held`` (``hold``) says hold it, a container
        of it or the arrays it is a view of (the user writes into those through it), plus the events
        starting at positions ``also``, keep copies; so does every Version of those arrays."""
        leaves = exposed_arrays(result)
        copies = {}  # id -> copy: the Versions' copies serve the events holding the same array too
        if self._live:
            self.before_writing(leaves, copies)
        positions = held_positions(held, {id(live) for live in (result, *leaves)})
        positions.extend(also)
        if not positions:
            return
        exposed = {id(a): a for a in leaves}

        def copied(array):  # (copied when an event holds it: a leaf held only through Versions is not)
            key = id(array)
            copy = copies.get(key)
            if copy is None:
                if exposed.get(key) is not array:
                    return array
                copy = copies[key] = array.copy()
            return copy

        def swap(stored):
            return copied(stored) if type(stored) is np.ndarray else map_arrays(stored, copied)

        for position in sorted(set(positions)):
            writer.update(position, swap)


def _copy(array):
    """``array.copy()``; for a float64 array of zero bits (autograd's fresh accumulators, ``vs.zeros()``
    of a list of parameters before each is added into) fresh zeros, whose pages the system maps
    only when read: the copy touches no memory (the array is read once, to find its bits all zero). Its first
    element is looked at first: an accumulator already added into (a weight's gradient, step after step)
    most often has a nonzero one, and reading the whole array would cost more than copying it."""
    if array.dtype is _FLOAT64 and array.size and not array.item(0) and not array.view(np.int64).any():
        return np.zeros(array.shape)
    return array.copy()


_FLOAT64 = np.dtype(np.float64)


def exposed_arrays(value):
    """The arrays a live value gives access to: its own, and those they are views of."""
    arrays = []
    for array in array_leaves(value):
        while array is not None:
            arrays.append(array)
            array = array.base if isinstance(array.base, np.ndarray) else None
    return arrays


def hold(held, value, kept, position, leaves=False):
    """Note in ``held`` (a flat list: ``id(value), position, ...``) that the event starting at
    ``position`` in the event log holds the live ``value`` through ``kept value``, if it does by
    reference: if ``value`` later goes to the user, ``detach`` corrects those events. A value can
    sit in many events: a cotangent passed through unchanged (``add``'s VJP returns g) is one
    node's outgrad, the next one's ingrad, and so on. Flat, not a dict of lists: no container per
    held value for the garbage collector.
    ``leaves``: also note each array of a container ``value`` (a node value: the end value
    make_vjp returns may be another container holding the same arrays)."""
    kind = type(kept)
    if kind is Boxed and type(kept.value) in NO_REFERENCE:  # a scalar of an outer trace: the common case
        return
    if kind is np.ndarray or holds_reference(kept):
        held += (id(value), position)
        if leaves and type(value) is not np.ndarray:  # a container's arrays, each on its own
            for leaf in array_leaves(value):
                held += (id(leaf), position)


def held_positions(held, ids):
    """The positions ``held`` notes for any of ``ids`` (found by C-level scans of the list for a
    few ids, by one pass for many: a list of parameters)."""
    positions = []
    if len(ids) > 8:
        for k in range(0, len(held), 2):
            if held[k] in ids:
                positions.append(held[k + 1])
        return positions
    index = held.index
    for target in ids:
        start = 0
        while True:
            try:
                found = index(target, start)
            except ValueError:
                break
            if found % 2 == 0:  # an id (never a position that happens to be equal)
                positions.append(held[found + 1])
            start = found + 1
    return positions


def hold_accumulation(held, position, prev_g_flagged, previous, g, contribution, value, kept):
    """``hold`` the values the add_outgrads event at ``position`` holds: the contribution ``g``,
    the result ``value`` and the previous entry, through their kept values."""
    if type(contribution) not in NO_REFERENCE:
        hold(held, g, contribution, position)
    if value is not g and type(kept) not in NO_REFERENCE:
        hold(held, value, kept, position)
    if previous is not None and type(previous) not in NO_REFERENCE:
        hold(held, prev_g_flagged[0], previous, position)


def written_leaves(value, contribution):
    """The arrays ``add_outgrads`` writes into when it adds ``contribution`` to the mutable entry
    ``value``: the one element ``x[i]`` names for a sparse contribution to a container, else all."""
    value, contribution = getval(value), getval(contribution)
    if isinstance(contribution, SparseObject) and isinstance(value, (list, tuple, dict)):
        parts = sparse_parts(contribution)
        if parts is not None:
            index = parts[0]
            try:
                part = value[index]
            except (TypeError, KeyError, IndexError):
                return array_leaves(value)
            return array_leaves(part)
    return array_leaves(value)

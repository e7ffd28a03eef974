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

An array's later writes are not copied: its ``History`` (``values.py``) keeps the copy of its first
written state and each contribution added since (``x += g``; ``x[i]``'s untake at an index of ints
and slices), and makes each Version's array from them when an event is read, with autograd's own
additions (the same bits). autograd never writes into a contribution (an accumulator is a fresh
array, written only while its node's children run; a cotangent handed on is never an accumulator
again): what a History keeps is as true as the events' contribution fields holding the same arrays.
A contribution the user is given (add's VJP hands g to both parents: one may be the end of the
pass) has its Histories made before the user can write into it (``detach``). An accumulator
autograd has let go of (nothing but its Version holds it) is kept without a copy when the
recording ends. A node's value kept as it is is this recorder's own (``own``): a view of it
(``z[:, 0:64]``) is kept by reference too, and copied with it when the user is given its base.

What autograd hands to the user (the gradient a query returns, make_vjp's end value, make_jvp's
value and tangent) belongs to the user, who may change it in place, through a view too: the
recorder notes which events hold which live value by reference (``hold``, per query and per open
trace) and ``detach`` gives those events their own copy. The user's seeds are copied wherever a
pass carries them (``Keeper.protect``). A rule that writes into the cotangent it received is not
seen here: under ``full`` the events holding that cotangent show what it wrote (``auto`` records
such a rule truthfully: backward.py), and so do the states of an accumulator it was added into.
"""


import sys
from operator import is_

import numpy as np

from autograd.core import SparseObject, VSpace, vspace
from autograd.tracer import getval

from ..values import NO_REFERENCE, Boxed, History, Version, map_arrays, holds_reference
from .capture import array_leaves
from .sparse import replayable_part, sparse_parts


class CopyOnWrite:
    def __init__(self):
        self._live = {}  # id(array) -> the Version that still holds that live array
        self._histories = {}  # id(array) -> (that live array, the History noting each write into it)
        self._read = {}  # id(array a History's step reads) -> that History, or a list of them (detach makes them)
        self._made_later = []  # every History begun (made when a pass open at the end could expose its steps)
        self.owned = {}  # id(array) -> array: node values kept as they are, and their bases (own)

    def share(self, kept, value):
        """``kept value`` (of the live ``value``) with each of ``value``'s arrays as its current
        Version: every event holding it sees the copy taken before autograd writes into it."""
        if kept is value and type(value) is np.ndarray:  # the common case: one array, by reference
            return self.version(value)
        leaves = {id(a) for a in array_leaves(value)}
        return map_arrays(kept, lambda a: self.version(a) if id(a) in leaves else a)

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

    def own(self, value):
        """The node value ``value`` is kept by reference as it is (autograd's own array, written into by
        no one): a view of it is kept so too (``z[:, 0:64]``, each gate of an LSTM: a copy each before)."""
        owned = self.owned
        owned[id(value)] = value
        base = value.base
        if type(base) is np.ndarray:
            owned[id(base)] = base

    def owns_base(self, view):
        """Whether ``view`` is a view of an owned node value (``own``)."""
        base = view.base
        return type(base) is np.ndarray and self.owned.get(id(base)) is base

    @property
    def live(self):
        """Whether some Version still holds a live array, or a History notes the writes into one (else a
        write changes no event)."""
        return bool(self._live) or bool(self._histories)

    def version(self, array):
        """The Version holding the live ``array`` now (made, if none does)."""
        version = self._live.get(id(array))
        if version is None:
            version = self._live[id(array)] = Version(array)
        return version

    def before_adding(self, value, g):
        """``add_outgrads`` adds ``g`` into the mutable entry ``value`` next, in place. An array's
        Version becomes a step of the array's History when ``g`` is one it can add again (an array, or
        ``x[i]``'s untake of a basic index): one copy of the array for its first write, none after.
        Anything else (a container, another space's add): ``before_writing``."""
        if type(value) is np.ndarray:
            kind = type(g)
            if kind is np.ndarray and _DENSE_ADD:
                reads = g
            elif kind is SparseObject:
                reads = replayable_part(g)
            else:
                reads = None
            if reads is not None:
                key = id(value)
                version = self._live.pop(key, None)
                noted = self._histories.get(key)
                if version is None:  # no event holds its state: its History (if any) ends here
                    if noted is not None:
                        del self._histories[key]
                    return
                if noted is None:
                    history = History(_copy(value))
                    self._histories[key] = (value, history)
                    self._made_later.append(history)
                else:
                    history = noted[1]
                history.versions.append(version)
                history.steps.append(g)
                version.array = history
                read = self._read
                while reads is not None:  # (the step's array, and what it is a view of)
                    at = id(reads)
                    other = read.get(at)
                    read[at] = history if other is None or other is history else \
                        [other, history] if type(other) is History else [*other, history]
                    reads = reads.base if type(reads.base) is np.ndarray else None
                return
        self.before_writing(written_leaves(value, g))

    def before_writing(self, leaves, copies=None):
        """autograd writes into ``leaves`` next: their current Versions keep copies (one copy per
        written array, however many events hold it), noted in ``copies`` (id -> copy) if given;
        their Histories end (this write is not one of their steps)."""
        live, histories = self._live, self._histories
        for leaf in leaves:
            key = id(leaf)
            version = live.pop(key, None)
            if version is not None:
                version.array = copy = _copy(leaf)
                if copies is not None:
                    copies[key] = copy
            if histories and key in histories:
                del histories[key]

    def freeze_all(self):
        """Every Version still holding a live array keeps a copy (the recording is read, or stops),
        unless nothing else holds that array (an accumulator autograd has let go of: no one can write
        into it any more, and a view of it would hold it); Histories end (their Versions are made when read).
        Views of node values are copied from now on (``own``)."""
        self._histories.clear()
        self.owned.clear()
        for version in self._live.values():
            array = version.array
            # (the Version's reference, this name's and the call's argument; Python 3.14 may borrow one of them)
            if array.base is not None or sys.getrefcount(array) > 3 or not _EXACT_REFCOUNTS:
                version.array = array.copy()
        self._live.clear()

    def handed_back(self, seed):
        """The user's ``seed`` is theirs again (its pass ended; until then it was protected): the Histories adding
        it, or a view of it, are made before the user can write into it."""
        if self._read:
            self._make_reading(exposed_arrays(seed))

    def make_all(self):
        """Every History's Versions made now (their steps may go to the user: a pass open when the
        recorder stops, or one it failed in, is never detached)."""
        self._histories.clear()
        for history in self._made_later:
            history.make()
        self._made_later.clear()
        self._read.clear()

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
        owned = self.owned
        if owned:  # the user's from now on
            for leaf in leaves:
                owned.pop(id(leaf), None)
        if self._live or self._histories:
            self.before_writing(leaves, copies)
        if self._read:  # a History that adds one of them: made before the user can write into it
            self._make_reading(leaves)
        positions = held_positions(held, {id(live) for live in (result, *leaves)})
        positions.extend(also)
        if not positions:
            return
        exposed = {id(a): a for a in leaves}

        def copied(array):  # (copied when an event holds it, or a view of it: a leaf held only through Versions is not)
            key = id(array)
            copy = copies.get(key)
            if copy is None:
                if exposed.get(key) is not array:
                    base = array.base
                    if type(base) is not np.ndarray or exposed.get(id(base)) is not base:
                        return array
                copy = copies[key] = array.copy()
            return copy

        def swap(stored):
            return copied(stored) if type(stored) is np.ndarray else map_arrays(stored, copied)

        for position in sorted(set(positions)):
            writer.update(position, swap)

    def _make_reading(self, arrays):
        """The Histories a step of which is one of ``arrays`` (or a view of one) made now; each ends (the next
        write into its array begins another)."""
        read, histories = self._read, self._histories
        for array in arrays:
            found = read.pop(id(array), None)
            for history in () if found is None else (found,) if type(found) is History else found:
                for key, (_, noted) in list(histories.items()):
                    if noted is history:
                        del histories[key]
                history.make()


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
_EXACT_REFCOUNTS = sys.version_info < (3, 14)  # (3.14 may borrow a stack reference: getrefcount one lower)
# vs.mut_add of an array's space is VSpace's own x += y (a History adds its steps so), unless a program registered
# another vector space for ndarray
_DENSE_ADD = all(getattr(type(vspace(np.zeros(1, dtype))), "_mut_add", None) is VSpace._mut_add
                 for dtype in (np.float64, np.complex128))


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

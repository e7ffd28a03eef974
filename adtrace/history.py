"""Copy-on-write: keep recorded values true while autograd accumulates in place.

autograd writes in place only into an ``outgrads`` entry flagged mutable: ``vs.mut_add`` (third and
later dense contributions) and ``sparse_add`` (sparse ones) in ``add_outgrads``. Under
``grad(grad(f))`` the same arrays are also the values of the outer trace's ``VSpace.add`` /
``VSpace.mut_add`` nodes. Events keep exact arrays by reference; the recorder ``watch``es the
events holding such an accumulator, and just before autograd writes into some of its arrays
(all of them, or for ``x[i]`` into a container the one element) those events get copies of just
those arrays. Copying every value instead would cost a copy per event (2.5-3.5x on array
workloads, AUTOGRAD_NOTES), and copying a whole list of parameters per contribution is quadratic.

The gradient a query returns belongs to the user, who may change it in place: ``detach`` gives the
events that hold it (the recorder knows which) their own copy.
"""

import dataclasses

import numpy as np

from .values import Boxed, Sparse, array_leaves

_VALUE_FIELDS = {
    "node": ("value",), "vjp": ("outgrad", "ingrads"), "backward_end": ("result",),
    "add_outgrads": ("previous", "contribution", "result"),
}


class CopyOnWrite:
    def __init__(self, recording, capture):
        self._recording = recording
        self._capture = capture
        self._watched = {}  # id(array) -> (array, [(event index, field)])

    def watch(self, value, index, field):
        """Event ``index`` holds ``value`` (an accumulator autograd may write into) in ``field``."""
        for leaf in array_leaves(value):
            entry = self._watched.get(id(leaf))
            if entry is None:
                entry = self._watched[id(leaf)] = (leaf, [])
            entry[1].append((index, field))

    def copies_before_writing(self, leaves):
        """Copies of the arrays autograd is about to write into that an event holds (or will: the
        previous value's snapshot), already swapped into the watched events: ``id -> copy``."""
        copies = {id(a): a.copy() for a in leaves if self._capture.keeps(a)}
        if copies and self._watched:
            self._swap_into_events(copies)
        return copies

    def freeze_all(self):
        """Copy every watched array into its events (recording stops; autograd goes on)."""
        copies = {key: leaf.copy() for key, (leaf, _) in self._watched.items()}
        self._swap_into_events(copies)

    def _swap_into_events(self, copies):
        events = set()
        for key in copies:
            entry = self._watched.pop(key, None)
            if entry is not None:
                events.update(entry[1])
        for index, field in sorted(events):
            event = self._recording.event(index)
            self._recording.replace(index, dataclasses.replace(event, **{field: swap_arrays(getattr(event, field), copies)}))

    def detach(self, indices, result):
        """Events ``indices`` keep a copy of ``result``, not the array the user gets."""
        copies = {id(a): a.copy() for a in array_leaves(result)}
        for index in sorted({i for i in indices if i is not None}):
            event = self._recording.event(index)
            changes = {}
            for field in _VALUE_FIELDS.get(event.kind, ()):
                old = getattr(event, field)
                new = swap_arrays(old, copies)
                if new is not old:
                    changes[field] = new
            if changes:
                self._recording.replace(index, dataclasses.replace(event, **changes))


def swap_arrays(snapshot, copies):
    """``snapshot`` with each array whose id is in ``copies`` replaced by its copy (the same
    object when nothing changed)."""
    if type(snapshot) is np.ndarray:
        return copies.get(id(snapshot), snapshot)
    if type(snapshot) is Boxed:
        inner = swap_arrays(snapshot.value, copies)
        return snapshot if inner is snapshot.value else Boxed(inner, snapshot.level)
    if type(snapshot) is Sparse:
        value = swap_arrays(snapshot.value, copies)
        return snapshot if value is snapshot.value else dataclasses.replace(snapshot, value=value)
    if isinstance(snapshot, (tuple, list)):
        items = [swap_arrays(s, copies) for s in snapshot]
        if all(a is b for a, b in zip(items, snapshot)):
            return snapshot
        return type(snapshot)(*items) if hasattr(snapshot, "_fields") else type(snapshot)(items)
    if isinstance(snapshot, dict):
        items = {k: swap_arrays(v, copies) for k, v in snapshot.items()}
        return snapshot if all(items[k] is snapshot[k] for k in snapshot) else items
    return snapshot

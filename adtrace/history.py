"""Copy-on-write: keep recorded values true while autograd accumulates in place.

autograd writes in place only into an ``outgrads`` entry flagged mutable: ``vs.mut_add`` (third and
later dense contributions) and ``sparse_add`` (sparse ones) in ``add_outgrads``. Under
``grad(grad(f))`` the same arrays are also the values of the outer trace's ``VSpace.add`` /
``VSpace.mut_add`` nodes. Events keep exact arrays by reference; the recorder ``watch``es the
events holding such an accumulator, and just before autograd writes into it ``freeze`` gives each
of them a copy. Copying every value instead would cost a copy per event (2.5-3.5x on array
workloads, AUTOGRAD_NOTES).

The gradient a query returns belongs to the user, who may change it in place: ``detach`` gives the
events that hold it (the recorder knows which) their own copy.
"""

import dataclasses

import numpy as np

from .values import Boxed, array_leaves

_VALUE_FIELDS = {
    "node": ("value",), "vjp": ("outgrad", "ingrads"), "backward_end": ("result",),
    "add_outgrads": ("previous", "contribution", "result"),
}


class CopyOnWrite:
    def __init__(self, recording, capture):
        self._recording = recording
        self._capture = capture
        self._watched = {}  # id(array) -> [(event index, field, live value)]

    def watch(self, value, index, field):
        """Event ``index`` holds ``value`` (an accumulator autograd may write into) in ``field``."""
        for leaf in array_leaves(value):
            self._watched.setdefault(id(leaf), []).append((index, field, value))

    def freeze(self, value, snapshot):
        """autograd is about to write into ``value``: events holding its arrays get copies
        (``snapshot``, already a copy of ``value``, serves the events holding ``value`` itself)."""
        if not self._watched:  # the common case under "auto" with large values: nothing kept live
            return
        done = set()
        for leaf in array_leaves(value):
            for index, field, live in self._watched.pop(id(leaf), ()):
                if (index, field) not in done:
                    done.add((index, field))
                    self._replace(index, field, snapshot if live is value else self._capture(live, copy=True))

    def freeze_all(self):
        """Copy every watched value into its events (recording stops; autograd goes on)."""
        watched, self._watched = self._watched, {}
        done = set()
        for entries in watched.values():
            for index, field, live in entries:
                if (index, field) not in done:
                    done.add((index, field))
                    self._replace(index, field, self._capture(live, copy=True))

    def _replace(self, index, field, snapshot):
        event = self._recording.event(index)
        if field == "result":
            snapshot = (snapshot, event.result[1])
        self._recording.replace(index, dataclasses.replace(event, **{field: snapshot}))

    def detach(self, indices, result):
        """Events ``indices`` keep a copy of ``result``, not the array the user gets."""
        copies = {id(a): a.copy() for a in array_leaves(result)}
        for index in sorted({i for i in indices if i is not None}):
            event = self._recording.event(index)
            changes = {}
            for field in _VALUE_FIELDS.get(event.kind, ()):
                old = getattr(event, field)
                new = _swap_arrays(old, copies)
                if new is not old:
                    changes[field] = new
            if changes:
                self._recording.replace(index, dataclasses.replace(event, **changes))


def _swap_arrays(snapshot, copies):
    """``snapshot`` with each array whose id is in ``copies`` replaced by its copy (the same
    object when nothing changed)."""
    if type(snapshot) is np.ndarray:
        return copies.get(id(snapshot), snapshot)
    if type(snapshot) is Boxed:
        inner = _swap_arrays(snapshot.value, copies)
        return snapshot if inner is snapshot.value else Boxed(inner, snapshot.level)
    if isinstance(snapshot, (tuple, list)):
        items = [_swap_arrays(s, copies) for s in snapshot]
        if all(a is b for a, b in zip(items, snapshot)):
            return snapshot
        return type(snapshot)(*items) if hasattr(snapshot, "_fields") else type(snapshot)(items)
    if isinstance(snapshot, dict):
        items = {k: _swap_arrays(v, copies) for k, v in snapshot.items()}
        return snapshot if all(items[k] is snapshot[k] for k in snapshot) else items
    return snapshot

"""Naming nodes: labels by creation order, levels, the node table keyed by ``id(node)``.

``VJPNode`` has ``__slots__`` and no weak references, so nothing can be attached to a node. An
entry is written when the node is created, so an id that Python reuses after a node died is simply
overwritten.
"""

from dataclasses import dataclass
from typing import Callable, Optional

import autograd.core as core
import numpy as np

from .state import state
from ..callsite import user_call_site
from ..labels import ROOT_NAME, label_name, primitive_name
from .copy_on_write import hold
from ..values import NO_REFERENCE, SCALARS, holds_reference
from .capture import array_leaves, is_part_of
from ..events import JVPRoot, NodeCreated, RootCreated, TraceReturned
from ..packers import inline_writes, write

# Primitives whose output is an outgrads accumulator under higher-order differentiation: the inner
# backward pass's vs.add / vs.mut_add / sparse_add are recorded as nodes of the outer trace, and
# their output array is the one the next mut_add writes into.
_ACCUMULATORS = frozenset({core.VSpace.add, core.VSpace.mut_add, core.sparse_add})
_ROOT_SUFFIX = label_name(ROOT_NAME)  # a root's label after "v<i>_"


@dataclass(frozen=True)
class NodeCall:
    """A node's primitive call, kept by ``record(calls=True)`` for per-node checks: the live
    function and arguments (``args`` with this level's boxes unboxed) and the user's call site."""

    fun: Callable
    args: tuple
    kwargs: dict
    argnums: tuple
    site: Optional[str]



@inline_writes
class Nodes:
    """The Recorder's node events and node table (a mixin of ``Recorder``)."""

    def begin_node(self):
        """The next node number (creation order)."""
        self._count += 1
        return self._count - 1

    def on_vjp_node(self, node, value, fun, args, kwargs, argnums, parents):
        # Numbered once built: a rule maker that computes on an outer trace's boxes (higher order)
        # creates those outer nodes first; the order within each level is creation order either way.
        # Hot path (once per primitive call): lookups and the event written inline.
        number = self._count
        self._count = number + 1
        names = self._names.get(fun) or self._name(fun)
        label = f"v{number}_{names[1]}"
        argnums = self._argnums_kept.setdefault(argnums, argnums)  # (see Recorder._argnums_kept)
        labels, levels = self._labels, self._levels
        if len(parents) == 1:  # most nodes
            parent = parents[0]
            key = id(parent)
            parent_labels = labels.get(key) or self._unrecorded_node(parent)
            level = levels[key]
        elif len(parents) == 2:  # a binary operation on two boxes (x * x, and many nodes under grad(grad(f)))
            first, second = parents
            key = id(first)
            first_label = labels.get(key) or self._unrecorded_node(first)  # (the first named first)
            second_label = labels.get(id(second)) or self._unrecorded_node(second)
            parent_labels = f"{first_label},{second_label}"
            level = levels[key]
        else:
            parent_labels, level = self._parents(parents)
        key = id(node)
        labels[key], levels[key], self._argnums[key] = label, level, argnums
        site = None
        if self.keep_sites:
            site = user_call_site(self.root)
            if self.keep_calls:
                self.recording.calls[label] = NodeCall(fun, args, kwargs, argnums, site)
        if not self.keeps_values:
            kept = None
        elif type(value) in SCALARS:  # most values of a scalar program: no call
            kept = value
        elif not self.by_reference:  # capture "auto" copies what it keeps
            kept = self.capture(value)
        else:
            kept = self._keep_node_value(level, fun, value, args)
        query = self._query
        write(self._values, NodeCreated, mode="rev", level=level, query=query and query.number, label=label,
              primitive=names[0], argnums=argnums, parents=parent_labels, value=kept, site=site)

    def _parents(self, parents):
        """A node's parent labels as one string (see eventlog) and its level, for any number of
        parents (on_vjp_node writes out one and two). A loop: before Python 3.12 a comprehension
        builds and calls a function."""
        get = self._labels.get
        found = []
        for p in parents:
            found.append(get(id(p)) or self._unrecorded_node(p))
        return ",".join(found), self._levels[id(parents[0])] if parents else self._current_level()

    def _keep_node_value(self, level, fun, value, args):
        """The kept value of a new node's value under capture ``full``, written next into the log (VJP
        and JVP nodes; capture ``auto`` copies what it keeps, through ``self.capture`` alone)."""
        # Copy at once a value that is, or holds, (part of) one of the call's own arguments
        # (np.atleast_1d(x) is x, t[0] an element of the user's tuple: the caller may change
        # them) or the zeros vs.mut_add(None, prev) made, which sparse_add fills in place within
        # the same add_outgrads.
        if type(value) is np.ndarray:
            copy = is_part_of(value, args) or (fun is core.VSpace.mut_add and args[1] is None)
        else:  # a container holding (part of) an argument: alist([x, 2 * x]) holds the user's x
            copy = isinstance(value, (tuple, list, dict)) and any(is_part_of(a, args) for a in array_leaves(value))
        kept = self.capture(value, copy)
        if fun in _ACCUMULATORS and holds_reference(kept):  # the next mut_add writes into it
            kept = self._history.share(kept, value)
        if type(kept) not in NO_REFERENCE:  # on_trace may give it (or a view of it) to the user
            hold(self._held_in_trace(level), value, kept, len(self._values), leaves=True)
        return kept

    def _held_in_trace(self, level):
        """Where ``history.hold`` notes the values recorded by reference in the trace open at
        ``level``: node values, and forward mode's tangents."""
        held = self._trace_holders.get(level)
        if held is None:
            held = self._trace_holders[level] = []
        return held

    def on_vjp_root(self, node):
        label, level = self._new_root(node)
        write(self._values, RootCreated, mode="rev", level=level, query=self._query and self._query.number,
              label=label)

    def on_jvp_root(self, node, g):
        label, level = self._new_root(node)
        if self.by_reference:  # the user's tangent: copied wherever the trace carries it
            self._jvp_seeds[level] = g
            self._capture.protect(g)
        write(self._values, JVPRoot, mode="fwd", level=level, query=self._query and self._query.number, label=label,
              tangent=self.capture(g, copy=True))

    def on_trace(self, start_node, x, end_value, end_node):
        mode = "fwd" if isinstance(start_node, core.JVPNode) else "rev"
        root, level = self._lookup(start_node), self._levels[id(start_node)]
        end = None if end_node is None else self._lookup(end_node)
        write(self._values, TraceReturned, mode=mode, level=level, query=self._query and self._query.number, root=root,
              end=end, input=self.capture(x, copy=True), output=self.capture(end_value, copy=True),
              independent=end_node is None)
        if not self.by_reference:
            return
        held = self._trace_holders.pop(level, [])
        if end_node is not None:  # make_vjp / make_jvp give these to the user, who may write into them
            self._history.detach(self.recording, held, end_value)
            if mode == "fwd":
                self._history.detach(self.recording, held, end_node.g)
        if level in self._jvp_seeds:
            self._capture.unprotect(self._jvp_seeds.pop(level))

    def _name(self, fun):
        """A primitive's (name, label suffix), computed once per primitive."""
        name = primitive_name(fun)
        names = self._names[fun] = (name, label_name(name))
        return names

    def _new_root(self, node):
        label = f"v{self.begin_node()}_{_ROOT_SUFFIX}"
        level = state.depth  # make_vjp / make_jvp create the root just before trace() opens
        self._register(id(node), label, level, ())
        return label, level

    def _register(self, key, label, level, argnums):
        self._labels[key], self._levels[key], self._argnums[key] = label, level, argnums

    def _lookup(self, node):
        """A node's label."""
        return self._labels.get(id(node)) or self._unrecorded_node(node)

    def _unrecorded_node(self, node):
        """A node created before this recording started: named, its level unknown."""
        label = f"u{self._unrecorded}_unrecorded"
        self._unrecorded += 1
        self._register(id(node), label, self._current_level(), ())
        return label


def box_levels(levels):
    """``Capture.box_level`` for the node table ``levels`` (``id(node) -> level``): a box's level is
    its node's (autograd's own trace numbers are global across threads).

    A function of the table, not a method of the Recorder: the Recorder holds its Capture, and a
    bound method there would be a reference cycle that kept each recording (its events, its node
    table) alive after its last use, until Python's cyclic collector ran."""
    get = levels.get

    def box_level(box):
        level = get(id(box._node))
        return level if level is not None else state.levels.get(box._trace, box._trace)

    return box_level



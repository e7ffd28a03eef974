"""Node events: a root, an operation node (its label, parents and value), a trace returned.

The nodes are named in the recorder's ``NodeTable`` (``node_table``).
"""

from dataclasses import dataclass
from typing import Callable, Optional

import autograd.core as core
import numpy as np
from autograd.tracer import box_types

from .node_table import NO_ARGNUMS, ROOT, UNARY
from .state import state
from ..callsite import user_call_site
from .copy_on_write import hold
from .. import values as kept_values  # (its twin read at each call: tests switch it)
from ..values import ARRAY_SUMMARY, BOXED, NO_REFERENCE, SCALARS, holds_reference, own_summary
from .capture import array_leaves, is_part_of
from ..events import JVPRoot, NodeCreated, RootCreated, TraceReturned
from ..fanout import guards_itself
from ..packers import inline_writes, write

# Primitives whose output is an outgrads accumulator under higher-order differentiation: the inner
# backward pass's vs.add / vs.mut_add / sparse_add are recorded as nodes of the outer trace, and
# their output array is the one the next mut_add writes into.
ACCUMULATORS = frozenset({core.VSpace.add, core.VSpace.mut_add, core.sparse_add})


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
    """The Recorder's node events (a mixin of ``Recorder``)."""

    @guards_itself
    def on_vjp_node(self, node, value, fun, args, kwargs, argnums, parents):
        if not self.live:  # (the guard, written out: one frame per callback)
            return
        try:
            # Numbered once built: a rule maker that computes on an outer trace's boxes (higher order)
            # creates those outer nodes first; the order within each level is creation order either way.
            # Hot path (once per primitive call): the node table's lookups and the event written inline.
            nodes = self.nodes
            number = nodes.made
            nodes.made = number + 1
            names = nodes.names.get(fun) or nodes.name_of(fun)
            label = f"v{number}_{names[1]}"  # (labels.label_for written out: a call is 320 instructions)
            argnums = nodes.distinct_argnums.setdefault(argnums, argnums)  # (see NodeTable.distinct_argnums)
            labels, levels = nodes.labels, nodes.levels
            if len(parents) == 1:  # most nodes
                parent = parents[0]
                key = id(parent)
                parent_labels = labels.get(key) or nodes.unrecorded(parent)
                level = levels.get(key, 0)  # (Sparse: get, not its __missing__, a Python call)
            elif len(parents) == 2:  # a binary operation on two boxes (x * x, and many nodes under grad(grad(f)))
                first, second = parents
                key = id(first)
                first_label = labels.get(key) or nodes.unrecorded(first)  # (the first named first)
                second_label = labels.get(id(second)) or nodes.unrecorded(second)
                parent_labels = f"{first_label},{second_label}"
                level = levels.get(key, 0)
            else:
                parent_labels, level = nodes.parent_labels(parents)
            key = id(node)
            labels[key] = label  # (NodeTable.add written out: levels and argnums Sparse)
            if levels.get(key, 0) != level:  # (not `key in levels`: a dict subclass's `in` is a slower call)
                levels[key] = level
            if nodes.argnums.get(key, UNARY) is not argnums:
                nodes.argnums[key] = argnums
            site = None
            if self.keep_sites:
                site = user_call_site(self.relative_to)
                if self.keep_calls:
                    self.writer.add_call(label, NodeCall(fun, args, kwargs, argnums, site))
            if not self.keeps_values:
                kept = None
            elif type(value) in SCALARS:  # most values of a scalar program: no call
                kept = value
            elif self.by_reference:
                kept = self.keep_node_value(level, fun, value, args)
            elif type(value) in box_types and type(value._value) in SCALARS:  # an outer trace's number (grad(grad(f)))
                key = id(value._node)  # (Keeper's stored Boxed and its box_level written out: two calls less)
                kept = (BOXED, value._value,
                        levels.get(key, 0) if key in labels else state.levels.get(value._trace, value._trace))
            elif type(value) is np.ndarray and value.size > self.inline_size:  # summarized (Keeper's written out)
                twin = kept_values._twin
                kept = None if twin is None else twin.float64_summary(value, ARRAY_SUMMARY)
                if kept is None:
                    kept = own_summary(value)
            else:  # capture "auto" copies what it keeps
                kept = self.keep(value)
            query = self.query
            write(self.values, NodeCreated, mode="rev", level=level, query=query and query.number, label=label,
                  primitive=names[0], argnums=argnums, parents=parent_labels, value=kept, site=site)
        except Exception as exc:
            self.fail(exc)

    def keep_node_value(self, level, fun, value, args):
        """The kept value of a new node's value under capture ``full``, written next into the log (VJP
        and JVP nodes; capture ``auto`` copies what it keeps, through ``self.keep`` alone)."""
        # Copy at once a value that is, or holds, (part of) one of the call's own arguments
        # (np.atleast_1d(x) is x, t[0] an element of the user's tuple: the caller may change
        # them) or the zeros vs.mut_add(None, prev) made, which sparse_add fills in place within
        # the same add_outgrads.
        if type(value) is np.ndarray:
            copy = is_part_of(value, args) or (fun is core.VSpace.mut_add and args[1] is None)
        else:  # a container holding (part of) an argument: alist([x, 2 * x]) holds the user's x
            copy = isinstance(value, (tuple, list, dict)) and any(is_part_of(a, args) for a in array_leaves(value))
        view = not copy and type(value) is np.ndarray and value.base is not None \
            and self.copy_on_write.owns_base(value)
        kept = value if view else self.keep(value, copy)  # (a view of a node value: as true as that value)
        if fun in ACCUMULATORS:
            if holds_reference(kept):  # the next mut_add writes into it
                kept = self.copy_on_write.share(kept, value)
        elif kept is value and type(value) is np.ndarray:
            self.copy_on_write.own(value)
        if type(kept) not in NO_REFERENCE:  # on_trace may give it (or a view of it) to the user
            held = self.held_in_trace(level)
            hold(held, value, kept, len(self.values), leaves=True)
            if view:  # (found, and copied, when the user is given the array it is a view of)
                hold(held, value.base, kept, len(self.values))
        return kept

    def held_in_trace(self, level):
        """Where ``copy_on_write.hold`` notes the values recorded by reference in the trace open at
        ``level``: node values, and forward mode's tangents."""
        held = self.trace_holders.get(level)
        if held is None:
            held = self.trace_holders[level] = []
        return held

    @guards_itself
    def on_vjp_root(self, node):
        if not self.live:  # (the guard, written out: one frame per callback)
            return
        try:
            # (_new_root, NodeTable.new_root, label_for and NodeTable.add written out: once per trace, but each
            # frame of it cold, after the traced function's work: about 0.3 us each)
            level = state.depth  # make_vjp creates the root just before trace() opens
            nodes = self.nodes
            number = nodes.made
            nodes.made = number + 1
            label = f"v{number}_{ROOT}"
            key = id(node)
            self.labels[key] = label
            levels = nodes.levels
            if levels.get(key, 0) != level:
                levels[key] = level
            if nodes.argnums.get(key, UNARY) is not NO_ARGNUMS:
                nodes.argnums[key] = NO_ARGNUMS
            query = self.query
            write(self.values, RootCreated, mode="rev", level=level, query=query and query.number, label=label)
        except Exception as exc:
            self.fail(exc)

    def on_jvp_root(self, node, g):
        label, level = self._new_root(node)
        if self.by_reference:  # the user's tangent: copied wherever the trace carries it
            self.jvp_seeds[level] = g
            self.keeper.protect(g)
        write(self.values, JVPRoot, mode="fwd", level=level, query=self.query and self.query.number, label=label,
              tangent=self.keep(g, copy=True))

    @guards_itself
    def on_trace(self, start_node, x, end_value, end_node):
        if not self.live:  # (the guard, written out: one frame per callback)
            return
        try:
            mode = "fwd" if isinstance(start_node, core.JVPNode) else "rev"
            nodes, labels = self.nodes, self.labels
            key = id(start_node)
            root = labels.get(key) or nodes.unrecorded(start_node)  # (NodeTable.label written out, twice)
            level = nodes.levels.get(key, 0)
            end = None if end_node is None else labels.get(id(end_node)) or nodes.unrecorded(end_node)
            keeps = self.keeps_values
            write(self.values, TraceReturned, mode=mode, level=level, query=self.query and self.query.number, root=root,
                  end=end, input=self.keep(x, copy=True) if keeps else None,
                  output=self.keep(end_value, copy=True) if keeps else None, independent=end_node is None)
            if not self.by_reference:
                return
            held = self.trace_holders.pop(level, [])
            if end_node is not None:  # make_vjp / make_jvp give these to the user, who may write into them
                self.copy_on_write.detach(self.writer, held, end_value)
                if mode == "fwd":
                    self.copy_on_write.detach(self.writer, held, end_node.g)
            if level in self.jvp_seeds:
                seed = self.jvp_seeds.pop(level)
                self.copy_on_write.handed_back(seed)
                self.keeper.unprotect(seed)
        except Exception as exc:
            self.fail(exc)

    def _new_root(self, node):
        level = state.depth  # make_vjp / make_jvp create the root just before trace() opens
        return self.nodes.new_root(node, level), level

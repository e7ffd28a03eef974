"""One backward query (``backward_pass`` run): its visits, local VJPs and accumulations.

A query replays ``outgrads`` as far as the recorder needs it: which node's contributions are
arriving (zip's position gives the parent) and the kept value of each entry, so a value seen again
(the popped outgrad, an unflagged previous) is not captured twice.
"""

import numpy as np
from autograd.core import SparseObject
from autograd.tracer import box_types

from .copy_on_write import hold, hold_accumulation
from .. import values as kept_values  # (its twin read at each call: tests switch it)
from ..values import ARRAY_SUMMARY, BOXED, NO_REFERENCE, SCALARS, holds_reference, own_summary
from .capture import summary_after_sparse_add
from .forward import JVPFrame
from .node_table import UNARY
from .state import state
from ..fanout import guards_itself
from ..events import NO_PREVIOUS, VISITS, AddOutgrads, BackwardEnd, BackwardStart, ToposortYielded, VJPCalled
from ..packers import inline_writes, write

_NONES = [(None,) * n for n in range(64)]  # ingrads under capture "structure", without a new tuple


class Query:
    """The state of one backward_pass run: which node's contributions are arriving, and the
    kept value of each ``outgrads`` entry (so a value seen again is not captured twice)."""

    __slots__ = ("number", "level", "end", "parents", "label", "argnums", "position",
                 "entries", "held", "popped", "ingrads", "kept_ingrads", "seed")

    def __init__(self, number, level, end):
        self.number, self.level, self.end = number, level, end
        self.parents, self.label, self.argnums, self.position = (), None, (), 0
        # parent label -> (live value, kept value): outgrads[parent], kept only when values are captured
        self.entries = {}
        self.held = []  # id(live value), position of an event holding it by reference, ... (copy_on_write.hold)
        self.popped = None  # the entry the current node popped
        self.ingrads, self.kept_ingrads = (), ()  # the current node's vjp output, live and captured
        self.seed = None  # the caller's g, protected while the pass runs (capture full only)


@inline_writes
class BackwardQueries:
    """The Recorder's backward-pass events (a mixin of ``Recorder``).

    Hot path: the per-node methods (on_toposort, on_vjp_called, after_add_outgrads) write their
    event straight into the log and look nodes up inline; helpers are called only off the common
    path (a node from before the recording, a value to capture). Their common case under capture structure and
    auto (and nodes.on_vjp_node's) is also written by the compiled wrappers (``_wrappers.c``), line by line: a change
    here is made there too.
    """

    @guards_itself
    def begin_query(self, g, end_node):
        if not self.live:  # (the guard, written out: one frame per callback)
            return
        try:
            self.queries += 1
            key = id(end_node)
            end = self.labels.get(key) or self.nodes.unrecorded(end_node)  # (NodeTable.label written out)
            level = self.nodes.levels.get(key, 0)
            query = Query(self.queries, level, end)
            # the caller's array: they may change it afterwards
            seed = self.keep(g, copy=True) if self.keeps_values else None
            if self.keeps_values:
                query.entries[end] = (g, seed)
            if self.by_reference:
                self.keeper.protect(g)  # and wherever the pass carries it (parts of it, x[i] of it)
                query.seed = g
            self.frames.append(query)  # (Recorder.push written out: a cold frame less per pass)
            self.top = self.query = query
            write(self.values, BackwardStart, mode="rev", level=level, query=query.number, end=end, seed=seed)
        except Exception as exc:
            self.fail(exc)

    @guards_itself
    def end_query(self, result, error):
        if not self.live:  # (the guard, written out: one frame per callback)
            return
        try:
            query = self.query
            if query is None:
                return
            frames = self.frames
            if len(frames) == 1 and frames[0] is query:  # (Recorder.pop written out for a pass inside no other)
                frames.pop()
                self.top = self.query = None
            else:
                self.pop(query)
            if query.seed is not None:
                self.copy_on_write.handed_back(query.seed)
                self.keeper.unprotect(query.seed)
            kept = None if error is not None or not self.keeps_values else self.kept(query.popped, result)
            error_name = None if error is None else type(error).__name__
            position = len(self.values)
            write(self.values, BackwardEnd, mode="rev", level=query.level, query=query.number, end=query.end,
                  result=kept, error=error_name)
            if error is None and self.by_reference and holds_reference(kept):  # the user gets the arrays these hold
                self.copy_on_write.detach(self.writer, query.held, result, also=(position,))
        except Exception as exc:
            self.fail(exc)

    @guards_itself
    def on_toposort(self, node):
        if not self.live:  # (the guard, written out: one frame per callback)
            return
        try:
            query = self.query
            if query is None:  # autograd.core.toposort called outside backward_pass: not a visit
                return
            key = id(node)
            label = self.labels.get(key) or self.nodes.unrecorded(node)  # (NodeTable.label written out)
            query.parents, query.label, query.position = node.parents, label, 0
            query.argnums = self.nodes.argnums.get(key, UNARY)  # (Sparse: get, not its __missing__, a Python call)
            if self.keeps_values:
                query.popped = query.entries.pop(label, None)  # outgrad = outgrads.pop(node)
            write(self.values, ToposortYielded, mode="rev", level=query.level, query=query.number, node=label,
                  position=VISITS)  # (not stored: the event log counts a query's visits as it reads them)
        except Exception as exc:
            self.fail(exc)

    @guards_itself
    def on_vjp_called(self, node_id, g, ingrads):
        if not self.live:  # (the guard, written out: one frame per callback)
            return
        try:
            query = self.query
            label = self.labels.get(node_id)
            if not self.keeps_values and query is not None:  # capture "structure" in a pass: the common case
                count = len(ingrads)
                nones = _NONES[count] if count < 64 else (None,) * count
                write(self.values, VJPCalled, mode="rev", level=query.level, query=query.number,
                      node=label or query.label, outgrad=None, ingrads=nones)
                return
            if query is None:  # a vjp called by hand, outside backward_pass
                level, number = self.nodes.current_level(), None
            else:
                level, number, label = query.level, query.number, label or query.label
            if self.keeps_values:
                popped = query and query.popped
                if popped and popped[0] is g:  # kept before the rule ran
                    outgrad, inner = popped[1], g
                    while type(inner) in box_types:  # (is_immutable written out: g is often a box, higher order)
                        inner = inner._value
                    unchanged = self.by_reference or type(inner) in SCALARS
                else:  # kept now, after it
                    outgrad, unchanged = self.keep(g), True
                # A rule that passes g through (add, unbroadcast of a same-shape g) reuses its kept value
                # when g cannot have changed since: an ingrad is what the rule returned, and a rule may
                # write into an array g (np.clip(g, out=g)). Under full the kept value is g itself.
                # (A loop: before Python 3.12 a comprehension builds and calls a function, per node here.)
                kept_ingrads = []
                last = last_kept = None
                for i in ingrads:
                    if type(i) in SCALARS:
                        kept_ingrads.append(i)
                    elif i is g and unchanged:
                        kept_ingrads.append(outgrad)
                    elif i is last:  # the same value twice in the output (auto: one summary; full keeps each apart)
                        kept_ingrads.append(last_kept)
                    elif type(i) in box_types and type(i._value) in SCALARS and not self.by_reference:
                        key = id(i._node)  # an outer trace's number (grad(grad(f))): Keeper's stored Boxed written out
                        kept_ingrads.append((BOXED, i._value, self.nodes.levels.get(key, 0) if key in self.labels
                                             else state.levels.get(i._trace, i._trace)))
                    elif type(i) is np.ndarray and not self.by_reference and i.size > self.inline_size:
                        twin = kept_values._twin  # (summarized: Keeper's written out)
                        kept = None if twin is None else twin.float64_summary(i, ARRAY_SUMMARY)
                        if kept is None:
                            kept = own_summary(i)
                        kept_ingrads.append(kept)
                        last, last_kept = i, kept
                    else:
                        kept = self.keep(i)
                        kept_ingrads.append(kept)
                        if not self.by_reference:
                            last, last_kept = i, kept
            else:
                count = len(ingrads)
                outgrad, kept_ingrads = None, _NONES[count] if count < 64 else (None,) * count
            values = self.values
            position = len(values)  # where this event starts (copy_on_write.hold notes positions)
            if query is not None:
                query.ingrads, query.kept_ingrads = ingrads, kept_ingrads
                if self.by_reference:
                    held = query.held
                    if type(outgrad) not in NO_REFERENCE:
                        hold(held, g, outgrad, position)
                    for value, kept in zip(ingrads, kept_ingrads):
                        if type(kept) not in NO_REFERENCE and value is not g:
                            hold(held, value, kept, position)
            write(values, VJPCalled, mode="rev", level=level, query=number, node=label, outgrad=outgrad,
                  ingrads=kept_ingrads)
        except Exception as exc:
            self.fail(exc)

    @guards_itself
    def before_add_outgrads(self, prev_g_flagged, g):
        """The kept value of ``outgrads.get(parent)`` (a non-empty ``prev_g_flagged``), taken before
        autograd may write into it; called when values are kept (by a fan-out, when some recorder keeps them)."""
        if not self.live or not self.keeps_values:  # (the guard, written out: one frame per callback)
            return None
        try:
            value, mutable = prev_g_flagged
            query, kept = self.query, None
            if query is not None and self.top is query:  # the kept value the last result got
                parents, position = query.parents, query.position  # (_parent_label written out)
                if position < len(parents):
                    parent = parents[position]
                    seen = query.entries.get(self.nodes.labels.get(id(parent)) or self.nodes.unrecorded(parent))
                    if seen is not None and seen[0] is value:
                        kept = seen[1]  # still true: a copy, or (full) held through Versions
            if kept is None:
                kept = self.keep(value)
                if mutable and self.by_reference and holds_reference(kept):
                    kept = self.copy_on_write.share(kept, value)
            # (Versions exist only under capture full: its copy-on-write)
            if mutable and self.by_reference and self.copy_on_write.live:  # autograd writes into (part of) `value`
                self.copy_on_write.before_adding(value, g)
            return kept
        except Exception as exc:
            self.fail(exc)

    @guards_itself
    def after_add_outgrads(self, prev_g_flagged, previous, g, result):
        """``result = add_outgrads(prev_g_flagged, g)`` returned; ``previous`` is what
        before_add_outgrads took of ``prev_g_flagged`` (``None`` when it was not called)."""
        if not self.live:  # (the guard, written out: one frame per callback)
            return
        try:
            frame = self.top
            if frame is not self.query or frame is None:  # forward mode, or a pass from before the recording
                if type(frame) is JVPFrame:
                    return self.add_in_jvp_node(frame, prev_g_flagged, previous, g, result)
                return self._add_outside_a_pass(prev_g_flagged, previous, g, result)
            position = frame.position
            frame.position = position + 1
            parents, argnums = frame.parents, frame.argnums
            if position < len(parents):  # zip(node.parents, ingrads): the parent this adds into
                parent = parents[position]
                parent = self.labels.get(id(parent)) or self.nodes.unrecorded(parent)  # (NodeTable.label)
            else:
                parent = None
            argnum = argnums[position] if position < len(argnums) else None
            if not self.keeps_values:  # (capture "structure": no value read)
                write(self.values, AddOutgrads, mode="rev", level=frame.level, query=frame.number, node=frame.label,
                      position=position, parent=parent, argnum=argnum, previous=None,
                      previous_flag=prev_g_flagged[1] if prev_g_flagged else NO_PREVIOUS, contribution=None,
                      result=None, result_flag=result[1], replaced=False)
                return
            value, mutable = result
            previous_flag = prev_g_flagged[1] if prev_g_flagged else NO_PREVIOUS
            values = self.values
            ingrads = frame.ingrads
            contribution = frame.kept_ingrads[position] if position < len(ingrads) and ingrads[position] is g \
                else self.keep(g)
            shared = False
            if value is g:
                kept = contribution
            elif type(value) in SCALARS:
                kept = value
            elif type(value) in box_types and type(value._value) in SCALARS and not self.by_reference:
                key = id(value._node)  # an outer trace's number (grad(grad(f))): Keeper's stored Boxed written out
                kept = (BOXED, value._value, self.nodes.levels.get(key, 0) if key in self.labels
                        else state.levels.get(value._trace, value._trace))
            else:
                kept = None
                if type(g) is SparseObject and parent is not None:  # xs[i] of a list
                    seen = frame.entries.get(parent)
                    if seen is not None and prev_g_flagged and prev_g_flagged[0] is seen[0]:
                        if not self.by_reference:
                            kept = summary_after_sparse_add(seen[0], seen[1], value, g)
                        elif mutable:  # shared already: its other elements' Versions, still live
                            kept = self.copy_on_write.shared_after_sparse_add(seen[0], seen[1], value, g, self.keep)
                            shared = kept is not None
                if kept is None:
                    kept = self.keep(value)
            if self.by_reference:
                if mutable and not shared and holds_reference(kept):  # autograd may write into it later
                    kept = self.copy_on_write.share(kept, value)
                if type(contribution) not in NO_REFERENCE or type(kept) not in NO_REFERENCE or previous is not None:
                    # (len(values): where this event starts)
                    hold_accumulation(frame.held, len(values), prev_g_flagged, previous, g, contribution, value, kept)
            write(values, AddOutgrads, mode="rev", level=frame.level, query=frame.number, node=frame.label,
                  position=position, parent=parent, argnum=argnum, previous=previous, previous_flag=previous_flag,
                  contribution=contribution, result=kept, result_flag=mutable, replaced=False)
            if parent is not None:
                frame.entries[parent] = (value, kept)
        except Exception as exc:
            self.fail(exc)

    def _add_outside_a_pass(self, prev_g_flagged, previous, g, result):
        """``add_outgrads`` with no frame open: a backward pass that began before this recording
        (reverse mode, its query and node unknown)."""
        value, mutable = result
        contribution = self.keep(g)
        kept = contribution if value is g else self.keep(value)
        if mutable and self.by_reference and holds_reference(kept):
            kept = self.copy_on_write.share(kept, value)
        write(self.values, AddOutgrads, mode="rev", level=self.nodes.current_level(), query=None, node=None, position=0,
              parent=None, argnum=None, previous=previous,
              previous_flag=prev_g_flagged[1] if prev_g_flagged else NO_PREVIOUS, contribution=contribution,
              result=kept, result_flag=mutable, replaced=False)

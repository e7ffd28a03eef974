"""Forward mode: a ``JVPNode`` under construction, and the ``add_outgrads`` calls ``sum_outgrads``
makes while it is built (mode ``fwd``)."""

import types

import autograd.core as core
import numpy as np

from .copy_on_write import hold, hold_accumulation
from .node_table import UNARY
from ..values import NO_REFERENCE, SCALARS, holds_reference
from .capture import is_part_of
from ..callsite import user_call_site
from ..fanout import guards_itself
from ..events import NO_PREVIOUS, AddOutgrads, JVPNodeCreated
from ..packers import inline_writes, write
from .. import compiled


def _summing_jvp_makers():
    """The code of autograd's own JVP makers, the ``jvp_argnums`` that ``defjvp`` and
    ``defjvp_argnum`` (so ``def_linear``) build: each returns ``sum_outgrads(...)`` and does nothing
    after, so a node's tangent is the result of its last ``add_outgrads``, unwritten since."""
    found = set()
    for maker in (core.defjvp, core.defjvp_argnum):  # (either may already be someone's wrapper)
        for const in getattr(getattr(maker, "__code__", None), "co_consts", ()):
            if isinstance(const, types.CodeType) and const.co_name == "jvp_argnums":
                found.add(const)
    return frozenset(found)


SUMMING_JVP_MAKERS = _summing_jvp_makers()  # (pinned in tests/recording/autograd/test_pinned.py)
_SUMMING_IDS = frozenset(map(id, SUMMING_JVP_MAKERS))  # (alive with autograd.core: hashing a code object is slow)


class JVPFrame:
    """A JVPNode under construction: its sum_outgrads calls are forward-mode add_outgrads events."""

    __slots__ = ("fun", "label", "name", "level", "argnums", "parents", "position", "sums", "last_value",
                 "last_kept")

    def __init__(self, fun, label, name, level, argnums, parents, sums):
        self.fun, self.label, self.name, self.level = fun, label, name, level
        self.argnums, self.parents = argnums, parents
        self.position = 0
        self.sums = sums  # built by one of SUMMING_JVP_MAKERS (capture auto only)
        self.last_value = self.last_kept = None  # the last add_outgrads result in this frame


_twin = compiled.twin("adtrace.recording.autograd._wrappers")
if _twin is not None:  # its wrappers write forward mode's common case themselves (begin_jvp_node, end_jvp_node,
    _twin.forward(JVPFrame, core.primitive_jvps, SUMMING_JVP_MAKERS)  # add_in_jvp_node), allocating the frames


@inline_writes
class ForwardMode:
    """The Recorder's forward-mode events (a mixin of ``Recorder``). Hot path under forward mode: the common case
    of begin_jvp_node, end_jvp_node and add_in_jvp_node under capture structure and auto is also written by the
    compiled wrappers (``_wrappers.c``: jvp_begun, jvp_ended, jvp_add_written), line by line: a change here is
    made there too (JVPFrame's slots are set there by name)."""

    @guards_itself
    def begin_jvp_node(self, fun, argnums, parents):
        if not self.live:  # (the guard, written out: one frame per callback)
            return None
        try:
            # once per primitive call under forward mode: the node table's lookups and the frame push written out
            nodes = self.nodes
            if len(parents) == 1:  # most nodes
                parent = parents[0]
                key = id(parent)
                labels = (nodes.labels.get(key) or nodes.unrecorded(parent),)
                level = nodes.levels[key]
            elif len(parents) == 2:  # a binary operation (x + sin(x))
                first, second = parents
                key = id(first)
                get = nodes.labels.get
                labels = (get(key) or nodes.unrecorded(first), get(id(second)) or nodes.unrecorded(second))
                level = nodes.levels[key]
            else:
                get = nodes.labels.get
                labels = ()
                for p in parents:  # (a loop: before Python 3.12 a comprehension builds and calls a function)
                    labels += (get(id(p)) or nodes.unrecorded(p),)
                level = nodes.levels[id(parents[0])] if parents else nodes.current_level()
            number = nodes.made
            nodes.made = number + 1
            names = nodes.names.get(fun) or nodes.name_of(fun)
            # the maker JVPNode.__init__ is about to look up (it could register another while it runs)
            sums = self.keeps_values and not self.by_reference and \
                id(getattr(core.primitive_jvps.get(fun), "__code__", None)) in _SUMMING_IDS
            argnums = nodes.distinct_argnums.setdefault(argnums, argnums)  # (see NodeTable.distinct_argnums)
            label = f"v{number}_{names[1]}"  # (labels.label_for written out, as in Nodes.on_vjp_node)
            frame = JVPFrame(fun, label, names[0], level, argnums, labels, sums)
            self.frames.append(frame)
            self.top = frame
            return frame
        except Exception as exc:
            self.fail(exc)

    def abort_jvp_node(self, frame):
        if frame is not None:  # (None: begin_jvp_node failed)
            self.pop(frame)

    @guards_itself
    def end_jvp_node(self, frame, node, value, args):
        if frame is None or not self.live:  # (None: begin_jvp_node failed; the guard, written out)
            return
        try:
            frames = self.frames
            if frames and frames[-1] is frame:  # the common case of pop
                frames.pop()
                self.top = frames[-1] if frames else None
            else:
                self.pop(frame)
            nodes, key = self.nodes, id(node)  # (NodeTable.add written out)
            nodes.labels[key] = frame.label  # (levels and argnums Sparse)
            if frame.level != 0 or key in nodes.levels:
                nodes.levels[key] = frame.level
            if frame.argnums is not UNARY or key in nodes.argnums:
                nodes.argnums[key] = frame.argnums
            if not self.keeps_values:
                kept = tangent = None
            elif not self.by_reference:  # capture "auto" copies what it keeps
                kept = value if type(value) in SCALARS else self.keep(value)
                g = node.g
                if frame.sums and frame.position and g is frame.last_value:
                    tangent = frame.last_kept  # sum_outgrads returned it: already a copy
                else:
                    tangent = self.keep(g)
            else:  # copy a tangent that is (part of) an argument (make_jvp's seed is protected: Keeper.protect)
                kept = self.keep_node_value(frame.level, frame.fun, value, args)
                tangent = self.keep(node.g, type(node.g) is np.ndarray and is_part_of(node.g, args))
                if type(tangent) not in NO_REFERENCE:  # make_jvp gives the end node's tangent to the user
                    hold(self.held_in_trace(frame.level), node.g, tangent, len(self.values))
            query = self.query
            site = user_call_site(self.relative_to) if self.keep_sites else None
            write(self.values, JVPNodeCreated, mode="fwd", level=frame.level, query=query and query.number,
                  label=frame.label, primitive=frame.name, argnums=frame.argnums, parents=",".join(frame.parents),
                  value=kept, tangent=tangent, site=site)
        except Exception as exc:
            self.fail(exc)

    def add_in_jvp_node(self, frame, prev_g_flagged, previous, g, result):
        """One step of the sum_outgrads that builds a JVPNode's tangent (``after_add_outgrads``
        with a forward frame on top). Hot path under forward mode: the event written inline."""
        value, mutable = result
        position = frame.position
        frame.position = position + 1
        parents, argnums = frame.parents, frame.argnums
        if not self.keeps_values:
            contribution = kept = None
        else:
            contribution = self.keep(g)
            kept = contribution if value is g else self.keep(value)
            if self.by_reference:
                if mutable and holds_reference(kept):
                    kept = self.copy_on_write.share(kept, value)
                # a tangent being summed may be the one make_jvp returns
                hold_accumulation(self.held_in_trace(frame.level), len(self.values), prev_g_flagged, previous,
                                  g, contribution, value, kept)
            frame.last_value, frame.last_kept = value, kept  # (what end_jvp_node may reuse)
        query = self.query
        write(self.values, AddOutgrads, mode="fwd", level=frame.level, query=query and query.number,
              node=frame.label, position=position, parent=parents[position] if position < len(parents) else None,
              argnum=argnums[position] if position < len(argnums) else None, previous=previous,
              previous_flag=prev_g_flagged[1] if prev_g_flagged else NO_PREVIOUS, contribution=contribution,
              result=kept, result_flag=mutable, replaced=False)

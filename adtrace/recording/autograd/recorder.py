"""The recorder of autograd: turns hooked autograd calls into events (it never formats anything).

One ``Recorder`` per ``record()`` block, fed by the wrappers of ``hooks`` through its callbacks
(``hooks.Callbacks``), each writing its event by name (``packers``). It names nodes in one
``node_table.NodeTable`` (label, level and argnums by ``id(node)``). Its events, one module each:
``nodes`` (roots, operation nodes, traces), ``backward`` (queries: visits, local VJPs,
accumulations), ``forward`` (JVP nodes); the state they share is set here, in ``__init__``.

Under capture ``auto`` every array an event keeps is a copy (or a summary). Under ``full`` values
are kept true by ``copy_on_write.CopyOnWrite``: the arrays autograd accumulates into
(``add_outgrads`` results flagged mutable, and the accumulator nodes of an inner backward pass)
are held through shared Versions, which take a copy just before autograd first writes into them (its
later states: the contributions added since, made when read).
"""

import numpy as np
from autograd.core import SparseObject
from autograd.tracer import box_types

from .. import compiled, values
from ..values import ARRAY_SUMMARY, BOXED, CONTAINER_SUMMARY, NO_REFERENCE, SCALARS
from ..eventlog import HEADS
from ..events import NO_PREVIOUS
from .copy_on_write import CopyOnWrite, hold
from ..fanout import guard_callbacks
from ..recorder import RecorderBase, RecorderWarning
from .backward import BackwardQueries, Query
from .hooks import Callbacks
from .forward import ForwardMode
from .node_table import UNARY, NodeTable, box_levels
from .nodes import ACCUMULATORS, NodeCall, Nodes

__all__ = ["Recorder", "RecorderWarning", "NodeCall"]


@guard_callbacks(Callbacks)
class Recorder(RecorderBase, Nodes, BackwardQueries, ForwardMode):
    """Hot path: one method call per hooked call, each writing its event's fields into the
    Recording's ``EventLog``; node identities through one dict lookup each."""

    # the attributes every hot path reads, as slots (an instance keeps its __dict__ for the rest): read at their
    # offset by Python's specialised loads and by _wrappers.c (no dict lookup by name: ~200 instructions each);
    # ``live`` (RecorderBase's) too: the compiled paths read it on every hook (registry.follow_generator's
    # property shadows it on a recorder entered in a generator)
    __slots__ = ("live", "keeps_values", "keep_sites", "by_reference", "inline_size", "query", "top", "labels",
                 "values", "nodes")

    def __init__(self, writer, keeper, keep_calls, keep_sites, relative_to=None):
        super().__init__(writer)
        self.keep = keeper.__call__  # a bound method: cheaper to call than the Keeper itself
        self.keeper = keeper  # (its protect / unprotect, under capture full)
        self.keep_calls, self.relative_to = keep_calls, relative_to
        self.keep_sites = keep_sites or keep_calls  # each node's user line (a stack walk per node)
        self.keeps_values = keeper.keeps_values  # False under capture "structure"
        self.by_reference = keeper.by_reference  # True under "full": copy-on-write (copy_on_write.py)
        self.inline_size = keeper.limit  # under "auto": arrays above it are summarized (None under "full")
        self.frames = []  # open Query and JVPFrame objects, innermost last
        self.nodes = NodeTable(self.frames)  # every node met: id(node) -> label, level, argnums
        self.labels = self.nodes.labels  # (read on every hot path: one attribute load less)
        keeper.box_level = box_levels(self.nodes)  # (no reference back to the recorder: see box_levels)
        self.top = None  # the innermost of them
        self.query = None  # the innermost open Query
        self.queries = 0  # backward passes begun
        self.copy_on_write = CopyOnWrite()
        self.jvp_seeds = {}  # level -> make_jvp's tangent seed, while its forward trace is open
        self.trace_holders = {}  # level -> the values the open trace holds by reference (Nodes.held_in_trace)
        writer.before_read(self.copy_on_write.freeze_all)  # events read mid-recording stay true

    def _release(self):
        """The recorder stops: the arrays its events hold by reference are autograd's (or the
        user's) from now on. Versions keep copies; so do the events of a pass or trace still open,
        which would have been detached at its end."""
        self.copy_on_write.freeze_all()
        if self.by_reference:
            if self.frames or self.trace_holders or self.failure is not None:  # (never detached: Histories made now)
                self.copy_on_write.make_all()
            for frame in self.frames:
                if type(frame) is Query:
                    self.copy_on_write.copy_held(self.writer, frame.held)
            for held in self.trace_holders.values():
                self.copy_on_write.copy_held(self.writer, held)
        self.writer.before_read(None)

    def push(self, frame):
        self.frames.append(frame)
        self.top = frame
        if type(frame) is Query:
            self.query = frame

    def pop(self, frame):
        frames = self.frames
        if frames and frames[-1] is frame:  # the innermost: the common case
            frames.pop()
        elif frame in frames:
            frames.remove(frame)
        self.top = frames[-1] if frames else None
        if frame is self.query:  # the innermost query left open (a loop: no generator per query)
            self.query = None
            for f in reversed(frames):
                if type(f) is Query:
                    self.query = f
                    break

    def kept(self, seen, value):
        """The kept value already taken of ``value`` (``seen``: a ``(live value, kept value)`` pair
        from this query, never written into since), or a new one."""
        if seen is not None and seen[0] is value:
            return seen[1]
        return self.keep(value)


_twin = compiled.twin("adtrace.recording.autograd._wrappers")
if _twin is not None:  # its wrappers write capture structure's visits, local VJPs and accumulations themselves
    _twin.structure(Recorder, BackwardQueries.on_toposort, HEADS, NO_PREVIOUS, UNARY)  # (their common case)
    # and capture auto's too, keeping its common values as the Keeper does (a local VJP's and an accumulation's other
    # values by the recorder's keep; a node's and forward mode's others by the callbacks)
    _twin.auto(SCALARS, NO_REFERENCE, box_types, np.ndarray, SparseObject, BOXED, ARRAY_SUMMARY, CONTAINER_SUMMARY,
               values)
    # and capture full's common node values and local VJPs' values, kept by reference as the callbacks keep them
    _twin.full(ACCUMULATORS, values.Version, hold)

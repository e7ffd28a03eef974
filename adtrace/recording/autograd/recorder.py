"""The recorder of autograd: turns hooked autograd calls into events (it never formats anything).

One ``Recorder`` per ``record()`` block, fed by the wrappers of ``hooks`` through its callbacks
(``hooks.Callbacks``). It names nodes (``labels``) in a table keyed by ``id(node)``: ``VJPNode``
has ``__slots__`` and no weak references, so nothing can be attached to a node. An entry is
written when the node is created, so an id that Python reuses after a node died is simply
overwritten. Its concerns, one module each: ``nodes`` (labels, levels, the node table),
``backward`` (queries: visits, local VJPs, accumulations), ``forward`` (JVP nodes).

Under capture ``auto`` every array an event keeps is a copy (or a summary). Under ``full`` values
are kept true by ``copy_on_write.CopyOnWrite``: the arrays autograd accumulates into
(``add_outgrads`` results flagged mutable, and the accumulator nodes of an inner backward pass)
are held through shared Versions, which take a copy just before autograd writes into them.
"""

from .copy_on_write import CopyOnWrite
from ..fanout import guard_callbacks
from ..recorder import RecorderBase, RecorderWarning
from .backward import BackwardQueries, _Query
from .hooks import Callbacks
from .forward import ForwardMode
from .nodes import NodeCall, Nodes, box_levels
from .state import state

__all__ = ["Recorder", "RecorderWarning", "NodeCall"]


@guard_callbacks(Callbacks)
class Recorder(RecorderBase, Nodes, BackwardQueries, ForwardMode):
    """Hot path: one method call per hooked call, each writing its event's fields into the
    Recording's ``EventLog``; node identities through one dict lookup each."""

    def __init__(self, recording, capture, keep_calls=False, keep_sites=False, root=None):
        super().__init__(recording)
        self.capture = capture.__call__  # a bound method: cheaper to call than the Capture itself
        self._capture = capture  # (its protect / unprotect, under capture full)
        self.keep_calls, self.root = keep_calls, root
        self.keep_sites = keep_sites or keep_calls  # each node's user line (a stack walk per node)
        self.keeps_values = capture.keeps_values  # False under capture "structure"
        self.by_reference = capture.by_reference  # True under "full": copy-on-write (adtrace.history)
        self._values = recording.log.values  # where events are written (adtrace.eventlog)
        # id(node) -> label, level, argnums: three dicts, no tuple per node for the garbage collector
        self._labels, self._levels, self._argnums = {}, {}, {}
        capture.box_level = box_levels(self._levels)  # (no reference back to the recorder: see box_levels)
        # one argnums tuple kept per distinct value, not autograd's fresh one per node: every tuple a
        # recording keeps brings Python's next garbage collection sooner
        self._argnums_kept = {}
        self._names = {}  # primitive -> (name, label suffix)
        self._count = 0
        self._unrecorded = 0
        self._frames = []  # open _Query and _JVPFrame objects, innermost last
        self._top = None  # the innermost of them
        self._query = None  # the innermost open _Query
        self._queries = 0
        self._history = CopyOnWrite()
        self._jvp_seeds = {}  # level -> make_jvp's tangent seed, while its forward trace is open
        self._trace_holders = {}  # level -> the values the open trace holds by reference (Nodes._held_in_trace)
        recording.before_read = self._history.freeze_all  # events read mid-recording stay true

    def _release(self):
        """The recorder stops: the arrays its events hold by reference are autograd's (or the
        user's) from now on. Versions keep copies; so do the events of a pass or trace still open,
        which would have been detached at its end."""
        self._history.freeze_all()
        if self.by_reference:
            for frame in self._frames:
                if type(frame) is _Query:
                    self._history.copy_held(self.recording, frame.held)
            for held in self._trace_holders.values():
                self._history.copy_held(self.recording, held)
        self.recording.before_read = None

    def _push(self, frame):
        self._frames.append(frame)
        self._top = frame
        if type(frame) is _Query:
            self._query = frame

    def _pop(self, frame):
        frames = self._frames
        if frames and frames[-1] is frame:  # the innermost: the common case
            frames.pop()
        elif frame in frames:
            frames.remove(frame)
        self._top = frames[-1] if frames else None
        if frame is self._query:  # the innermost query left open (a loop: no generator per query)
            self._query = None
            for f in reversed(frames):
                if type(f) is _Query:
                    self._query = f
                    break

    def _kept(self, seen, value):
        """The kept value already taken of ``value`` (``seen``: a ``(live value, kept value)`` pair
        from this query, never written into since), or a new one."""
        if seen is not None and seen[0] is value:
            return seen[1]
        return self.capture(value)

    def _current_level(self):
        return self._frames[-1].level if self._frames else max(state.depth - 1, 0)

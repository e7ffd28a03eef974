"""``Recording``: what a ``record()`` block yields, and the views later stages read from it.

It holds the events in the order autograd emitted them and the nodes table; everything else
(events per query, the graph, the per-statement state of ``backward_pass``) is derived from them.
A recording of another engine (``record(engine="micrograd")``) has the same events; its
``engine`` names the engine and its ``code`` (``engine_code.EngineCode``) holds the statements of
that engine's own ``backward()``, which reports and the page show in place of autograd's.

A ``Recording`` is read-only: its recorder writes through a ``RecordingWriter`` the session makes
for it (and hands to the engine's ``recorder(...)``). The writer appends each event's fields to an
``EventLog`` (``recording/eventlog.py``): building a frozen dataclass per event is a visible share
of the hot path on scalar workloads, so events are built when first read (``events``), once.
"""

import weakref
from functools import partial
from itertools import compress, repeat
from operator import and_, attrgetter, eq, indexOf, is_
from types import MappingProxyType

from .eventlog import EventLog
from . import events
from .events import BackwardEnd, BackwardStart, ToposortYielded, event_types
from .passes import backward_passes, user_query
from .snapshots import state_snapshots, tally

# How a Recording shows itself (Jupyter's _repr_*_ methods, to_html) and explains its gradient (explain): the
# stages that do are later ones, which this stage never imports; adtrace/__init__.py declares them here, all in
# one place.
RENDERERS = {}  # "markdown", "html" (to_html), "html_inline", "explain", "graph_svg", "dot", "graph_json"


class Recording:
    def __init__(self, capture, engine="autograd", code=None):
        self._capture = capture
        self._engine = engine
        self._code = code
        self._log = EventLog()  # what the recorder writes (through its RecordingWriter)
        self._events = []  # the first len(_events) events of the log, built
        self._built = 0  # where the first event not built yet starts in the log
        self._nodes = {}  # label -> RootCreated | NodeCreated | JVPRoot | JVPNodeCreated
        self._failure = None  # set when the recorder stopped after an internal error
        self._calls = {}  # label -> NodeCall, under record(calls=True) only
        self._before_read = None  # set by the recorder while it records
        self._derived = {}  # views read from every event (each query's events, the passes), until the events change
        self.argument_names = {}  # a traced call's leaf label -> the function's parameter it was made of (W)
        self.argnum = None  # the argument autograd's root is (a diff's record_call, or its saved file); None: not known

    @property
    def capture(self):
        """The capture level the values were taken under: ``auto``, ``full`` or ``structure``."""
        return self._capture

    @property
    def engine(self):
        """The engine recorded: ``"autograd"``, or ``"micrograd"`` for a class of micrograd's shape."""
        return self._engine

    @property
    def engine_name(self):
        """The engine as reports name it: ``autograd``, ``micrograd``, or a learner's class's own name."""
        code = self._code
        return code.title if code is not None and code.title else self._engine

    @property
    def code(self):
        """``EngineCode`` of an engine with its own ``backward()`` (None: autograd's ``backward_pass``)."""
        return self._code

    @property
    def failure(self):
        """``"Type: message"`` of the internal error that stopped the recorder early, else None."""
        if self._before_read is not None:  # (a deferred log told first: telling it may be what fails)
            self._before_read()
        return self._failure

    @property
    def calls(self):
        """``label -> NodeCall`` (each node's primitive call), under ``record(calls=True)`` only: a
        read-only mapping (``types.MappingProxyType``; ``dict(recording.calls)`` for a copy)."""
        return MappingProxyType(self._calls)

    @property
    def events(self):
        """Every event, in the order autograd emitted them."""
        events = self._events
        if self._built == len(self._log.values) and self._before_read is None:  # (built already: read per node)
            return events
        before_read = self._before_read
        if before_read is not None:  # (what the recorder still holds: copies to freeze, a deferred log to tell)
            before_read()
        log = self._log
        built = log.events_from(len(events))
        events += built
        node_types = _node_types()  # (a set of types: this reads every event)
        self._nodes.update({event.label: event for event in built if type(event) in node_types})
        self._built = len(log.values)
        return events

    def derived(self, name, compute):
        """``compute(self)``, a view read from every event, computed once while the events stay the same (a
        report reads each query's events and the passes several times: each a walk over every event)."""
        events = self.events
        found = self._derived.get(name)
        if found is None or found[0] != len(events):  # (more events since; an event corrected: cleared)
            found = self._derived[name] = (len(events), compute(self))
        return found[1]

    @property
    def nodes(self):
        """The nodes table: ``label -> RootCreated | NodeCreated | JVPRoot | JVPNodeCreated``."""
        self.events
        return self._nodes

    def __repr__(self):
        return (f"<Recording capture={self.capture!r}: {len(self.events)} events, "
                f"{len(self.nodes)} nodes, {len(self.queries)} backward queries>")

    def _repr_markdown_(self):
        """Jupyter shows a recording as its report (its renderer is declared in ``adtrace/__init__.py``)."""
        render = RENDERERS.get("markdown")
        return render(self) if render is not None else None

    def to_html(self, path=None, title=None):
        """The step-through page of this recording, written to ``path`` if given; returns the page (its
        renderer is declared in ``adtrace/__init__.py``)."""
        return RENDERERS["html"](self, path=path, title=title)

    def _repr_html_(self):
        """The page inline in Jupyter, in a sandboxed frame (its styles and keys stay its own)."""
        render = RENDERERS.get("html_inline")
        return render(self) if render is not None else None

    def graph_svg(self, path=None, title=None):
        """The graph as a standalone SVG picture, laid out by adtrace (no graphviz), written to ``path``
        if given; returns its text (``adtrace/view/graph_svg.py``)."""
        return RENDERERS["graph_svg"](self, path=path, title=title)

    def to_dot(self, path=None):
        """The graph in graphviz's DOT language, written to ``path`` if given; returns its text."""
        return RENDERERS["dot"](self, path=path)

    def graph_json(self, path=None):
        """The graph's nodes (label, primitive, the user's line, value) and edges (argument position)
        as JSON, written to ``path`` if given; returns its text."""
        return RENDERERS["graph_json"](self, path=path)

    def explain(self, wrt=None, name=None):
        """An ``Explanation`` per input element of the user's gradient (``adtrace/explain/``): ``wrt``
        selectors (``"x[3]"``, ``"params['W'][0, 1]"``), by default the elements whose gradient is zero,
        non-finite or largest. ``name``: the argument's name in the selectors shown; by default the one the
        ``wrt`` selectors use (``params``), else ``x`` (a recording does not keep the function's parameter
        names). Record with ``capture="full"``, ``sites=True`` and ``calls=True``. Of several gradient calls,
        the last one (not nested in another) is explained."""
        return RENDERERS["explain"](self, wrt=wrt, name=name)

    def save(self, path):
        """Write every event to ``path`` as JSON (what ``adtrace report --json`` writes); ``adtrace.load(path)``
        reads it back, in this process or another (its renderer is declared in ``adtrace/__init__.py``)."""
        RENDERERS["save"](self, path)

    def diff(self, other, rtol=None):
        """``diff.Diff`` of this backward pass (A) against ``other``'s (B): the nodes aligned by structure,
        the first divergence, the counts (``adtrace/diff/``; declared in ``adtrace/__init__.py``)."""
        return RENDERERS["diff"](self, other, rtol=rtol)

    def of_kind(self, *kinds):
        """The events of ``kinds`` (``kind`` strings such as ``"node"``, or event classes), in order."""
        wanted = event_types(*kinds)
        types = {t for t in events.EVENT_TYPES if issubclass(t, wanted)}  # (a set: this loop reads every event)
        return [e for e in self.events if type(e) in types]

    @property
    def queries(self):
        """The numbers of the backward queries (``backward_pass`` runs), in the order they began."""
        return [e.query for e in self.events if type(e) is BackwardStart]

    def query_events(self, query):
        """The backward-pass events of one query, in order (nested queries excluded)."""
        return list(self.derived("query_events", _events_by_query).get(query, ()))

    def visit_order(self, query):
        """The labels ``toposort`` yielded in this query."""
        found = self.derived("query_events", _events_by_query).get(query, ())  # (read in C: an event per node)
        return list(map(_node, compress(found, map(_is_visit, map(type, found)))))

    def gradient(self, query):
        """The cotangent this query returned (``None`` if it did not complete)."""
        found = self.derived("query_events", _events_by_query).get(query, ())
        try:
            return found[indexOf(map(type, found), BackwardEnd)].result  # (the first, found in C)
        except ValueError:
            return None

    def graph(self, end=None):
        """``label -> parent labels by argument position`` for reverse-mode nodes; with ``end``,
        only the nodes ``end`` depends on (the graph ``toposort(end)`` walks)."""
        rev, nodes = events.REV, self.nodes
        if end is None:
            return {label: getattr(node, "parents", ()) for label, node in nodes.items() if node.mode == rev}
        reached, stack, node_of = {}, [end], nodes.get  # (the nodes read as reached: no graph of every node first)
        while stack:
            label = stack.pop()
            if label not in reached:
                node = node_of(label)
                parents = reached[label] = getattr(node, "parents", ()) if node is not None and node.mode == rev else ()
                stack.extend(parents)
        return reached

    def passes(self):
        """One ``BackwardPass(query, parent, node)`` per query, in the order they began: the query
        it ran inside (``None`` for an outermost pass) and the node whose VJP ran it."""
        return backward_passes(self)

    def user_query(self):
        """The user's backward pass: the last one that ran inside no other (``None`` if none ran)."""
        return user_query(self)

    def snapshots(self, query):
        """The ``outgrads`` dict after each statement of ``backward_pass`` in this query (another
        engine: the ``.grad`` of each value written so far, after each statement of its ``backward()``)."""
        return self.replay(self.query_events(query))

    def replay(self, events):
        """The snapshot rows of some of a query's events, in order (its first events: a report that
        shows the first rows replays only those), in this recording's engine's statements."""
        return state_snapshots(events, self.code)

    def tally(self, events):
        """``snapshots.Tally``: how many snapshot rows ``replay(events)`` makes, and the kinds of the
        events that make none (counted without building the rows)."""
        return tally(events, self.code)

    def statement(self, event):
        """The statement that made ``event``: the engine's own when it has one (``code``), else
        the autograd statement its class names."""
        own = self.code.statement(event) if self.code is not None else None
        if own is not None:
            return own
        if event.mode == events.FWD and event.forward_statement:
            return event.forward_statement
        return event.statement


_node, _mode, _query = attrgetter("node"), attrgetter("mode"), attrgetter("query")
_is_visit = partial(is_, ToposortYielded)


def _node_types():
    return {t for t in events.EVENT_TYPES if t.is_node}


def _events_by_query(recording):
    """query -> its backward-pass events in order (``Recording.query_events``), in one walk."""
    by_query, rev = {}, events.REV
    backward = {t for t in events.EVENT_TYPES if t.in_backward_pass}  # (a set of types: this loop reads every event)
    recorded = recording.events
    # the backward-pass events picked in C (their type and mode read by map): one query's, a scalar program's, whole
    picked = list(compress(recorded, map(and_, map(backward.__contains__, map(type, recorded)),
                                         map(eq, map(_mode, recorded), repeat(rev)))))
    queries = set(map(_query, picked))
    if len(queries) <= 1:
        return {queries.pop(): picked} if picked else {}
    query, found = None, None  # (the last event's query and its list: a pass's events mostly follow one another)
    for e in recording.events:
        if type(e) in backward and e.mode == rev:
            if e.query != query or found is None:
                query = e.query
                found = by_query.get(query)
                if found is None:
                    found = by_query[query] = []
            found.append(e)
    return by_query


class RecordingWriter:
    """The write side of one ``Recording``, for its recorder alone: the session makes it and hands it
    to the engine's ``recorder(...)``; readers (report, view, compare, checker, tools) never see it.

    ``values`` is the event log's list itself: the hot path appends to it through a local reference
    (``packers.write``), as it did before the writer existed. The recording is held weakly: a recording
    holds what its recorder still has to tell it (``before_read``), and one no longer referred to goes at
    once, with all it kept, not at the collector's next full collection; the recorder writes on unread."""

    __slots__ = ("_recording", "_log", "values")

    def __init__(self, recording):
        self._recording = weakref.ref(recording)
        self._log = recording._log  # (it refers to no recorder)
        self.values = recording._log.values  # [type tag, slot, ..., type tag, slot, ...]

    @property
    def log(self):
        """The ``EventLog`` written to (its stored form: for tests of the layout)."""
        return self._log

    def update(self, start, change):
        """Correct the stored fields of the event starting at ``start`` in the log (copy-on-write),
        and the event if already built."""
        recording, log = self._recording(), self._log
        log.update(start, change)
        if recording is None:
            return
        recording._derived.clear()
        if start < recording._built:
            index = log.index_at(start)
            event = recording._events[index] = log.event(index)
            if event.is_node:
                recording._nodes[event.label] = event

    def add_call(self, label, call):
        """Keep the primitive call that made node ``label`` (``record(calls=True)``)."""
        recording = self._recording()
        if recording is not None:
            recording._calls[label] = call

    def before_read(self, callback):
        """Call ``callback`` before events are built while recording (events read mid-recording
        stay true); None: no more."""
        recording = self._recording()
        if recording is not None:
            recording._before_read = callback

    def fail(self, failure):
        """The recorder stopped after an internal error (``failure``: ``"Type: message"``)."""
        recording = self._recording()
        if recording is not None:
            recording._failure = failure

"""The recorder's public vocabulary: one frozen dataclass per kind of event, each defined once.

An event class says everything about its kind in one place: ``kind`` (the name users filter by),
its fields, how each field is stored in the event log (``stored``: one slot, a ``(value, flag)``
pair, labels joined into one string, or a counted tail), the autograd ``statement`` that emits it
(the call-sequence table shows it), and for a backward-pass event the statements of
``backward_pass`` it stands for (``steps``: a row of the STATE SNAPSHOT each, counted without
replaying) and how it changes the ``outgrads`` dict (``replay``, for every engine). The event
log's layout, the recorder's type tags, the report's statement texts and the snapshot replay are
all read from here; consumers tell events apart by class (``isinstance``, or ``type(e) is`` in a
loop over every event), never by comparing ``kind`` strings, which are for users
(``Recording.of_kind``, ``event_types``, ``NODE_KINDS``, ``BACKWARD_PASS_KINDS``) and the JSON export.

Every event carries ``mode`` (``REV`` or ``FWD``: ``"rev"`` or ``"fwd"``), ``level`` (0 for the outermost trace, 1 for
the inner one under ``grad(grad(f))``) and ``query`` (the ``backward_pass`` run it belongs to, from
1; ``None`` outside any backward pass). Nodes are named by label (``labels.py``), never by a live
``Node`` or an ``id()``. Values are captured under the recording's capture level (``values.py``):
exact values, ``ArraySummary``, ``Sparse``, ``Boxed``, or ``None`` under ``capture="structure"``.
"""

import warnings
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Optional

# -------------------- how a field is stored in the event log --------------------

HEAD = "head"  # in the event's head: one tuple (type tag, mode, level, query) shared by every event alike
ONE = "one"  # one slot
PAIR = "pair"  # autograd's (value, mutable) pair as two slots; NO_PREVIOUS in the flag slot means None
LABELS = "labels"  # a tuple of node labels as one comma-separated string (labels hold no commas)
TAIL = "tail"  # the last field: a tuple stored as its length followed by its items
NO_PREVIOUS = None  # the flag slot of a PAIR that was None (add_outgrads' first contribution)

REV, FWD = "rev", "fwd"  # an event's mode: reverse (backward_pass, VJPs) or forward (JVPs); the only spellings


def stored(how):
    """A dataclass field stored as ``how`` (``HEAD``, ``PAIR``, ``LABELS`` or ``TAIL``)."""
    return field(metadata={"stored": how})


def layout(event_type):
    """``(name, how)`` per field of an event type, in the order the recorder writes them."""
    return tuple((f.name, f.metadata.get("stored", ONE)) for f in fields(event_type))


def parameters(event_type):
    """The names a write of ``event_type`` takes, in stored order (a ``PAIR`` field as ``<name>``
    and ``<name>_flag``)."""
    names = []
    for name, how in layout(event_type):
        names += [name, f"{name}_flag"] if how == PAIR else [name]
    return tuple(names)


# -------------------- shorter stored forms of an event --------------------
# An event type may declare ``forms``: stored forms that leave out what the common case makes
# constant (a scalar program's log was most of what its recording kept). Each is a dict
# ``parameter -> Is(value) | Same(parameter) | ONE_ITEM``; the writer stores an event in the first
# form whose conditions all hold (else whole), under its own tag, and the event log reads it back
# into the same event.


class Is:
    """The parameter is this very object (``is``): not stored, given back on read."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


class Same:
    """The parameter is the same object as parameter ``name``'s, a value holding no array (a copy-on-write
    correction, which changes each stored slot apart, never finds it): stored once."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name


ONE_ITEM = "one item"  # a tail of exactly one item: the item stored alone, without its count
# ToposortYielded's position given as VISITS: not stored, counted on read (the ToposortYielded events of its query
# before it); a recorder gives it where the position it would give is that count (autograd's recorder)
VISITS = "".join(("<adtrace ", "visits>"))  # (made at run time: no position a program gives is this object)
FORM_STEP = 1000  # the tag of form k (from 1) of a type: its type tag + FORM_STEP * k
UNARY = (0,)  # the argnums of a node with one boxed argument, the first (autograd's node table keeps this one tuple)


# -------------------- the statements of backward_pass (autograd 1.9.1) --------------------

INIT = "outgrads = {end_node: (g, False)}"
YIELD = "for node in toposort(end_node)"
POP = "outgrad = outgrads.pop(node)"
VJP = "ingrads = node.vjp(outgrad[0])"
ADD = "outgrads[parent] = add_outgrads(outgrads.get(parent), ingrad)"
RETURN = "return outgrad[0]"
NO_PARENTS = "for parent, ingrad in zip(node.parents, ingrads)"  # reached with no parents: a root's vjp returns ()

EVENT_TYPES = ()  # every event class; its position is the type tag the event log stores


def event(cls):
    """Make ``cls`` a frozen event dataclass and give it the next type tag (a tuple rebound, not a
    list: a test declares a throwaway kind after import and puts the tuple back)."""
    global EVENT_TYPES
    cls = dataclass(frozen=True, slots=True)(cls)
    cls.index = len(EVENT_TYPES)
    EVENT_TYPES += (cls,)
    return cls


def event_types(*kinds):
    """The event classes of ``kinds`` (``kind`` strings, as users filter by, or classes); a kind
    no class has matches nothing."""
    named = {t.kind: t for t in EVENT_TYPES}
    return tuple(named[k] if isinstance(k, str) else k for k in kinds if not isinstance(k, str) or k in named)


@dataclass(frozen=True, slots=True)
class Event:
    kind: ClassVar[str] = "event"
    statement: ClassVar[str] = ""  # the autograd statement that emits it (reverse mode)
    forward_statement: ClassVar[Optional[str]] = None  # the same in forward mode, where it differs
    is_node: ClassVar[bool] = False  # it creates a node (the Recording's nodes table)
    in_backward_pass: ClassVar[bool] = False  # it is a step of backward_pass (a query's events)
    index: ClassVar[int]  # the type tag (set by @event)
    forms: ClassVar[tuple] = ()  # shorter stored forms, tried in order (see Is)
    steps: ClassVar[tuple] = ()  # the statements of backward_pass it stands for, in order: a snapshot row each
    # (few values, the same for most events: stored once in the event log, in heads the events share)
    mode: str = stored(HEAD)
    level: int = stored(HEAD)
    query: Optional[int] = stored(HEAD)

    @classmethod
    def count_rows(cls, n, events, statements):
        """How many snapshot rows the ``n`` events of this class among ``events`` make for an engine
        whose backward pass has ``statements`` (``snapshots.tally``: counted, not replayed)."""
        return n * sum(statement in statements for statement in cls.steps)

    def replay(self, run):
        """Apply this step of a backward pass to ``run`` (``snapshots.Replay``, for every engine):
        ``run.write(label, (value, mutable))`` a gradient, ``run.visit`` / ``run.take`` a node, and
        ``run.emit(self, statement, node, **row)`` the row of each statement of ``backward_pass`` it
        stands for (``steps``; an engine without that statement makes no row). An event that is no
        step of a backward pass makes none."""

    def code_key(self):
        """Its key in an engine's ``EngineCode.statements`` (the statement of that engine's own code)."""
        return self.kind


@event
class RootCreated(Event):
    """``VJPNode.new_root()`` in ``make_vjp``: the input node (it never runs ``__init__``)."""

    kind: ClassVar[str] = "root"
    statement: ClassVar[str] = "root = VJPNode.new_root()"
    is_node: ClassVar[bool] = True
    label: str


@event
class NodeCreated(Event):
    """``VJPNode.__init__`` inside a primitive call: an operation node and its local rule."""

    kind: ClassVar[str] = "node"
    statement: ClassVar[str] = "VJPNode(ans, fun, args, kwargs, argnums, parents)"
    is_node: ClassVar[bool] = True
    label: str
    primitive: str
    argnums: tuple
    parents: tuple = stored(LABELS)  # parent labels, aligned with argnums (one per boxed argument position)
    value: Any
    site: Optional[str] = None  # the user's line that made it, "path:line" (record(sites=True))
    forms: ClassVar[tuple] = ({"argnums": Is(UNARY), "value": Is(None), "site": Is(None)},  # structure
                              {"argnums": Is(UNARY), "site": Is(None)})


@event
class TraceReturned(Event):
    """``end_value, end_node = trace(start_node, fun, x)`` in ``make_vjp`` / ``make_jvp``."""

    kind: ClassVar[str] = "trace"
    statement: ClassVar[str] = "end_value, end_node = trace(root, fun, x)"
    forward_statement: ClassVar[str] = "end_value, end_node = trace(JVPNode root, fun, x)"
    root: str
    end: Optional[str]  # None: "Output seems independent of input", no backward pass follows
    input: Any
    output: Any
    independent: bool


@event
class BackwardStart(Event):
    """``outgrads = {end_node: (g, False)}``: one backward query starts with its seed ``g``."""

    kind: ClassVar[str] = "backward_start"
    statement: ClassVar[str] = "vjp(g): backward_pass(g, end_node)"
    in_backward_pass: ClassVar[bool] = True
    steps: ClassVar[tuple] = (INIT,)
    end: str
    seed: Any

    def replay(self, run):
        run.write(self.end, (self.seed, False))
        run.emit(self, INIT, self.end, outgrad=self.seed)


@event
class ToposortYielded(Event):
    """``for node in toposort(end_node)``: the node visited next (position counts from 0)."""

    kind: ClassVar[str] = "toposort"
    statement: ClassVar[str] = YIELD
    in_backward_pass: ClassVar[bool] = True
    steps: ClassVar[tuple] = (YIELD, POP)
    node: str
    position: int
    forms: ClassVar[tuple] = ({"position": Is(VISITS)},)

    def replay(self, run):
        run.visit(self.node)
        run.emit(self, YIELD, self.node)
        run.emit(self, POP, self.node, outgrad=run.take(self.node))


@event
class VJPCalled(Event):
    """``ingrads = node.vjp(outgrad[0])``: the node's local VJP, its input and its output."""

    kind: ClassVar[str] = "vjp"
    statement: ClassVar[str] = VJP
    in_backward_pass: ClassVar[bool] = True
    steps: ClassVar[tuple] = (VJP,)  # and NO_PARENTS after it when ingrads is () (a root's)
    node: str
    outgrad: Any
    ingrads: tuple = stored(TAIL)  # one cotangent per parent position (a generator VJP is materialised)
    forms: ClassVar[tuple] = ({"outgrad": Is(None), "ingrads": Is((None,))},  # one parent, under structure
                              {"ingrads": ONE_ITEM})

    @classmethod
    def count_rows(cls, n, events, statements):
        rows = n if VJP in statements else 0
        if NO_PARENTS in statements:
            ingrads = [e.ingrads for e in events if type(e) is cls]  # (a list comprehension: every event read)
            rows += len(ingrads) - sum(map(bool, ingrads))  # (the empty ones, counted in C)
        return rows

    def replay(self, run):
        run.emit(self, VJP, self.node, outgrad=self.outgrad, ingrads=self.ingrads)
        if len(self.ingrads) == 0:
            run.emit(self, NO_PARENTS, self.node, ingrads=())


@event
class AddOutgrads(Event):
    """``outgrads[parent] = add_outgrads(outgrads.get(parent), ingrad)`` in ``backward_pass``, or
    one step of ``sum_outgrads`` inside a ``JVPNode`` (mode ``fwd``).

    ``node`` made the contribution (reverse) or is being built (forward); ``position`` indexes its
    parents, ``argnum`` is the argument position; ``previous`` and ``result`` are autograd's own
    ``(value, mutable)`` pairs, ``previous`` None on the first contribution.

    In an engine of micrograd's shape it is a write into ``parent.grad`` by ``node``'s
    ``_backward`` (``node`` None: by ``backward()`` itself, e.g. zeroing); the flag of each pair
    says whether the value was written in place (an ndarray's ``+=``), the nearest to autograd's
    ``mutable``. ``replaced`` True: the write assigned the contribution (``grad = c``) and threw
    the previous value away, which autograd's ``add_outgrads`` never does; None: not known.
    """

    kind: ClassVar[str] = "add_outgrads"
    statement: ClassVar[str] = ADD
    forward_statement: ClassVar[str] = "sum_outgrads: add_outgrads(prev_g_flagged, g)"
    in_backward_pass: ClassVar[bool] = True
    steps: ClassVar[tuple] = (ADD,)
    node: Optional[str]
    position: int
    parent: Optional[str]
    argnum: Optional[int]
    previous: Optional[tuple] = stored(PAIR)
    contribution: Any
    result: tuple = stored(PAIR)
    replaced: Optional[bool] = False  # the write replaced the previous value instead of adding to it
    # the first contribution to a node's first parent position, by a value kept as it is (a scalar chain's)
    forms: ClassVar[tuple] = (
        {"contribution": Is(None), "position": Is(0), "argnum": Is(0), "previous": Is(None),  # structure's
         "previous_flag": Is(NO_PREVIOUS), "result": Is(None), "result_flag": Is(False), "replaced": Is(False)},
        {"position": Is(0), "argnum": Is(0), "previous": Is(None), "previous_flag": Is(NO_PREVIOUS),
         "result": Same("contribution"), "result_flag": Is(False), "replaced": Is(False)})

    def replay(self, run):
        run.write(self.parent, self.result)
        run.emit(self, ADD, self.node, ingrads=self.contribution, previous=self.previous, parent=self.parent,
                 replaced=self.replaced)

    def code_key(self):
        return self.kind if self.node is not None else "write"  # a write by the engine's backward() itself


@event
class BackwardEnd(Event):
    """``return outgrad[0]``: the cotangent handed back (``error`` names an exception instead)."""

    kind: ClassVar[str] = "backward_end"
    statement: ClassVar[str] = RETURN
    in_backward_pass: ClassVar[bool] = True
    steps: ClassVar[tuple] = (RETURN,)
    end: str
    result: Any
    error: Optional[str]

    def replay(self, run):
        run.emit(self, RETURN, self.end, outgrad=self.result)


@event
class JVPRoot(Event):
    """``JVPNode.new_root(g)`` in ``make_jvp``'s ``jvp``: the input node and its tangent ``g``."""

    kind: ClassVar[str] = "jvp_root"
    statement: ClassVar[str] = "root = JVPNode.new_root(g)"
    is_node: ClassVar[bool] = True
    label: str
    tangent: Any


@event
class JVPNodeCreated(Event):
    """``JVPNode.__init__``: an operation node in forward mode with its tangent ``self.g``."""

    kind: ClassVar[str] = "jvp_node"
    statement: ClassVar[str] = "JVPNode(ans, fun, args, kwargs, argnums, parents)"
    is_node: ClassVar[bool] = True
    label: str
    primitive: str
    argnums: tuple
    parents: tuple = stored(LABELS)
    value: Any
    tangent: Any
    site: Optional[str] = None  # the user's line that made it, "path:line" (record(sites=True))


_RENAMED = {"LocalVJP": VJPCalled, "ToposortYield": ToposortYielded}


def __getattr__(name):
    if name == "NODE_KINDS":  # the kinds of the events that create a node
        return tuple(t.kind for t in EVENT_TYPES if t.is_node)
    if name == "BACKWARD_PASS_KINDS":  # the kinds of the steps of backward_pass (a query's events)
        return tuple(t.kind for t in EVENT_TYPES if t.in_backward_pass)
    if name in _RENAMED:  # the names these classes had before 0.2, kept as deprecated aliases
        new = _RENAMED[name]
        warnings.warn(f"adtrace.events.{name} is now {new.__name__}", DeprecationWarning, stacklevel=2)
        return new
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

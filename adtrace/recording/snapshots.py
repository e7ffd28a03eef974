"""The STATE SNAPSHOT of one backward query: ``outgrads`` after each statement of ``backward_pass``.

``backward_pass`` in autograd 1.9.1::

    outgrads = {end_node: (g, False)}
    for node in toposort(end_node):
        outgrad = outgrads.pop(node)
        ingrads = node.vjp(outgrad[0])
        for parent, ingrad in zip(node.parents, ingrads):
            outgrads[parent] = add_outgrads(outgrads.get(parent), ingrad)
    return outgrad[0]

The dict itself is never recorded; it is replayed from the events, each applying its own step
(``Event.replay``): the seed, each visit (the ``pop`` takes the entry the replay holds for that
node), each ``add_outgrads`` result. For ``z = x*x`` at 3 the states read ``{M: (1, False)}``,
``{}``, ``{R: (3, False)}``, ``{R: (6, True)}``, ``{}``, and the user receives 6.

An engine of micrograd's shape keeps no such dict: each value's ``.grad`` is its running sum and
stays after the visit. The same replay keeps the ``.grad`` of every value written so far (how an
engine keeps its gradients is data: ``OUTGRADS``, ``GRADS``), one row per statement of the
engine's own ``backward()`` (``engine_code``): for ``x*x`` at 3, ``{M: 1}``, then
``{M: 1, x: 3}``, ``{M: 1, x: 6}``.

One replay for every engine (``replay``) makes the rows the report and the page read (``Row``);
``state_snapshots`` gives them as the public ``StateSnapshot`` (``Recording.snapshots``), and
``tally`` counts them without replaying (each event class declares its ``steps``).
"""

from collections import Counter, namedtuple
from dataclasses import dataclass
from typing import Any, Optional

from .events import ADD, INIT, NO_PARENTS, POP, RETURN, VJP, YIELD

STATEMENTS = (INIT, YIELD, POP, VJP, ADD, NO_PARENTS, RETURN)
__all__ = ["StateSnapshot", "state_snapshots", "STATEMENTS", "INIT", "YIELD", "POP", "VJP", "ADD", "NO_PARENTS",
           "RETURN"]


@dataclass(frozen=True)
class StateSnapshot:
    """One executed statement and the ``outgrads`` dict right after it (label -> (value, flag))."""

    step: int
    statement: str
    node: Optional[str]
    outgrad: Any = None  # the seed g, the popped (value, flag) pair, the vjp input, or the result
    ingrads: Any = None  # the vjp's whole output, or the one ingrad being added
    previous: Any = None  # outgrads.get(parent) before add_outgrads
    parent: Optional[str] = None
    outgrads: dict = None  # (an engine of micrograd's shape: label -> .grad, each value written so far)
    kind: Optional[str] = None  # the kind of the event that made the row
    replaced: Optional[bool] = None  # a write that replaced the previous value (AddOutgrads.replaced)


@dataclass(frozen=True)
class Keeping:
    """How an engine keeps its gradients during a backward pass: what its snapshot rows differ by."""

    pairs: bool  # autograd's (value, mutable) pairs; else a value's .grad alone
    pops: bool  # a visit pops the node's entry (outgrads.pop); else the .grad stays
    name_visit: bool  # a row names the node being visited; else the node of the event that made it
    statements: tuple  # the statements of backward_pass it has a row for
    says_kind: bool  # a row says the kind of the event that made it (StateSnapshot.kind: autograd's never did)


OUTGRADS = Keeping(pairs=True, pops=True, name_visit=True, statements=STATEMENTS, says_kind=False)  # backward_pass
GRADS = Keeping(pairs=False, pops=False, name_visit=False, statements=(INIT, YIELD, VJP, ADD, RETURN),
                says_kind=True)  # micrograd's backward()


class Row(namedtuple("Row", "step stands_for node event written outgrads kind text outgrad ingrads previous parent "
                             "replaced")):
    """A snapshot row as the replay makes it: a ``StateSnapshot`` (``snapshot()``) and what the
    report and the page read besides: the statement of ``backward_pass`` it ``stands_for``, the
    ``event`` that made it, and ``written``, the ``(label, entry)`` its statement put in the state
    (the seed, an add_outgrads result), else None. ``outgrads`` is None unless the replay copied
    the state into each row (``states``). (A tuple, its text read when asked: the page replays
    every event of every pass.)"""

    __slots__ = ()

    @property
    def statement(self):
        """The row's statement as the engine writes it."""
        return self.text(self.stands_for, self.event)

    def snapshot(self):
        return StateSnapshot(self.step, self.statement, self.node, self.outgrad, self.ingrads, self.previous,
                             self.parent, self.outgrads, self.kind, self.replaced)


_new_row = tuple.__new__  # (Row's fields in order, without the namedtuple's own __new__: a call less per row)


class Replay:
    """What an event's ``replay`` acts on: the state it changes and the rows it makes (``emit``)."""

    def __init__(self, keeping, text, states):
        self.keeping, self.text = keeping, text  # text(statement, event): the row's statement as the engine writes it
        self.states = states  # copy the state into each row (for micrograd's .grads, which stay, quadratic)
        self.state, self.visiting, self.written, self.rows = {}, None, None, []
        self.pairs, self.statements = keeping.pairs, keeping.statements  # (read per row)
        self.made = 0  # rows made so far

    def write(self, label, pair):
        """A gradient written: autograd's ``(value, mutable)`` pair, of which an engine of
        micrograd's shape keeps the value."""
        entry = self.state[label] = pair if self.pairs else pair[0]
        self.written = (label, entry)

    def visit(self, label):
        self.visiting = label

    def take(self, label):
        """The entry the visit of ``label`` reads: popped from ``outgrads``; a ``.grad`` stays (None)."""
        return self.state.pop(label, None) if self.keeping.pops else None

    def emit(self, event, statement, node, outgrad=None, ingrads=None, previous=None, parent=None, replaced=None):
        """The row of ``statement`` (of ``backward_pass``) made by ``event``, if the engine has one."""
        written = self.written
        self.written = None
        if statement not in self.statements:
            return
        keeping = self.keeping
        if keeping.pairs:
            replaced = None  # autograd's add_outgrads never replaces
        elif previous is not None:
            previous = previous[0]
        self.made += 1
        self.rows.append(_new_row(Row, (self.made, statement, self.visiting if keeping.name_visit else node, event,
                                        written, dict(self.state) if self.states else None,
                                        event.kind if keeping.says_kind else None, self.text, outgrad, ingrads,
                                        previous, parent, replaced)))


def replay(events, code=None, states=True):
    """Replay one query's events (``Recording.query_events``) into its snapshot rows (``Row``), the
    one replay for every engine: autograd's ``outgrads`` after each statement of ``backward_pass``,
    or with ``code`` (an engine's ``EngineCode``) the ``.grad`` of each value written so far after
    each statement of its ``backward()``. ``states=False``: no copy of the state in each row.

    The rows come one event at a time (an iterator): the page reads each once, and rows that
    live no longer than that are never promoted by the garbage collector."""
    if code is None:
        run = Replay(OUTGRADS, lambda statement, event: statement, states)
    else:
        run = Replay(GRADS, lambda statement, event: code.statement(event) or event.kind, states)
    rows = run.rows
    for event in events:
        event.replay(run)
        if rows:
            yield from rows
            rows.clear()


def state_snapshots(events, code=None):
    """The ``StateSnapshot`` rows of ``replay(events, code)`` (``Recording.snapshots``)."""
    return [row.snapshot() for row in replay(events, code)]


@dataclass(frozen=True)
class Tally:
    rows: int  # how many rows the replay makes
    rowless: dict  # kind -> how many of the events made no row (a kind that is no step of the pass)


def tally(events, code=None):
    """What ``replay(events, code)`` makes, counted without replaying: each event class says how
    many rows its events make (``Event.count_rows``, from its ``steps``)."""
    statements = (OUTGRADS if code is None else GRADS).statements
    rows, rowless = 0, {}
    for event_type, n in Counter(map(type, events)).items():
        made = event_type.count_rows(n, events, statements)
        rows += made
        if not made:
            rowless[event_type.kind] = rowless.get(event_type.kind, 0) + n
    return Tally(rows, rowless)

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
(``Event.replay``, one replay for every engine): the seed, each visit (the ``pop`` takes the
entry the replay holds for that node), each ``add_outgrads`` result. For ``z = x*x`` at 3 the
states read ``{M: (1, False)}``, ``{}``, ``{R: (3, False)}``, ``{R: (6, True)}``, ``{}``, and the
user receives 6.

An engine of micrograd's shape keeps no such dict: each value's ``.grad`` is its running sum and
stays after the visit. The same replay keeps the ``.grad`` of every value written so far (how an
engine keeps its gradients is data: ``OUTGRADS``, ``GRADS``), one row per statement of the
engine's own ``backward()`` (``engine_code``): for ``x*x`` at 3, ``{M: 1}``, then
``{M: 1, x: 3}``, ``{M: 1, x: 6}``.
"""

from dataclasses import dataclass, field
from typing import Any, Optional

from .events import ADD, INIT, NO_PARENTS, POP, RETURN, VJP, YIELD

STATEMENTS = (INIT, YIELD, POP, VJP, ADD, NO_PARENTS, RETURN)
__all__ = ["StateSnapshot", "replay", "tally", "state_snapshots", "STATEMENTS", "INIT", "YIELD", "POP", "VJP", "ADD",
           "NO_PARENTS", "RETURN"]


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
    stands_for: Optional[str] = None  # the statement of backward_pass it stands for (autograd: its statement)
    event: Any = field(default=None, repr=False, compare=False)  # the event that made it


@dataclass(frozen=True)
class Keeping:
    """How an engine keeps its gradients during a backward pass: what its snapshot rows differ by."""

    pairs: bool  # autograd's (value, mutable) pairs; else a value's .grad alone
    pops: bool  # a visit pops the node's entry (outgrads.pop); else the .grad stays
    name_visit: bool  # a row names the node being visited; else the node of the event that made it
    statements: tuple  # the statements of backward_pass it has a row for


OUTGRADS = Keeping(pairs=True, pops=True, name_visit=True, statements=STATEMENTS)  # autograd's backward_pass
GRADS = Keeping(pairs=False, pops=False, name_visit=False, statements=(INIT, YIELD, VJP, ADD, RETURN))  # micrograd's


class Replay:
    """What an event's ``replay`` acts on: the state it changes and the rows it makes (``emit``)."""

    def __init__(self, keeping, text, rows=True):
        self.keeping, self.text = keeping, text  # text(statement, event): the row's statement as the engine writes it
        self.state, self.visiting = {}, None
        self.rows, self.count = [] if rows else None, 0  # rows=False: only count them
        self.rowless = {}  # kind -> events that made no row

    def write(self, label, pair):
        """A gradient written: autograd's ``(value, mutable)`` pair, of which an engine of
        micrograd's shape keeps the value."""
        self.state[label] = pair if self.keeping.pairs else pair[0]

    def visit(self, label):
        self.visiting = label

    def take(self, label):
        """The entry the visit of ``label`` reads: popped from ``outgrads``; a ``.grad`` stays (None)."""
        return self.state.pop(label, None) if self.keeping.pops else None

    def emit(self, event, statement, node, **fields):
        """The row of ``statement`` (of ``backward_pass``) made by ``event``, if the engine has one."""
        keeping = self.keeping
        if statement not in keeping.statements:
            return
        self.count += 1
        if self.rows is None:
            return
        if keeping.pairs:
            fields.pop("replaced", None)  # autograd's add_outgrads never replaces
        elif fields.get("previous") is not None:
            fields["previous"] = fields["previous"][0]
        self.rows.append(StateSnapshot(self.count, self.text(statement, event), self.visiting if keeping.name_visit
                                       else node, outgrads=dict(self.state), kind=event.kind, stands_for=statement,
                                       event=event, **fields))


def replay(events, code=None):
    """Replay one query's events (``Recording.query_events``) into its snapshot rows: autograd's
    ``outgrads`` after each statement of ``backward_pass``, or with ``code`` (an engine's
    ``EngineCode``) the ``.grad`` of each value written so far after each statement of its
    ``backward()``."""
    return _run(events, code, True).rows


@dataclass(frozen=True)
class Tally:
    rows: int  # how many rows the replay makes
    rowless: dict  # kind -> how many of the events made no row (a kind that is no step of the pass)


def tally(events, code=None):
    """What ``replay(events, code)`` makes, counted without building the rows (no state is copied)."""
    run = _run(events, code, False)
    return Tally(run.count, run.rowless)


def _run(events, code, rows):
    if code is None:
        run = Replay(OUTGRADS, lambda statement, event: statement, rows)
    else:
        run = Replay(GRADS, lambda statement, event: code.statement(event) or event.kind, rows)
    for event in events:
        made = run.count
        event.replay(run)
        if run.count == made:
            run.rowless[event.kind] = run.rowless.get(event.kind, 0) + 1
    return run


def state_snapshots(events):
    """Replay one query's events of autograd into per-statement snapshots."""
    return replay(events)

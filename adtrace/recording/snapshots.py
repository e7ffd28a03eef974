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
stays after the visit. ``grad_snapshots`` replays its events into the ``.grad`` of every value
written so far, after each statement of the engine's own ``backward()`` (``engine_code``): for
``x*x`` at 3, ``{M: 1}``, then ``{M: 1, x: 3}``, ``{M: 1, x: 6}``.
"""

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


def state_snapshots(events):
    """Replay one query's events (``Recording.query_events``) into per-statement snapshots."""
    rows, state = [], {}
    node = None  # the node being visited: the rows of its vjp and add_outgrads name it

    def emit(statement, **fields):
        nonlocal node
        node = fields.pop("node", node)
        rows.append(StateSnapshot(len(rows) + 1, statement, node, outgrads=dict(state), **fields))

    for event in events:
        event.replay(state, emit)
    return rows


def grad_snapshots(events, code):
    """Replay one query's events of an engine whose gradients stay on its values (``code``: its
    ``EngineCode``) into one row per statement of its ``backward()``, with every ``.grad`` written so far."""
    rows, grads = [], {}

    def emit(event, node, **fields):
        rows.append(StateSnapshot(len(rows) + 1, code.statement(event) or event.kind, node, outgrads=dict(grads),
                                  kind=event.kind, **fields))

    for e in events:
        if e.kind == "backward_start":
            grads[e.end] = e.seed
            emit(e, e.end, outgrad=e.seed)
        elif e.kind == "toposort":
            emit(e, e.node)
        elif e.kind == "vjp":
            emit(e, e.node, outgrad=e.outgrad, ingrads=e.ingrads)
        elif e.kind == "add_outgrads":
            grads[e.parent] = e.result[0]
            emit(e, e.node, ingrads=e.contribution, previous=None if e.previous is None else e.previous[0],
                 parent=e.parent, replaced=e.replaced)
        elif e.kind == "backward_end":
            emit(e, e.end)
    return rows

"""One side of a diff: what a recording's user backward pass did, node by node, in the words both
engines share.

For each node of the graph the pass walked (``Recording.graph(end)``): its primitive (an engine's
op, ``*``, as autograd names it, ``multiply``), its arguments by position (a parent's label; a position
with no parent is a constant, as autograd records ``x * 2.0``), the user's line, its forward value.
For the pass: the order nodes were visited, the gradient each node's VJP (``_backward``) read, the
contribution it sent to each argument, and the writes each node's gradient received, in order.
"""

from dataclasses import dataclass, field
from typing import Any, NamedTuple, Optional

import numpy as np

from ..recording.events import (REV, AddOutgrads, BackwardStart, NodeCreated, RootCreated, ToposortYielded,
                                TraceReturned, VJPCalled)

UNREAD = object()  # a node's constants not read from its call yet
LEAF = "leaf"  # the primitive of autograd's root and of an engine's leaf value
# an engine's op as autograd's primitive (micrograd's, and learners' classes': "**2" is a power)
OPS = {"+": "add", "*": "multiply", "-": "subtract", "/": "true_divide", "neg": "negative", "**": "power",
       "ReLU": "relu", "root": LEAF, "": LEAF}
# The alignment's table of equivalent primitives: autograd's forms of one engine op (micrograd's, a learner's).
# ``relu()`` is ``np.maximum(0, x)``, ``np.maximum(x, 0)`` or ``np.where(x > 0, x, 0)``: autograd's node of one
# traced argument x, by x's position -> the position of its other value, a constant 0 (``where``: its condition
# picks x where x > 0)
RELU_FORMS = {"maximum": {0: 1, 1: 0}, "where": {1: 2, 2: 1}}
# an engine writes ``x - c``, ``x / c`` and ``-x`` with its own ops and a constant leaf (micrograd: ``x + (-c)``,
# ``x * c**-1``, ``x * -1``): autograd's primitive of x (argument 0) and a constant c (argument 1) -> the engine's
# op and its constant
CONSTANT_FORMS = {"subtract": ("add", lambda c: -c), "true_divide": ("multiply", lambda c: c ** -1),
                  "divide": ("multiply", lambda c: c ** -1), "negative": ("multiply", lambda c: -1.0)}


def primitive_name(primitive, leaf):
    """The primitive in autograd's words (``""``: not known, a class with no ``_op``)."""
    if leaf:
        return LEAF
    if primitive.startswith("**"):
        return "power"
    return OPS.get(primitive, primitive) if primitive else ""


@dataclass(slots=True)  # (slots: 100,000 nodes a side made and read faster)
class Node:
    label: str
    primitive: str  # in autograd's words (primitive_name); LEAF for a root or leaf
    args: dict  # argument position -> parent label; a position absent is a constant
    site: Optional[str]
    value: Any
    leaf: bool
    created: int  # its place in creation order
    shown: str = ""  # the primitive as the engine names it
    constants: Any = None  # argument position (or keyword) -> its value, of the arguments not traced; None: not
    # known (the recording kept no calls); UNREAD: not read from ``call`` yet (``Node.constants_read()``)
    call: Any = None  # the primitive call recorded (``record(calls=True)``'s ``NodeCall``), None: not kept
    renumbered: Optional[dict] = None  # the recorded argument position -> its position in ``args`` (a form of
    # RELU_FORMS: np.maximum(0, x)'s x is the relu's argument 0)

    def constants_read(self):
        """``constants``, read from the call when first wanted (most nodes of a diff never are)."""
        if self.constants is UNREAD:
            self.constants = _constants(self.call, self.args)
        return self.constants


class Write(NamedTuple):
    """One contribution written into a node's gradient (autograd's ``add_outgrads``, an engine's
    write into ``.grad``)."""

    consumer: str  # the node whose VJP made it
    argnum: int
    value: Any  # the contribution
    previous: Any  # the gradient before (None: none yet)
    result: Any  # the gradient after
    replaced: Optional[bool]  # the write assigned instead of adding (an engine's `=` bug)
    step: int  # its place in the pass's events


@dataclass
class Side:
    recording: Any
    name: str
    nodes: dict = field(default_factory=dict)  # label -> Node, in creation order
    children: dict = field(default_factory=dict)  # label -> [child labels]
    end: Optional[str] = None
    seed: Any = None
    visits: list = field(default_factory=list)  # labels in the order the pass visited them
    visited_at: dict = field(default_factory=dict)  # label -> step of its VJP call
    grads: dict = field(default_factory=dict)  # label -> the gradient its VJP read
    ingrads: dict = field(default_factory=dict)  # label -> {argnum: contribution sent}
    writes: dict = field(default_factory=dict)  # label -> [Write into its gradient, in order]
    argnum: Optional[int] = None  # the argument autograd's root is (record_call's), None: not known

    def gradient(self, label):
        """The gradient the node ended with: what its VJP read, else its last write."""
        if label in self.grads:
            return self.grads[label]
        writes = self.writes.get(label)
        return writes[-1].result if writes else (self.seed if label == self.end else None)


def side_of(recording, name="A"):
    """The ``Side`` of ``recording``'s user backward pass (its last outermost one); a recording with
    none gives its reverse-mode nodes and no pass."""
    side = Side(recording, name, argnum=getattr(recording, "argnum", None))
    query = recording.user_query()
    events = recording.query_events(query) if query is not None else []
    start = next((e for e in events if type(e) is BackwardStart), None)
    side.end = start.end if start else None
    side.seed = start.seed if start else None
    inputs = {e.root: e.input for e in recording.of_kind(TraceReturned)}
    all_nodes = recording.nodes
    reached = _reached(all_nodes, side.end) if side.end is not None else None
    calls, nodes, children = recording.calls, side.nodes, side.children
    for created, (label, event) in enumerate(all_nodes.items()):
        kind = type(event)
        if kind is NodeCreated:
            parents = event.parents
        elif kind is RootCreated:
            parents = ()
        else:
            continue
        if event.mode != REV or reached is not None and label not in reached:
            continue
        if parents:
            shown = event.primitive
            args = dict(zip(event.argnums, parents))
            call = calls.get(label)
            node = nodes[label] = Node(label, primitive_name(shown, False), args, event.site, event.value, False,
                                       created, shown or LEAF, UNREAD if call is not None else None, call)
            if node.primitive in RELU_FORMS and len(args) == 1:
                _as_relu(node, nodes)
            elif node.primitive in CONSTANT_FORMS and list(args) == [0]:
                _as_engine_op(node)
            for parent in (parents if len(parents) == 1 else set(parents)):
                if parent in children:
                    children[parent].append(label)
                else:
                    children[parent] = [label]
        else:
            nodes[label] = Node(label, LEAF, {}, getattr(event, "site", None),
                                getattr(event, "value", inputs.get(label)), True, created,
                                getattr(event, "primitive", "root") or LEAF, _constants(calls.get(label), {}),
                                call=calls.get(label))
    _read_pass(side, events)
    return side


def _read_pass(side, events):
    """The pass's visits, the gradient each VJP read and the contributions it sent, and each node's writes."""
    nodes, visits, visited_at, grads, ingrads, writes = (side.nodes, side.visits, side.visited_at, side.grads,
                                                         side.ingrads, side.writes)
    for step, e in enumerate(events):
        kind = type(e)
        if kind is ToposortYielded:
            visits.append(e.node)
        elif kind is VJPCalled:
            label = e.node
            visited_at[label] = step
            grads[label] = e.outgrad
            node = nodes.get(label)
            ingrads[label] = dict(zip(sorted(node.args) if node is not None else range(len(e.ingrads)), e.ingrads))
        elif kind is AddOutgrads and e.node is not None and e.parent is not None:
            consumer = nodes.get(e.node)
            argnum = e.argnum if consumer is None or consumer.renumbered is None else consumer.renumbered[e.argnum]
            write = Write(e.node, argnum, e.contribution, None if e.previous is None else e.previous[0], e.result[0],
                          e.replaced, step)
            if e.parent in writes:
                writes[e.parent].append(write)
            else:
                writes[e.parent] = [write]


def _reached(nodes, end):
    """The labels ``end`` depends on (``Recording.graph(end)``'s, without the graph of every node)."""
    reached, stack = set(), [end]
    while stack:
        label = stack.pop()
        if label not in reached:
            reached.add(label)
            event = nodes.get(label)
            if event is not None and event.mode == REV:
                stack.extend(getattr(event, "parents", ()))
    return reached


def _constants(call, traced):
    """The values of a primitive call's arguments that were not traced (``record(calls=True)``'s
    ``NodeCall``): a constant that differs between two sides is an input that differs, not a rule."""
    if call is None:
        return None
    constants = {i: value for i, value in enumerate(call.args) if i not in traced}
    constants.update(call.kwargs)
    return constants


def _as_relu(node, nodes):
    """Name ``node`` (autograd's maximum or where of one traced argument) ``relu`` when it is one of
    ``RELU_FORMS``: its other value a constant 0 and, where it is kept, its value its argument's relu (the
    condition of ``where`` picks x where x > 0). A form not known to be one is left as it is."""
    (position, parent), = node.args.items()
    node.constants_read()
    other = RELU_FORMS[node.primitive].get(position)
    if other is None or node.constants is not None and not _zero(node.constants.get(other)):
        return
    if node.constants is None or node.primitive == "where":
        x = nodes[parent].value
        try:
            if not np.array_equal(np.asarray(node.value, dtype=float), np.maximum(np.asarray(x, dtype=float), 0)):
                return
        except (TypeError, ValueError):  # (a value not kept, or summarized)
            return
    node.primitive, node.args, node.renumbered, node.constants = "relu", {0: parent}, {position: 0}, {}


def _as_engine_op(node):
    """Name ``node`` (autograd's ``x - c``, ``x / c``, ``-x``) as an engine writes it (``CONSTANT_FORMS``), and
    its constant as the engine's where the call was kept."""
    op, constant = CONSTANT_FORMS[node.primitive]
    if node.constants_read() is not None:
        c = node.constants.get(1, 0.0)
        try:
            c = constant(np.asarray(c, dtype=float) if np.ndim(c) else float(c))
        except (TypeError, ValueError, ZeroDivisionError):
            return
        node.constants = {**node.constants, 1: c}
    node.primitive = op


def _zero(value):
    try:
        return value is not None and bool(np.all(np.asarray(value, dtype=float) == 0))
    except (TypeError, ValueError):
        return False

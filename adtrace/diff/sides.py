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
# an engine writes ``a - b`` and ``a / b`` of a traced ``b`` in two nodes (micrograd: ``a + b*(-1)``, ``1.0 - x``
# as ``x*(-1) + 1.0``, ``2.0 / x`` as ``x**-1 * 2.0``): the op of a node one of whose arguments is the inverse
# of b (its only use) -> autograd's one node, ``primitive(a, b)`` (a: the op's other argument, or a constant).
# Both sides are read so (autograd's ``a + -b`` too): the inverse's node is part of it, its contribution to b
# the node's contribution to its argument 1.
INVERSE_FORMS = {"add": ("subtract", "multiply", -1.0), "multiply": ("divide", "power", -1.0)}
INVERSE_NAMES = {"subtract": "subtract", "divide": "divide", "true_divide": "divide"}  # autograd's -> INVERSE_FORMS'


def same_primitive(n, m):
    """Nodes ``n`` and ``m`` are of one primitive (or one is the other's ``alias``)."""
    return n.primitive == m.primitive or bool(n.alias) and n.alias == m.primitive or bool(m.alias) and \
        m.alias == n.primitive


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
    alias: str = ""  # autograd's primitive of a node read as an engine's (CONSTANT_FORMS: ``x - c`` is ``add``, and
    # ``subtract`` too where the engine wrote ``x - b`` of a b the other side does not trace)
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
    side = Side(recording, name, argnum=recording.argnum)
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
            if node.primitive == "true_divide":  # (numpy's name of divide before 2.0, and learners' "/")
                node.primitive = "divide"
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
    for label in [x for x, n in nodes.items() if n.primitive in INVERSE_FORMS]:
        _as_inverse_form(side, label)
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
    node.alias = INVERSE_NAMES.get(node.alias or node.shown, "")


def _inverse(side, label, within):
    """``(b, the engine's constant leaf or None)`` if node ``label`` is b's inverse of ``INVERSE_FORMS``
    (``b * -1``, ``-b``, ``b ** -1``) used by ``within`` only, else None."""
    node, (inverse, by) = side.nodes.get(label), INVERSE_FORMS[side.nodes[within].primitive][1:]
    if node is None or node.leaf or node.primitive != inverse or side.children.get(label) != [within] \
            or 0 not in node.args:
        return None
    if list(node.args) == [0]:  # (autograd's: its constant kept by the call, or an engine's exponent in its name)
        if node.shown.startswith("**"):
            constant = node.shown[2:]
        else:
            constant = (node.constants_read() or {}).get(1)
        try:
            return (node.args[0], None) if float(constant) == by else None
        except (TypeError, ValueError):
            return None
    leaf = node.args.get(1)
    if len(node.args) != 2 or not side.nodes[leaf].leaf or side.children.get(leaf) != [label] \
            or side.nodes[leaf].site is None or not _equal(side.nodes[leaf].value, by):
        return None
    return node.args[0], leaf


def _as_inverse_form(side, label):
    """Read node ``label`` and an argument that is an inverse (``INVERSE_FORMS``) as autograd's one node."""
    node = side.nodes.get(label)
    if node is None:  # (an inverse read as part of a node made before)
        return
    found = [(p, x, _inverse(side, x, label)) for p, x in node.args.items()]
    found = [(p, x, i) for p, x, i in found if i is not None]
    if len(found) != 1 or len(set(node.args.values())) != len(node.args):
        return
    (position, inverse, (b, leaf)), = found
    others = [(p, x) for p, x in node.args.items() if p != position]
    node.primitive = INVERSE_FORMS[node.primitive][0]
    node.args = {**({0: others[0][1]} if others else {}), 1: b}
    if node.constants_read():
        node.constants = {0: c for p, c in node.constants.items() if p != position}
    gone = {inverse} | ({leaf} if leaf else set())
    for x in gone:
        del side.nodes[x]
        side.children.pop(x, None)
        side.grads.pop(x, None)
        side.visited_at.pop(x, None)
        side.writes.pop(x, None)
    side.children[b] = list(dict.fromkeys(label if c == inverse else c for c in side.children[b]))
    side.visits[:] = [x for x in side.visits if x not in gone]
    sent, inverse_sent = side.ingrads.get(label, {}), side.ingrads.pop(inverse, {})
    side.ingrads.pop(leaf, None)
    side.ingrads[label] = {**({0: sent[others[0][0]]} if others and others[0][0] in sent else {}),
                           **({1: inverse_sent[0]} if 0 in inverse_sent else {})}
    for parent, writes in side.writes.items():
        writes[:] = [w._replace(consumer=label, argnum=1) if w.consumer == inverse
                     else w._replace(argnum=0) if w.consumer == label and others and w.argnum == others[0][0]
                     else w for w in writes]


def _equal(value, to):
    try:
        return bool(np.all(np.asarray(value, dtype=float) == to))
    except (TypeError, ValueError):
        return False


def _zero(value):
    try:
        return value is not None and bool(np.all(np.asarray(value, dtype=float) == 0))
    except (TypeError, ValueError):
        return False

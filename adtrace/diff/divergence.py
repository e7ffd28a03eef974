"""The diff of two backward passes: every matched node compared, and the first divergence.

Both passes are walked in the order A ran them: the forward pass in A's creation order, then A's
backward pass event by event. The first divergence is the first node whose output differs while
its inputs matched:

- a forward value, its arguments' values the same: the primitive computes another thing (``local-rule``;
  an input that differs is ``input``);
- the contributions a node's VJP sent, the gradient it read the same: its local rule differs (``local-rule``);
- the gradient a node's VJP read, every contribution it received the same: its accumulation lost or
  doubled one (``accumulation``: an engine's ``self.grad = ...`` names the write that replaced a
  contribution), or it was visited before one arrived (``order``);
- a node one side has and the other not (``graph``).

A difference whose inputs differ too follows from an earlier one (``follows``): the list after the first.

A valid visit order of its own (siblings swapped) is no divergence: the values are compared per node,
and the first place the two orders part is reported beside the verdict.
"""

from dataclasses import dataclass, field
from typing import Any, NamedTuple, Optional

from ..recording.eventlog import collector_paused
from .align import align
from .sides import side_of
from .values import DIFFERS, RTOL, same

LOCAL_RULE, ACCUMULATION, ORDER, GRAPH, INPUT = "local-rule", "accumulation", "order", "graph", "input"
FOLLOWED = "follows"  # a difference whose inputs differ too: what follows from an earlier one
IDENTICAL, VALUES_DIFFER, STRUCTURE_DIFFERS = "identical", "values-differ", "structure-differs"
FOLLOWS = 5  # what follows from the first divergence: this many more places that differ


@dataclass(frozen=True)
class At:
    """One side of a divergence."""

    node: Optional[str]
    primitive: str
    line: Optional[str]
    value: Any


@dataclass(frozen=True)
class Divergence:
    kind: str  # LOCAL_RULE | ACCUMULATION | ORDER | GRAPH | INPUT
    what: str  # what differs: "forward value", "gradient", "contribution to argument 1", "node"
    a: Optional[At]
    b: Optional[At]
    detail: str  # one sentence: why this kind


class Row(NamedTuple):
    """One node of the aligned table (a named tuple: 100,000 made per side in a few tenths of a second)."""

    a: Optional[str]
    b: Optional[str]
    primitive: str
    line: Optional[str]
    status: str  # "identical", "values differ", "only in A", "only in B", "constant"
    differs: tuple = ()  # what differs: "forward value", "gradient", "contribution to argument 0"
    b_line: Optional[str] = None  # B's own line
    b_operands: tuple = ()  # B's arguments in B's order, where it is another than A's (a * b against b * a)


@dataclass
class Diff:
    a: Any  # the Side of A, of B
    b: Any
    alignment: Any
    rtol: float
    first: Optional[Divergence] = None
    follows: list = field(default_factory=list)
    rows: list = field(default_factory=list)
    order: Optional[tuple] = None  # (step, A's node, B's node) where the visit orders part, else None

    @property
    def counts(self):
        counted = {"identical": 0, "values differ": 0, "only in A": 0, "only in B": 0, "constants": 0}
        for row in self.rows:
            counted["constants" if row.status == "constant" else row.status] += 1
        return counted

    @property
    def verdict(self):
        counts = self.counts
        if counts["only in A"] or counts["only in B"] or self.first is not None and self.first.kind == GRAPH:
            return STRUCTURE_DIFFERS
        return VALUES_DIFFER if counts["values differ"] or self.first is not None else IDENTICAL

    @property
    def unkept(self):
        """The sides recorded without their values (capture ``structure``): only structure and order compared."""
        return [side.name for side in (self.a, self.b) if side.recording.capture == "structure"]

    @property
    def exit_code(self):
        return 0 if self.verdict == IDENTICAL else 1


class NothingToDiff(ValueError):
    """A side holds no backward pass: there is nothing to compare (never "identical")."""


def diff(a, b, rtol=None, names=("A", "B")):
    """The ``Diff`` of recording ``a``'s user backward pass against ``b``'s (``Recording.diff``); a side
    without one raises ``NothingToDiff``."""
    with collector_paused():
        sides = side_of(a, names[0]), side_of(b, names[1])
        for side in sides:
            if side.end is None:
                raise NothingToDiff(f"{side.name} holds no backward pass: nothing to diff (an output that does not "
                                    "depend on the input, a forward-mode recording, or an empty one)")
        result = Diff(*sides, None, RTOL if rtol is None else rtol)
        result.alignment = align(result.a, result.b, result.rtol)
        found = _Walk(result).divergences()
    result.first, result.follows = (found[0], found[1:1 + FOLLOWS]) if found else (None, [])
    result.order = _order(result)
    return result


class _Walk:
    def __init__(self, d):
        self.d, self.a, self.b, self.al = d, d.a, d.b, d.alignment
        self.differs = {}  # A label (or B label of a node only in B) -> [what differs]

    def same(self, x, y):
        if x is y or type(x) is float and type(y) is float and x == y:  # (a scalar program's every value)
            return True
        return same(x, y, self.d.rtol) != DIFFERS

    def divergences(self):
        found = self.forward() + self.backward()
        self.d.rows = self.rows()
        return found

    # ---- the forward pass ----

    def forward(self):
        found, a, b, al = [], self.a, self.b, self.al
        ranks = {}
        for label, node in a.nodes.items():
            ranks[label] = node.created
            m = al.a_to_b.get(label)
            if m is None:
                if label not in al.constants_a and not (node.leaf and label in a.children):
                    found.append((node.created, self.graph(label, None)))
                continue
            if self.same(node.value, b.nodes[m].value):
                continue
            self.note(label, "forward value")
            inputs_same = all(self.same(a.nodes[p].value, b.nodes[al.a_to_b[p]].value)
                              for p in node.args.values() if p in al.a_to_b)
            kind = (INPUT if node.leaf else LOCAL_RULE) if inputs_same else FOLLOWED
            detail = ("the input differs" if node.leaf else
                      f"its arguments' values are the same on both sides: {node.shown} computes another value"
                      if inputs_same else "its arguments' values differ")
            if kind == LOCAL_RULE:
                kind, detail = self.constants(node, b.nodes[m], kind, detail)
            found.append((node.created, Divergence(kind, "forward value", self.at(a, label, node.value),
                                                   self.at(b, m, b.nodes[m].value), detail)))
        only_b = set(al.only_b)
        for label, node in b.nodes.items():  # (placed after the A node made last among its matched ancestors)
            x = al.b_to_a.get(label)
            if x is not None:
                ranks[label] = a.nodes[x].created
                continue
            ranks[label] = rank = max((ranks.get(p, -1) for p in node.args.values()), default=-1)
            if label in only_b:
                ranks[label] = rank + 0.5
                if not (node.leaf and label in b.children):  # (a leaf, a constant: the node using it is named)
                    found.append((rank + 0.5, self.graph(None, label)))
        found.sort(key=lambda pair: pair[0])
        return [d for _, d in found]

    def constants(self, x, y, kind, detail):
        """A rule's node whose traced arguments agree: an argument that was not traced (a constant, a
        non-differentiated argument) that differs makes it an ``INPUT``; not kept on a side, it is said."""
        cx, cy = self.constants_of(self.a, x, self.al.constants_a), self.constants_of(self.b, y, self.al.constants_b)
        if cx is None or cy is None:
            return kind, (f"its traced arguments' values are the same on both sides (its constant arguments were "
                          f"not kept): {x.shown} computes another value")
        engine = x.constants_read() is None or y.constants_read() is None  # (an engine's op keeps some in its name)
        differ = [k for k in sorted(set(cx) | set(cy), key=str) if (k in cx and k in cy or not engine)
                  and (k not in cx or k not in cy or not self.same(cx[k], cy[k]))]
        if not differ:
            return kind, detail
        which = ", ".join(f"argument {k}" if isinstance(k, int) else f"{k}=" for k in differ)
        return INPUT, f"its traced arguments are the same, but a constant differs ({which}): not its rule"

    @staticmethod
    def constants_of(side, node, constants):
        """``node``'s constant arguments: as autograd's call kept them, or an engine's leaves matched as the other
        side's constants (an engine makes every argument a value); None: not known."""
        if node.constants_read() is not None:
            return node.constants
        if side.recording.engine == "autograd":
            return None
        return {k: side.nodes[p].value for k, p in node.args.items() if p in constants}

    def graph(self, x, y):
        side, label = (self.a, x) if x is not None else (self.b, y)
        node = side.nodes[label]
        self.note(label, "node")
        at = self.at(side, label, node.value)
        return Divergence(GRAPH, "node", at if x is not None else None, at if y is not None else None,
                          f"{node.shown} {label} has no match in {self.b.name if x is not None else self.a.name} "
                          "(no node of that primitive with the same arguments)")

    # ---- the backward pass ----

    def backward(self):
        found, a, b, al = [], self.a, self.b, self.al
        if a.end is not None and b.end is not None and al.a_to_b.get(a.end) != b.end:
            found.append(Divergence(GRAPH, "end", self.at(a, a.end, a.seed), self.at(b, b.end, b.seed),
                                    "the two passes start from nodes that do not match"))
        for label in a.visits:
            m = al.a_to_b.get(label)
            if m is None or label in al.constants_a:
                continue
            ga, gb = a.gradient(label), b.gradient(m)
            if not self.same(ga, gb):
                self.note(label, "gradient")
                found.append(self.accumulated(label, m, ga, gb))
            elif label in a.ingrads and m in b.ingrads:
                node, sent_a, sent_b = a.nodes[label], a.ingrads[label], b.ingrads[m]
                if label in al.unordered:  # (B's arguments in another order: by the parent each goes to)
                    sent_b = _in_a_positions(node, b.nodes[m], sent_b, al.b_to_a)
                for argnum, sent in sent_a.items():
                    if argnum in sent_b and not self.same(sent, sent_b[argnum]):
                        parent = node.args.get(argnum)
                        forward = [x for x in (label, *node.args.values())
                                   if "forward value" in self.differs.get(x, ())]
                        self.note(label, f"contribution to argument {argnum}")
                        detail = (f"the forward value of {forward[0]} differs" if forward else
                                  f"the gradient {label}'s VJP read is the same on both sides, and its forward "
                                  f"values: its local rule for argument {argnum} ({parent}) differs")
                        found.append(Divergence(
                            FOLLOWED if forward else LOCAL_RULE, f"contribution to argument {argnum}",
                            self.at(a, label, sent), self.at(b, m, sent_b[argnum]), detail))
        return found

    def accumulated(self, label, m, ga, gb):
        """Why node ``label``'s gradient differs: its contributions, their sum, or when it was read."""
        a, b, al = self.a, self.b, self.al
        received_a = _received(a.writes.get(label, []), lambda c: c)
        received_b = _received(b.writes.get(m, []), al.b_to_a.get)
        if set(received_a) != set(received_b):  # (a class keeping its children as a set: positions in any order)
            received_a = _received(a.writes.get(label, []), lambda c: c, by_value=True)
            received_b = _received(b.writes.get(m, []), al.b_to_a.get, by_value=True)
        at_a, at_b = self.at(a, label, ga), self.at(b, m, gb)
        if set(received_a) != set(received_b):
            missing = sorted(set(received_a) ^ set(received_b), key=str)
            return Divergence(GRAPH, "gradient", at_a, at_b, f"the two sides received different contributions "
                                                             f"(from {', '.join(_consumer(k[0]) for k in missing)})")
        changed = [k for k in received_a if not self.same(received_a[k].value, received_b[k].value)]
        if changed:
            return Divergence(FOLLOWED, "gradient", at_a, at_b, f"the contribution of {changed[0][0]} "
                                                                f"(argument {changed[0][1]}) differs")
        for side, node, received in ((b, m, received_b), (a, label, received_a)):
            late = [w for w in received.values() if node in side.visited_at and w.step > side.visited_at[node]]
            if late:
                w = late[0]
                return Divergence(ORDER, "gradient", at_a, at_b, f"{side.name} visited {node} before all its "
                                  f"contributions arrived: {w.consumer}'s (argument {w.argnum}) came after its VJP "
                                  "read it")
        for side, node, received in ((b, m, received_b), (a, label, received_a)):
            writes = side.writes.get(node, [])
            lost = [i for i, w in enumerate(writes) if w.replaced and _nonzero(w.previous)]
            if lost:
                w, before = writes[lost[0]], writes[lost[0] - 1] if lost[0] else None
                whose = f" ({before.consumer}'s, argument {before.argnum})" if before is not None else ""
                return Divergence(ACCUMULATION, "gradient", at_a, at_b, f"{side.name} lost a contribution: "
                                  f"{w.consumer}'s write into {node}.grad (argument {w.argnum}) assigned "
                                  f"{_short(w.value)} over {_short(w.previous)}{whose} instead of adding to it")
        return Divergence(ACCUMULATION, "gradient", at_a, at_b, _sum_detail(received_a, ga, gb, self.same))

    # ---- what each side is ----

    def at(self, side, label, value):
        node = side.nodes[label]
        return At(label, node.shown, node.site, value)

    def note(self, label, what):
        self.differs.setdefault(label, []).append(what)

    def rows(self):
        a, b, al, rows = self.a, self.b, self.al, []
        for label, node in a.nodes.items():
            m = al.a_to_b.get(label)
            if label in al.constants_a:
                rows.append(Row(label, None, node.shown, node.site, "constant"))
            elif m is None:
                rows.append(Row(label, None, node.shown, node.site, "only in A"))
            else:
                what = tuple(w for w in self.differs.get(label, ()) if w != "node")
                other = b.nodes[m]
                rows.append(Row(label, m, node.shown, node.site or (None if node.leaf else other.site),
                                "values differ" if what else "identical", what, other.site,
                                self.operands(node, other) if label in al.unordered else ()))
        for label in b.nodes:
            node = b.nodes[label]
            if label in al.constants_b:
                rows.append(Row(None, label, node.shown, node.site, "constant"))
            elif label in al.only_b:
                rows.append(Row(None, label, node.shown, node.site, "only in B"))
        return rows


    def operands(self, x, y):
        """B's arguments of ``y`` in B's order where they are A's in another order (a * b against b * a: matched
        by its parents as a set, ``Alignment.unordered``)."""
        a_to_b, b_to_a = self.al.a_to_b, self.al.b_to_a
        ours = {k: a_to_b.get(p) for k, p in x.args.items()}
        theirs = {k: p for k, p in y.args.items() if p in b_to_a}  # (a constant leaf of B's: A has no parent there)
        return tuple(p for _, p in sorted(y.args.items())) if ours != theirs else ()


def _in_a_positions(x, y, sent, b_to_a):
    """B node ``y``'s contributions keyed by A node ``x``'s argument positions, each by the parent it goes to
    (``w * h`` against an engine's ``h * w``; ``x * x``'s two in order of position); a constant's left out."""
    free = {}
    for position, parent in sorted(x.args.items()):
        free.setdefault(parent, []).append(position)
    keyed = {}
    for position, value in sorted(sent.items()):
        positions = free.get(b_to_a.get(y.args.get(position)))
        if positions:
            keyed[positions.pop(0)] = value
    return keyed


def _received(writes, name, by_value=False):
    """``(consumer, argnum) -> Write`` in A's names; where an argument position is not known (a class keeping
    its children as a set), or ``by_value``, ``(consumer, k)`` for its k-th write in order of value."""
    if not by_value and all(w.argnum is not None for w in writes):
        return {(name(w.consumer), w.argnum): w for w in writes}
    by_consumer = {}
    for w in writes:
        by_consumer.setdefault(name(w.consumer), []).append(w)
    return {(consumer, k): w for consumer, ws in by_consumer.items()
            for k, w in enumerate(sorted(ws, key=lambda w: _order_key(w.value)))}


def _order_key(value):
    try:
        return (0, float(value))
    except (TypeError, ValueError):
        return (1, 0.0)


def _sum_detail(received, ga, gb, is_same):
    """Which contribution the other side's sum lost or counted twice."""
    import numpy as np

    try:
        for w in received.values():
            if is_same(np.asarray(ga) - np.asarray(w.value), gb):
                return f"every contribution matched but the sum lost one: {w.consumer}'s (argument {w.argnum})"
            if is_same(np.asarray(ga) + np.asarray(w.value), gb):
                return f"every contribution matched but the sum counted one twice: {w.consumer}'s (argument {w.argnum})"
    except (TypeError, ValueError):
        pass
    return "every contribution matched but their sums differ (a gradient not zeroed, or one written twice)"


def _order(d):
    """Where the two visit orders first part, over the nodes both have (None: the same order)."""
    al = d.alignment
    a = [x for x in d.a.visits if x in al.a_to_b and x not in al.constants_a]
    b = [al.b_to_a[y] for y in d.b.visits if y in al.b_to_a]
    for step, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return step, x, al.a_to_b[y]
    return None


def _nonzero(value):
    import numpy as np

    try:
        return bool(np.any(np.asarray(value) != 0))
    except (TypeError, ValueError):
        return value is not None


def _short(value):
    try:
        return f"{float(value):.6g}"
    except (TypeError, ValueError):
        return type(value).__name__


def _consumer(label):
    return "a node only B has" if label is None else str(label)

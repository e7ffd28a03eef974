"""Two backward passes' nodes matched by structure, not by position.

A node of A matches a node of B when their primitives agree (autograd's words: micrograd's ``*`` is
``multiply``; autograd's forms of one engine op, ``np.maximum(0, x)`` as micrograd's ``relu``, are in the
table of equivalent primitives in ``sides.py``) and their arguments do, position by position: a parent
already matched to the other side's parent, an input (autograd's root, an engine's leaf) matched to an input,
or a constant (a position autograd keeps no parent for, ``x * 2.0``) against an engine's leaf made for it
(``Value(2.0)``: matched as a constant) or a node made of such leaves only (``y * 3.0`` of an argument not
differentiated). Among the candidates the one whose constants agree wins (``0.5 * x`` with ``x * Value(0.5)``,
not with ``x / 3``), then the one matched by position, then the one made on the same line of the user's code,
then the one made first. Nodes are matched in A's creation order, each among the children of a
parent already matched: a node one side has and the other not (an engine's constant leaves, another
order of creation, a release that adds a node) is listed as only in A or only in B, and every later
node is still matched by its own structure.
"""

from dataclasses import dataclass, field

from .sides import same_primitive
from .values import DIFFERS, RTOL, SAME, same

SCAN = 64  # candidates weighed per node (the first unmatched ones in B's creation order)


@dataclass
class Alignment:
    a_to_b: dict = field(default_factory=dict)  # A label -> B label
    b_to_a: dict = field(default_factory=dict)
    constants_a: set = field(default_factory=set)  # A's leaves matched to a constant of B (an engine's Value(2.0))
    constants_b: set = field(default_factory=set)
    only_a: list = field(default_factory=list)  # A's labels with no match, in A's creation order
    only_b: list = field(default_factory=list)
    unordered: set = field(default_factory=set)  # A's nodes matched by their parents as a set, not by position
    rtol: float = RTOL  # constants agree, and an input is alike, within the diff's own tolerance


def align(a, b, rtol=RTOL):
    """The ``Alignment`` of ``Side`` a with ``Side`` b (``rtol``: the diff's, ``values.same``)."""
    al = Alignment(rtol=rtol)
    candidates = _Candidates(b)
    _arguments(a, b, al)
    for label, node in a.nodes.items():
        if node.leaf:
            continue
        best = _best(node, candidates.of(node, al), a, b, al)
        if best is None:  # one side has a node more between this node and a parent
            best = _best(node, candidates.through(node, a, al), a, b, al, through=True)
        if best is None:
            continue
        (_, _, by_position, *_), m, (leaves, constants_a, constants_b) = best
        if not by_position:
            al.unordered.add(label)
        for x, y in [(label, m), *leaves.items()]:
            al.a_to_b[x], al.b_to_a[y] = y, x
        al.constants_a |= constants_a
        al.constants_b |= constants_b
    _inputs_left(a, b, al)
    al.only_a = [x for x in a.nodes if x not in al.a_to_b and x not in al.constants_a]
    al.only_b = [y for y in b.nodes if y not in al.b_to_a and y not in al.constants_b]
    return al


def _best(node, found, a, b, al, through=False):
    """``(score, B label, unification)`` of the best candidate among ``found`` (None: none fits)."""
    best = None
    for m in found:
        unify, by_position = _unify(node, m, a, b, al, through)
        if unify is None:
            continue
        agree = _constants_agree(node, b.nodes[m], a, b, unify, al.rtol) is not False
        free = agree or not _claimed(node, m, a, b, al, through)
        score = (agree, free, by_position, node.site is not None and node.site == b.nodes[m].site,
                 -b.nodes[m].created)
        if best is None or score > best[0]:
            best = (score, m, unify)
    return best


def _unify(n, m, a, b, al, through=False):
    """``(unification, matched by position)`` of A node ``n`` with B node ``m``; ``(None, _)``: they cannot match."""
    unify = _compatible(n, b.nodes[m], a, b, al, through)
    if unify is not None:
        return unify, True
    return _as_sets(n, b.nodes[m], a, b, al), False


def _claimed(n, m, a, b, al, through):
    """B's ``m`` has the constants of another unmatched A node of ``n``'s parents (a coefficient changed in
    ``0.5 * x``: its match is the other ``0.6 * x``, not ``x / 3``, the match of A's ``x / 3``)."""
    siblings = {c for p in n.args.values() for c in a.children.get(p, ())[:SCAN]} - {n.label} - al.a_to_b.keys()
    for c in siblings:
        unify, _ = _unify(a.nodes[c], m, a, b, al, through)
        if unify is not None and _constants_agree(a.nodes[c], b.nodes[m], a, b, unify, al.rtol) is True:
            return True
    return False


def _constants_agree(n, m, a, b, unify, rtol):
    """Whether the constants ``n`` and ``m`` were made with agree, whatever their positions (micrograd's
    ``x * Value(0.5)`` with autograd's ``0.5 * x``, not its ``x / 3``); None: not known on a side."""
    _, constants_a, constants_b = unify
    cx, cy = _constant_values(n, a, constants_a), _constant_values(m, b, constants_b)
    if cx is None or cy is None:
        return None
    cx, cy = sorted(cx, key=_key), sorted(cy, key=_key)
    return len(cx) == len(cy) and all(same(x, y, rtol) != DIFFERS for x, y in zip(cx, cy))


def _constant_values(node, side, constants):
    """The values of ``node``'s constant arguments (autograd's call's, an engine's leaves matched as constants);
    None: not known."""
    if node.constants_read() is not None:
        return [v for k, v in node.constants.items() if isinstance(k, int)]
    if side.recording.engine == "autograd":
        return None
    return [side.nodes[p].value for p in node.args.values() if p in constants]


def _key(value):
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("inf")


def _compatible(n, m, a, b, al, through=False):
    """``(inputs matched here, A's constants, B's constants)`` if ``m`` can be ``n``'s match, else None;
    ``through``: a parent may be a node the other side has not, between the matched parents."""
    if n.primitive and m.primitive and not same_primitive(n, m):
        return None
    leaves, constants_a, constants_b = {}, set(), set()
    for position in n.args.keys() | m.args.keys():
        x, y = n.args.get(position), m.args.get(position)
        if x is not None and y is not None:
            if x in al.a_to_b or y in al.b_to_a:
                if al.a_to_b.get(x) != y and not (through and _between(x, y, a, b, al)):
                    return None
            elif not (a.nodes[x].leaf and b.nodes[y].leaf) or x in al.constants_a or y in al.constants_b \
                    or leaves.get(x, y) != y or y in leaves.values() and leaves.get(x) != y:
                return None
            else:
                leaves[x] = y
        elif x is not None:  # B has a constant here: A's parent must be a leaf made for one, or made of such
            made = _constant(x, a, al.a_to_b, leaves)
            if made is None:
                return None
            constants_a |= made
        elif y is not None:
            made = _constant(y, b, al.b_to_a, leaves.values())
            if made is None:
                return None
            constants_b |= made
    if constants_a & set(leaves) or constants_b & set(leaves.values()):
        return None
    return leaves, constants_a, constants_b


def _as_sets(n, m, a, b, al):
    """``_compatible`` for a class that keeps a node's children as a set (``x * x`` has one, ``a + b`` either
    order): the same parents, whatever their positions and how often each is named."""
    if n.primitive and m.primitive and not same_primitive(n, m):
        return None
    xs, ys = set(n.args.values()), set(m.args.values())
    leaves, constants_a = {}, set()
    for x in sorted(xs, key=lambda x: a.nodes[x].created):
        if x in al.a_to_b:
            if al.a_to_b[x] not in ys:
                return None
            continue
        free = [y for y in ys if y not in al.b_to_a and b.nodes[y].leaf and y not in leaves.values()
                and y not in al.constants_b]
        if a.nodes[x].leaf and x not in al.constants_a and free:
            leaves[x] = free[0]
            continue
        made = _constant(x, a, al.a_to_b, leaves)  # (A an engine: its Value(0.5) of ``0.5 * x``, B's constant)
        if made is None or len(n.args) == len(m.args):
            return None
        constants_a |= made
    mapped = {al.a_to_b.get(x, leaves.get(x)) for x in xs} - {None}
    if not mapped <= ys:
        return None
    constants = set()
    for y in ys - mapped:
        made = _constant(y, b, al.b_to_a, leaves.values())
        if made is None:
            return None
        constants |= made
    return leaves, constants_a, constants


def _constant(label, side, matched, taken):
    """``label`` and the nodes it is made of if it stands for the other side's constant: a leaf no input
    matched, or a node made of such leaves only (an engine's ``y * 3.0`` of a non-differentiated argument y,
    where autograd has the constant); else None."""
    made, stack = set(), [label]
    while stack:
        x = stack.pop()
        if x in made:
            continue
        if x in matched or x in taken or len(made) == SCAN:
            return None
        made.add(x)
        stack.extend(side.nodes[x].args.values())
    return made


def _between(x, y, a, b, al):
    """B's parent ``y`` a node A has not, made from A's parent ``x``'s match; or A's ``x`` one B has not,
    made from B's ``y``."""
    if y not in al.b_to_a and al.a_to_b.get(x) in b.nodes[y].args.values():
        return True
    return x not in al.a_to_b and y in {al.a_to_b.get(p) for p in a.nodes[x].args.values()}


class _Candidates:
    """B's unmatched nodes that may match an A node: children of the B match of one of its parents
    (the parent with the fewest), or, for a node of inputs and constants only, B's nodes of leaves only,
    each list by primitive and pruned of matched nodes as it is read."""

    def __init__(self, b):
        self.b = b
        self.by_parent = {}  # (B parent, primitive) -> [children in creation order]
        for parent, children in b.children.items():
            for child in children:
                for primitive in _names(b.nodes[child]):
                    self.by_parent.setdefault((parent, primitive), []).append(child)
        self.primitives = {node.primitive for node in b.nodes.values()} | {n.alias for n in b.nodes.values()} - {""}
        self.of_leaves = {}
        for label, node in b.nodes.items():
            if not node.leaf and all(b.nodes[p].leaf for p in node.args.values()):
                for primitive in _names(node):
                    self.of_leaves.setdefault(primitive, []).append(label)

    def of(self, node, al):
        a_to_b, b_to_a, candidates = al.a_to_b, al.b_to_a, []
        matched = {a_to_b[p] for p in node.args.values() if p in a_to_b}
        for primitive in dict.fromkeys((node.primitive, node.alias, "")) if node.primitive else self.primitives:
            if len(matched) == 1:
                found = self._pruned(self.by_parent, (next(iter(matched)), primitive), al)
            elif matched:
                found = min((self._pruned(self.by_parent, (p, primitive), al) for p in matched), key=len)
            else:
                found = self._pruned(self.of_leaves, primitive, al)
            candidates += [m for m in found[:SCAN] if m not in b_to_a]
        return candidates

    def through(self, node, a, al):
        """B's unmatched nodes one node further from a matched parent: through a node B has more, or from
        the match of the parent of a node A has more."""
        starts = set()
        for p in node.args.values():
            if p in al.a_to_b:
                starts.update(c for c in self.b.children.get(al.a_to_b[p], ())[:SCAN] if c not in al.b_to_a)
            else:
                starts.update(al.a_to_b[q] for q in a.nodes[p].args.values() if q in al.a_to_b)
        for start in starts:
            yield from (c for c in self.b.children.get(start, ())[:SCAN] if c not in al.b_to_a)

    @staticmethod
    def _pruned(index, key, al):
        found = index.get(key)
        if not found:
            return []
        i = 0
        while i < len(found) and found[i] in al.b_to_a:
            i += 1
        if i:
            del found[:i]
        return found


def _names(node):
    """The primitive ``node`` is indexed under: its own ("": a class with no ``_op``) and its alias."""
    return (node.primitive, node.alias) if node.alias else (node.primitive,)


def _arguments(a, b, al):
    """The inputs made before any operation (autograd's root, an engine's leaf per argument) matched first:
    in order when both sides have as many, else autograd's one root to the engine's leaf of its argument
    position where it is known, else to the one leaf of its value. An engine's leaf made by a line of the
    user's code (``0.5 * x``'s ``Value(0.5)``) is a constant, not an argument, where lines were kept."""
    def arguments(side):
        first = next((n.created for n in side.nodes.values() if not n.leaf), None)
        made = [x for x, n in side.nodes.items() if n.leaf and (first is None or n.created < first)]
        inputs = [x for x in made if side.nodes[x].site is None]
        return inputs if inputs and any(n.site is not None for n in side.nodes.values()) else made

    xs, ys = arguments(a), arguments(b)
    if len(xs) != len(ys):
        if len(xs) != 1 and len(ys) != 1:
            return
        (one, side), (others, other) = ((xs, a), (ys, b)) if len(xs) == 1 else ((ys, b), (xs, a))
        argnum = side.argnum if side.argnum is not None and other.argnum is None else None
        if argnum is not None and argnum < len(others):
            alike = [others[argnum]]
        else:
            value = side.nodes[one[0]].value
            alike = [o for o in others if same(other.nodes[o].value, value, al.rtol) == SAME]
        if len(alike) != 1:
            return
        xs, ys = (one, alike) if len(xs) == 1 else (alike, one)
    for x, y in zip(xs, ys):
        al.a_to_b[x], al.b_to_a[y] = y, x


def _inputs_left(a, b, al):
    """Inputs no node matched (a pass whose end is its input): paired in creation order."""
    left_b = [y for y, n in b.nodes.items() if n.leaf and y not in al.b_to_a and y not in al.constants_b]
    for x, n in a.nodes.items():
        if n.leaf and x not in al.a_to_b and x not in al.constants_a and left_b:
            y = left_b.pop(0)
            al.a_to_b[x], al.b_to_a[y] = y, x


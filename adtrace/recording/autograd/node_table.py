"""The autograd recorder's node table: every node a recording meets, by ``id(node)``, with its label.

``VJPNode`` has ``__slots__`` and no weak references, so nothing can be attached to a node. An
entry is written when the node is created, so an id that Python reuses after a node died is simply
overwritten.
"""

from ..events import UNARY  # the argnums of a node with one boxed argument, the first (the argnums column's default)
from ..labels import ROOT_NAME, label_for, label_name, primitive_name, unrecorded_label
from .state import state


ROOT = label_name(ROOT_NAME)  # a root's name in its label
NO_ARGNUMS = ()  # the argnums of a root and of a node made before the recording (no boxed argument recorded)


class Sparse(dict):
    """A node table's column that keeps only the values other than its ``default``: read ``column[key]``
    for a node in ``labels`` (most nodes are of level 0 and one boxed argument: an entry for each was a
    dict entry per node of a scalar program, about 50 bytes); the hot paths read ``column.get(key, default)``
    (``__missing__`` is a Python call: twice the instructions). Written by ``NodeTable.add`` or its
    lines written out: ``if column.get(key, column.default) != value: column[key] = value`` (a
    value set for a node that died whose id Python reused is overwritten)."""

    __slots__ = ("default",)

    def __init__(self, default):
        super().__init__()
        self.default = default

    def __missing__(self, key):
        return self.default


class NodeTable:
    """``labels``, ``levels`` and ``argnums``: three dicts keyed by ``id(node)`` (no tuple per node
    for the garbage collector), ``levels`` and ``argnums`` ``Sparse`` (0 and ``UNARY`` not kept). Every label
    is made here, in ``labels.py``'s form: ``v<i>_<name>`` numbered in creation order (``made``),
    ``v<i>_root`` for a root, ``u<j>_unrecorded`` for a node made before the recording. The recorder's hot
    paths read the dicts directly: ``label`` and ``add`` written out, ``labels.get(key) or
    table.unrecorded(node)``."""

    __slots__ = ("labels", "levels", "argnums", "made", "names", "distinct_argnums", "frames", "_unrecorded", "token")

    def __init__(self, frames):
        self.labels, self.levels, self.argnums = {}, Sparse(0), Sparse(UNARY)
        self.made = 0  # the next node's number
        self.names = {}  # primitive -> (name, its label_name): computed once per primitive (name_of)
        # one argnums tuple kept per distinct value, not autograd's fresh one per node: every tuple a
        # recording keeps brings Python's next garbage collection sooner
        self.distinct_argnums = {UNARY: UNARY}  # (UNARY itself: the argnums column's default, compared by identity)
        self.frames = frames  # the recorder's open passes and JVP nodes, innermost last (current_level)
        self._unrecorded = 0
        # this table's identity: the compiled wrappers keep the row they write for a node on its RecordedVJP, with
        # this token (held there: no other table has it while the row is read), and read it back for this table only
        self.token = object()

    def name_of(self, fun):
        """A primitive's ``(name, label_name)``, computed once per primitive."""
        name = primitive_name(fun)
        names = self.names[fun] = (name, label_name(name))
        return names

    def add(self, node, label, level, argnums=NO_ARGNUMS):
        key = id(node)
        self.labels[key] = label
        levels, kept = self.levels, self.argnums
        if levels.get(key, 0) != level:  # (a value set for a node that died, whose id Python reused: overwritten)
            levels[key] = level
        if kept.get(key, UNARY) is not argnums:
            kept[key] = argnums

    def new_root(self, node, level):
        """A root's label (``make_vjp`` / ``make_jvp``'s input node: it never runs ``__init__``)."""
        label = label_for(self.made, ROOT)
        self.made += 1
        self.add(node, label, level)
        return label

    def label(self, node):
        """A node's label (a node made before the recording is named on first sight)."""
        return self.labels.get(id(node)) or self.unrecorded(node)

    def unrecorded(self, node):
        """A node created before this recording started: named, its level the current one."""
        label = unrecorded_label(self._unrecorded)
        self._unrecorded += 1
        self.add(node, label, self.current_level())
        return label

    def parent_labels(self, parents):
        """A node's parent labels as one string (``events.LABELS``) and its level, for any number of
        parents (the hot paths write out one and two). A loop: before Python 3.12 a comprehension
        builds and calls a function."""
        get = self.labels.get
        found = []
        for p in parents:
            found.append(get(id(p)) or self.unrecorded(p))
        return ",".join(found), self.levels[id(parents[0])] if parents else self.current_level()

    def current_level(self):
        """The level of what happens now: the innermost open frame's, or the trace nesting's."""
        frames = self.frames
        return frames[-1].level if frames else max(state.depth - 1, 0)


def box_levels(table):
    """``Keeper.box_level`` for a node table (its ``levels``, ``id(node) -> level``): a box's level is
    its node's (autograd's own trace numbers are global across threads).

    A function of the table, not a method of the Recorder: the Recorder holds its Keeper, and a
    bound method there would be a reference cycle that kept each recording (its events, its node
    table) alive after its last use, until Python's cyclic collector ran."""
    labels, levels = table.labels, table.levels

    def box_level(box):
        key = id(box._node)
        return levels.get(key, 0) if key in labels else state.levels.get(box._trace, box._trace)

    return box_level

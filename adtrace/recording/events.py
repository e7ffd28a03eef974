"""The recorder's public vocabulary: one frozen dataclass per kind of event.

Every event carries ``mode`` (``"rev"`` or ``"fwd"``), ``level`` (autograd's trace number: 0 for
the outermost trace, 1 for the inner one under ``grad(grad(f))``) and ``query`` (the number of the
``backward_pass`` run it belongs to, from 1; ``None`` outside any backward pass). Nodes are named by
label (``adtrace.labels``), never by a live ``Node`` or an ``id()``. Values are snapshots taken
under the recording's capture level (``adtrace.values``): exact values, ``ArraySummary``,
``Sparse``, ``Boxed``, or ``None`` under ``capture="structure"``.
"""

from dataclasses import dataclass
from typing import Any, ClassVar, Optional


@dataclass(frozen=True, slots=True)
class Event:
    kind: ClassVar[str] = "event"
    mode: str
    level: int
    query: Optional[int]


@dataclass(frozen=True, slots=True)
class RootCreated(Event):
    """``VJPNode.new_root()`` in ``make_vjp``: the input node (it never runs ``__init__``)."""

    kind: ClassVar[str] = "root"
    label: str


@dataclass(frozen=True, slots=True)
class NodeCreated(Event):
    """``VJPNode.__init__`` inside a primitive call: an operation node and its local rule."""

    kind: ClassVar[str] = "node"
    label: str
    primitive: str
    argnums: tuple
    parents: tuple  # parent labels, aligned with argnums (one per boxed argument position)
    value: Any


@dataclass(frozen=True, slots=True)
class TraceReturned(Event):
    """``end_value, end_node = trace(start_node, fun, x)`` in ``make_vjp`` / ``make_jvp``."""

    kind: ClassVar[str] = "trace"
    root: str
    end: Optional[str]  # None: "Output seems independent of input", no backward pass follows
    input: Any
    output: Any
    independent: bool


@dataclass(frozen=True, slots=True)
class BackwardStart(Event):
    """``outgrads = {end_node: (g, False)}``: one backward query starts with its seed ``g``."""

    kind: ClassVar[str] = "backward_start"
    end: str
    seed: Any


@dataclass(frozen=True, slots=True)
class ToposortYield(Event):
    """``for node in toposort(end_node)``: the node visited next (position counts from 0)."""

    kind: ClassVar[str] = "toposort"
    node: str
    position: int


@dataclass(frozen=True, slots=True)
class LocalVJP(Event):
    """``ingrads = node.vjp(outgrad[0])``: the node's local VJP, its input and its output."""

    kind: ClassVar[str] = "vjp"
    node: str
    outgrad: Any
    ingrads: tuple  # one cotangent per parent position (a generator VJP is materialised)


@dataclass(frozen=True, slots=True)
class AddOutgrads(Event):
    """``outgrads[parent] = add_outgrads(outgrads.get(parent), ingrad)`` in ``backward_pass``, or
    one step of ``sum_outgrads`` inside a ``JVPNode`` (mode ``fwd``).

    ``node`` made the contribution (reverse) or is being built (forward); ``position`` indexes its
    parents, ``argnum`` is the argument position; ``previous`` and ``result`` are autograd's own
    ``(value, mutable)`` pairs, ``previous`` None on the first contribution.
    """

    kind: ClassVar[str] = "add_outgrads"
    node: Optional[str]
    position: int
    parent: Optional[str]
    argnum: Optional[int]
    previous: Optional[tuple]
    contribution: Any
    result: tuple


@dataclass(frozen=True, slots=True)
class BackwardEnd(Event):
    """``return outgrad[0]``: the cotangent handed back (``error`` names an exception instead)."""

    kind: ClassVar[str] = "backward_end"
    end: str
    result: Any
    error: Optional[str]


@dataclass(frozen=True, slots=True)
class JVPRoot(Event):
    """``JVPNode.new_root(g)`` in ``make_jvp``'s ``jvp``: the input node and its tangent ``g``."""

    kind: ClassVar[str] = "jvp_root"
    label: str
    tangent: Any


@dataclass(frozen=True, slots=True)
class JVPNodeCreated(Event):
    """``JVPNode.__init__``: an operation node in forward mode with its tangent ``self.g``."""

    kind: ClassVar[str] = "jvp_node"
    label: str
    primitive: str
    argnums: tuple
    parents: tuple
    value: Any
    tangent: Any


EVENT_TYPES = (
    RootCreated,
    NodeCreated,
    TraceReturned,
    BackwardStart,
    ToposortYield,
    LocalVJP,
    AddOutgrads,
    BackwardEnd,
    JVPRoot,
    JVPNodeCreated,
)
NODE_KINDS = ("root", "node", "jvp_root", "jvp_node")

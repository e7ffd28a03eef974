"""The lecture's reverse AD algorithm over a recorded graph, for an engine adtrace records but does not
trace itself (micrograd and learners' classes of its shape).

The graph is the recording's nodes (labels, parents by position, values); the local rules are
the engine's own (``recording.code.ops``: ``recording/micrograd/ops.py``), keyed by the op as the
class writes it. A node whose op has no rule there
*borrows* the engine's own contributions as recorded (its ``vjp`` event), so the lecture can go on
past it; its step says ``borrowed`` (so does a node whose children came as a set, argument order
lost: its contributions are the engine's own, into each child as it wrote them). A contribution
neither ruled nor recorded (a write into ``.grad`` not read as ``grad + c``), or recorded only as a
summary (capture ``auto`` of a large array), is None, and so is every sum it enters: not known, never a guess. Values
may be numpy arrays (a learner's tensor engine): the rules give each partial adjoint in its input's
shape. For the buggy ``a + a`` at 3 (``__add__``'s backward assigns)::

    i = v1_add    node_to_grad[i] = [1]      v_i_bar = 1   append 1, 1 to node_to_grad[v0_leaf]
    i = v0_leaf   node_to_grad[i] = [1, 1]   v_i_bar = 2   (the engine's .grad there: 1)
"""

import operator
from functools import reduce

import numpy as np

from ..recording.events import BackwardStart, VJPCalled
from .order import reverse_topo_order
from .rules import BORROWED, OWN, ROOT
from .steps import Contribution, GradientRun, Step


class _Node:
    """A recorded node as ``order.reverse_topo_order`` walks it."""
    __slots__ = ("label", "parents")

    def __init__(self, label):
        self.label, self.parents = label, ()


def run_recorded(recording, query):
    """The lecture's run over the graph ``query``'s backward pass walked, with its seed; None when
    the recording kept no values (capture ``structure``) or the pass has no seed."""
    events = recording.query_events(query)
    start = next((e for e in events if isinstance(e, BackwardStart)), None)
    if start is None or start.seed is None:
        return None
    parents = recording.graph(start.end)
    nodes = _nodes(parents)
    recorded = {e.node: e.ingrads for e in events if isinstance(e, VJPCalled)}
    values = {label: getattr(recording.nodes.get(label), "value", None) for label in parents}
    node_to_grad = {start.end: [start.seed]}
    steps = []
    for i in reverse_topo_order(nodes[start.end]):
        # sum(node_to_grad[i]), left to right; not known (None) when a contribution into it was not
        v_i_bar = _sum(node_to_grad.get(i.label, [None]))
        rule, partials, why = _partials(recording.code.ops, recording.nodes.get(i.label), i, values, v_i_bar,
                                        recorded.get(i.label))
        for v_k, partial in zip(i.parents, partials):
            node_to_grad.setdefault(v_k.label, []).append(partial)
        steps.append(Step(i.label, _primitive(recording, i.label), rule, tuple(node_to_grad.get(i.label, ())), v_i_bar,
                          tuple(Contribution(k, k, v_k.label, partial)
                                for k, (v_k, partial) in enumerate(zip(i.parents, partials))), why))
    return GradientRun(value=values.get(start.end), seed=start.seed, adjoint=None,
                       order=tuple(step.label for step in steps), steps=tuple(steps), parents=parents,
                       labels=tuple(label for label in recording.nodes if label in parents))


def lecture_order(parents, end):
    """The lecture's visit order (reverse topological, its DFS) over a recorded graph ``label -> parent
    labels`` from ``end``: no values needed (capture ``structure`` too)."""
    return tuple(node.label for node in reverse_topo_order(_nodes(parents)[end]))


def _nodes(parents):
    nodes = {label: _Node(label) for label in parents}
    for label, node in nodes.items():
        node.parents = tuple(nodes[p] for p in parents[label])
    return nodes


def _partials(ops, event, i, values, v_i_bar, recorded):
    """``(rule, partial adjoints by input position, why borrowed or None)`` of node ``i``."""
    if not i.parents:
        return ROOT, (), None
    op = getattr(event, "primitive", None)
    # (children given as a set, their argument order lost: the rule cannot say which child gets which)
    rule = None if None in getattr(event, "argnums", ()) else ops.vjp(op, len(i.parents))
    inputs = [values[p.label] for p in i.parents]
    why = None
    if (rule is not None and all(_number(v) for v in [v_i_bar, values[i.label], *inputs])
            and ops.fits(op, values[i.label], inputs)):
        if _gives(ops.forward(op, len(inputs)), values[i.label], inputs):
            return OWN, tuple(rule(v_i_bar, values[i.label], *inputs)), None
        why = (f"{i.label}'s inputs as recorded do not give its value (an input's .data changed after it was "
               "made: an update p.data -= lr * p.grad)")
    if recorded is None:
        return BORROWED, (None,) * len(i.parents), why
    return BORROWED, tuple(p if _number(p) else None for p in recorded), why  # (a summary is not known)


def _gives(forward, out, inputs, rtol=1e-5):
    """Whether ``forward`` of the recorded inputs gives the recorded ``out`` (normwise, to ``rtol``: the op
    as this class computes it may round otherwise, as ``tanh`` by ``exp``): if not, an input's data
    changed after it was recorded, and the rule at those inputs is not the derivative the engine took."""
    if forward is None:
        return True
    try:
        with np.errstate(all="ignore"):
            got, want = np.asarray(forward(*inputs), dtype=float), np.asarray(out, dtype=float)
    except (TypeError, ValueError):  # (operands numpy cannot combine: the rule's own business)
        return True
    if np.array_equal(got, want, equal_nan=True) or not (np.all(np.isfinite(got)) and np.all(np.isfinite(want))):
        return True
    return bool(np.linalg.norm(got - want) <= rtol * max(np.linalg.norm(got), np.linalg.norm(want)))


def _sum(partials):
    return None if not all(map(_number, partials)) else reduce(operator.add, partials)


def _number(value):
    """A number or an array of numbers (not a value kept as a summary: capture ``auto`` of a large array)."""
    return value is not None and hasattr(value, "__mul__") and not isinstance(value, tuple)


def _primitive(recording, label):
    return getattr(recording.nodes.get(label), "primitive", "(unrecorded)")

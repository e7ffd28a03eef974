"""Flags read from the recorded backward pass itself (no re-running):

- a contribution whose vector space (shape, dtype, hence complexness) differs from its parent's value:
  the ``assert vspace(...) == ...`` class of bug, which ``add_outgrads`` may silently broadcast;
- the first non-finite value: the first node whose forward value is NaN/Inf, and the first node
  whose local VJP turned a finite outgrad into a non-finite contribution (where a NaN gradient
  is born, e.g. ``sqrt`` at 0 in ``sqrt(x - x)``).
"""

import numpy as np

from ..recording.events import AddOutgrads, NodeCreated, TraceReturned, VJPCalled
from ..recording.values import plain
from .local import FAIL, NodeCheck


def vspace_flags(recording, query, calls):
    """Contributions of another vector space than their parent's value, each flagged at the node
    that changed it: a node whose outgrad was already of the other shape or dtype only passed it on
    (``eigh``'s VJP returns float64 for a float32 input, and the ``reshape`` before it hands the
    float64 on to the root: ``eigh`` is named, not ``reshape``)."""
    values = _parent_values(recording)
    received = {e.node: _space(plain(e.outgrad)) for e in recording.query_events(query) if isinstance(e, VJPCalled)}
    rows = []
    for e in recording.query_events(query):
        if not isinstance(e, AddOutgrads) or e.parent not in values:
            continue
        got, want = _space(plain(e.contribution)), _space(plain(values[e.parent]))
        if got and want and got != want and not _passed_on(got, want, received.get(e.node), values.get(e.node)):
            node = recording.nodes.get(e.node)
            call = calls.get(e.node)
            rows.append(NodeCheck(e.node, getattr(node, "primitive", "?"), e.argnum, call and call.site, "vspace",
                                  FAIL,
                                  reason=f"contribution to {e.parent} is {_text(got)}, the parent is {_text(want)}"))
    return rows


def nonfinite_origin(recording, query, calls):
    """The first place a NaN/Inf appears, as a ``NodeCheck`` (or ``None``)."""
    for e in recording.of_kind(NodeCreated):
        if not _finite(e.value):
            call = calls.get(e.label)
            return NodeCheck(e.label, e.primitive, None, call and call.site, "nonfinite", FAIL,
                             reason="its forward value is not finite")
    for e in recording.query_events(query):
        if isinstance(e, VJPCalled) and _finite(e.outgrad):
            for position, ingrad in enumerate(e.ingrads):
                if not _finite(ingrad):
                    node = recording.nodes.get(e.node)
                    call = calls.get(e.node)
                    argnum = node.argnums[position] if node is not None and hasattr(node, "argnums") else None
                    return NodeCheck(e.node, getattr(node, "primitive", "root"), argnum, call and call.site,
                                     "nonfinite", FAIL,
                                     reason="its VJP turns a finite outgrad into a non-finite contribution")
    return None


def _passed_on(got, want, outgrad, node_value):
    """Whether each way ``got`` differs from ``want`` (shape, dtype) is a way the node's own outgrad
    already differed from the node's value: the node passed the difference on, it did not make it."""
    own = _space(plain(node_value))
    if not outgrad or not own:
        return False
    return all(g == w or (o != n and o == g) for g, w, o, n in zip(got, want, outgrad, own))


def _parent_values(recording):
    values = {e.root: e.input for e in recording.of_kind(TraceReturned)}
    values.update({e.label: e.value for e in recording.of_kind(NodeCreated)})
    return values


def _space(value):
    if value is None or isinstance(value, (tuple, list, dict)):
        return None
    a = np.asarray(value)
    if a.dtype.kind not in "fc":
        return None
    return a.shape, str(a.dtype)


def _text(space):
    return f"shape {space[0]} {space[1]}"


def _finite(value):
    value = plain(value)
    if value is None:
        return True
    if isinstance(value, (tuple, list)):
        return all(_finite(v) for v in value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    try:
        return bool(np.all(np.isfinite(np.asarray(value))))
    except TypeError:
        return True

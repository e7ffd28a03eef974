"""Why an input element's gradient is NaN or infinite: the first non-finite value on the backward
side, not the last symptom.

The backward side's values are read in the order ``backward_pass`` made them (the query's events):
the origin is the first ``vjp`` whose ``outgrad`` was finite and whose ``ingrads`` were not (a non-finite
seed is its own origin). Its cause is read at the first non-finite element: the ``outgrad`` there and
the node's inputs there (element-wise nodes: the same element; others: the whole value). An
``outgrad`` of 0 there that a ``where`` downstream made is the ``where`` trap (``0 * inf`` in the
unselected branch's VJP): ``where-unselected-branch``, the primitive's own boundary in ``detail``.
When a forward value was already non-finite, the first node whose value was (its inputs finite) is
added as the forward origin (``Cause.forward``).
"""

import numpy as np

from ..recording.events import BackwardStart, VJPCalled
from .elements import dense, flat
from .explanation import Cause
from .reach import follow
from .reasons import ELEMENTWISE, nonfinite_reason


def why_nonfinite(recording, query, graph, element):
    causes = []
    touched = follow(recording, query, graph, element).touched
    origins = []
    for event in recording.query_events(query):
        if type(event) is BackwardStart and not _finite(event.seed):
            causes.append(Cause(event.end, "seed", None, None, "nonfinite-seed", detail="the seed itself"))
            break
        if type(event) is VJPCalled and _finite(event.outgrad) and not all(map(_finite, event.ingrads)):
            origins.append(event)
            position = _reaching(recording, graph, event, touched)
            if position is not None:
                causes.append(_backward_origin(recording, graph, event, position))
                break
    if not causes and origins:  # none on the element's own paths (it was not followed there): the first
        causes.append(_backward_origin(recording, graph, origins[0], _nonfinite_position(origins[0])))
    forward = _forward_origin(recording, graph)
    if forward is not None:
        causes.append(forward)
    return causes


def _reaching(recording, graph, event, touched):
    """The parent position whose non-finite contribution lands on elements the input element moves
    (so it flows into the element's gradient), or None."""
    node = recording.nodes[event.node]
    for position, ingrad in enumerate(event.ingrads):
        parent = node.parents[position]
        mask = touched.get(parent)
        values = flat(dense(ingrad, graph.value_of(recording, parent)))
        if mask is not None and event.node in touched and values is not None and values.size == mask.size \
                and (~np.isfinite(values) & mask).any():
            return position
    return None


def _nonfinite_position(event):
    return next(i for i, g in enumerate(event.ingrads) if not _finite(g))


def _backward_origin(recording, graph, event, position):
    node = recording.nodes[event.node]
    parent = node.parents[position]
    ingrad = flat(dense(event.ingrads[position], graph.value_of(recording, parent)))
    at = int(np.flatnonzero(~np.isfinite(ingrad))[0]) if ingrad is not None else 0
    outgrad = _element(event.outgrad, at, node, ingrad.size if ingrad is not None else None)
    inputs = _inputs(recording, graph, node, at)
    values = {"outgrad": outgrad, "ingrad": ingrad[at] if ingrad is not None else None,
              **{f"input[{argnum}]": v for argnum, v in inputs.items()}}
    reason = nonfinite_reason(node.primitive, node.argnums[position], inputs)
    where = [label for label in sorted(graph.descendants(event.node))
             if getattr(recording.nodes.get(label), "primitive", "") == "where"]
    detail = f"its VJP made {values['ingrad']} from a finite outgrad"
    if outgrad is not None and outgrad == 0 and where:
        detail = f"{reason} in the branch {where[0]} did not select: its VJP made 0 * inf"
        reason = "where-unselected-branch"
    return Cause(event.node, node.primitive, node.argnums[position], node.site, reason, detail=detail,
                 values={k: v for k, v in values.items() if v is not None})


def _forward_origin(recording, graph):
    for label in graph.order:
        node = recording.nodes.get(label)
        if label == graph.root or not hasattr(node, "parents") or _finite(node.value):
            continue
        if all(_finite(graph.value_of(recording, p)) for p in node.parents):
            at = int(np.flatnonzero(~np.isfinite(flat(node.value)))[0])
            inputs = _inputs(recording, graph, node, at)
            reason = nonfinite_reason(node.primitive, node.argnums[0], inputs)
            return Cause(label, node.primitive, node.argnums[0], node.site, reason, forward=True,
                         detail=f"its forward value was already {flat(node.value)[at]}",
                         values={f"input[{a}]": v for a, v in inputs.items() if v is not None})
    return None


def _inputs(recording, graph, node, at):
    """argnum -> the node's input at element ``at`` (element-wise, same size) or the whole input if a
    number; from the node's call where kept, else from its parents' values."""
    call = recording.calls.get(node.label)
    args = dict(enumerate(call.args)) if call is not None else {
        argnum: graph.value_of(recording, parent) for argnum, parent in zip(node.argnums, node.parents)}
    size = np.size(flat(node.value)) if flat(node.value) is not None else None
    out = {}
    for argnum, value in args.items():
        values = flat(value) if value is not None and not isinstance(value, str) else None
        if values is None or values.dtype.kind not in "fciub":
            continue
        if values.size == 1:
            out[argnum] = values[0]
        elif node.primitive in ELEMENTWISE and values.size == size:
            out[argnum] = values[at]
    return out


def _element(value, at, node, size):
    """``value`` (a node's outgrad) at the element ``at`` of a parent of ``size`` elements: the same
    element of an element-wise node of the parent's size, the number itself if it is one, else None."""
    values = flat(value)
    if values is None:
        return None
    if values.size == 1:
        return values[0]
    return values[at] if node.primitive in ELEMENTWISE and values.size == size else None


def _finite(value):
    values = flat(dense(value, value)) if value is not None else None
    return values is None or values.dtype.kind not in "fc" or bool(np.isfinite(values).all())

"""Why an input element's gradient is NaN or infinite: the first non-finite value on the backward
side, not the last symptom.

The backward side's values are read in the order ``backward_pass`` made them (the query's events): an
origin is a ``vjp`` whose ``outgrad`` was finite and whose ``ingrads`` were not where they land on the
explained element's own paths (each is named, the first first; a non-finite seed is its own origin). Its
cause is read at that element of the parent: the ``outgrad`` there, the node's inputs there
(element-wise nodes: the same element; others: the whole value) and its local derivative there. An
``outgrad`` of 0 there that a ``where`` downstream made is the ``where`` trap (``0 * inf`` or ``0 *
nan`` in the unselected branch's VJP): ``where-unselected-branch``, the primitive's own reason in
``detail``. When a forward value on the element's paths was already non-finite, the walk goes up from
it, element by element, to the first node that made it from finite inputs (``Cause.forward``), and to
the node that made the NaN of infinities (``inf - inf``) when that is another one.
"""

import numpy as np

from ..recording.events import BackwardStart, VJPCalled
from ..recording.names import variable_names
from ..report.format import fmt
from .elements import dense, flat
from .explanation import Cause
from .jacobians import diagonal, jacobian
from .reach import follow
from .reasons import ELEMENTWISE, nonfinite_reason
from .query_index import query_index


def why_nonfinite(recording, query, graph, element):
    causes = []
    touched = follow(recording, query, graph, element).touched
    origins = []
    for event in query_index(recording, query).events:
        if type(event) is BackwardStart and not _finite(event.seed):
            causes.append(Cause(event.end, "seed", None, None, "nonfinite-seed", detail="the seed itself"))
            break
        if type(event) is VJPCalled and _finite(event.outgrad) and not all(map(_finite, event.ingrads)):
            origins.append(event)
            reaching = _reaching(recording, graph, event, touched)
            if reaching is not None:  # every distinct origin (sqrt(x) + log(x) at 0: both), the first first
                causes.append(_backward_origin(recording, graph, event, *reaching))
    if not causes and origins:  # none on the element's own paths (it was not followed there): the first
        position = _nonfinite_position(origins[0])
        causes.append(_backward_origin(recording, graph, origins[0], position, None))
    causes += _forward_origins(recording, graph, touched)
    return causes


def _reaching(recording, graph, event, touched):
    """``(position, at)``: the parent position and flat element whose non-finite contribution lands on
    an element the input element moves (so it flows into the element's gradient), or None."""
    node = recording.nodes[event.node]
    for position, ingrad in enumerate(event.ingrads):
        parent = node.parents[position]
        mask = touched.get(parent)
        values = flat(dense(ingrad, graph.value_of(recording, parent)))
        if mask is not None and event.node in touched and values is not None and values.size == mask.size:
            hits = np.flatnonzero(~np.isfinite(values) & mask)
            if hits.size:
                return position, int(hits[0])
    return None


def _nonfinite_position(event):
    return next(i for i, g in enumerate(event.ingrads) if not _finite(g))


def _backward_origin(recording, graph, event, position, at):
    """The cause at the VJP of ``event`` into parent ``position``, read at the parent's flat element
    ``at`` (None: the explained element's paths were not followed there; its first non-finite one)."""
    node = recording.nodes[event.node]
    parent = node.parents[position]
    ingrad = flat(dense(event.ingrads[position], graph.value_of(recording, parent)))
    elsewhere = at is None
    if elsewhere:
        at = int(np.flatnonzero(~np.isfinite(ingrad))[0]) if ingrad is not None else 0
    outgrad = _element(event.outgrad, at, node, ingrad.size if ingrad is not None else None)
    inputs = graph.inputs_at(recording, node, at)
    derivative = _derivative(recording, node, position, at)
    output = _element(node.value, at, node, ingrad.size if ingrad is not None else None)
    values = {"outgrad": outgrad, "ingrad": ingrad[at] if ingrad is not None else None,
              **{f"input[{argnum}]": v for argnum, v in inputs.items()}, "output": output, "derivative": derivative}
    reason = nonfinite_reason(node.primitive, node.argnums[position], inputs, values["ingrad"], derivative, output)
    downstream = graph.descendants(event.node)
    where = [label for label in graph.order  # the nearest first (creation order, not the labels' text)
             if label in downstream and getattr(recording.nodes.get(label), "primitive", "") == "where"]
    detail = f"its VJP made {fmt(values['ingrad'])} from a finite outgrad"
    if outgrad is not None and outgrad == 0 and where:
        named = variable_names(recording).get(where[0])  # (the derivative, when known, is in the values)
        branch = f"{where[0]} ({named})" if named else where[0]
        detail = f"{reason} in the branch {branch} did not select: its VJP made 0 * a non-finite derivative"
        reason = "where-unselected-branch"
    if elsewhere:
        detail += f" (values at element {at} of {parent}: the explained element's paths were not followed here)"
    elif ingrad is not None and ingrad.size > 1:
        detail += f" (values at element {at} of {parent})"
    return Cause(event.node, node.primitive, node.argnums[position], node.site, reason, detail=detail,
                 values={k: v for k, v in values.items() if v is not None})


def _derivative(recording, node, position, at):
    """An element-wise node's local derivative at element ``at`` (its re-evaluated Jacobian's diagonal), or None."""
    if node.primitive not in ELEMENTWISE:
        return None
    found = diagonal(recording, node.label, position)  # (one VJP, not an n x n Jacobian)
    if found is not None:
        return found[at] if at < found.size else None
    J = jacobian(recording, node.label, position)
    if J is None or J.shape[0] != J.shape[1] or at >= J.shape[0]:
        return None
    return J[at, at]


def _forward_origins(recording, graph, touched):
    """The forward node that first made a non-finite value on the element's paths (from finite inputs),
    and the one that made the NaN of infinities when another: found by walking up, element by element,
    from the first non-finite value the element touches."""
    start = _first_touched_nonfinite(recording, graph, touched)
    if start is None:
        return []
    label, at = start
    nan_maker = None
    while True:
        node = recording.nodes[label]
        value = flat(node.value)[at]
        inputs = graph.inputs_at(recording, node, at)
        up = _nonfinite_parent(recording, graph, node, at)
        if np.isnan(value) and nan_maker is None and not any(np.isnan(v) for v in inputs.values() if _scalar(v)) \
                and (up is None or not np.isnan(flat(graph.value_of(recording, up[0]))[up[1]])):
            nan_maker = _forward_cause(label, node, at, inputs, value)
        if up is not None and up[0] == graph.root:  # the input itself was not finite there
            number = flat(graph.input)[up[1]]
            origin = Cause(graph.root, "root", None, None, "nonfinite-input", forward=True,
                           detail=f"the input itself is {fmt(number)} at element {up[1]}", values={"input": number})
            return [origin] + ([nan_maker] if nan_maker is not None else [])
        if up is None:
            origin = _forward_cause(label, node, at, inputs, value)
            return [origin] + ([nan_maker] if nan_maker is not None and nan_maker.node != label else [])
        label, at = up


def _first_touched_nonfinite(recording, graph, touched):
    """``(label, element)``: the first NaN on the element's paths, else the first infinity."""
    found = {}
    for label in graph.order:
        node = recording.nodes.get(label)
        mask = touched.get(label)
        if label == graph.root or not hasattr(node, "parents") or mask is None:
            continue
        values = flat(node.value)
        if values is not None and values.size == mask.size and values.dtype.kind in "fc":
            for kind, bad in (("nan", np.isnan(values)), ("inf", np.isinf(values))):
                hits = np.flatnonzero(bad & mask)
                if hits.size and kind not in found:
                    found[kind] = label, int(hits[0])
    return found.get("nan", found.get("inf"))


def _nonfinite_parent(recording, graph, node, at):
    """``(parent, element)``: the first parent whose value at the element ``at`` of ``node`` reads was not
    finite (element-wise nodes: the same element or a number; others: its first non-finite one)."""
    size = np.size(flat(node.value))
    for parent in node.parents:
        values = flat(graph.value_of(recording, parent))
        if values is None or values.dtype.kind not in "fc":
            continue
        if values.size == 1:
            candidates = [0]
        elif node.primitive in ELEMENTWISE and values.size == size:
            candidates = [at]
        else:
            candidates = np.flatnonzero(~np.isfinite(values))[:1]
        for i in candidates:
            if not np.isfinite(values[i]):
                return parent, int(i)
    return None


def _forward_cause(label, node, at, inputs, value):
    reason = nonfinite_reason(node.primitive, node.argnums[0], inputs, value)
    where = f" at element {at}" if np.size(flat(node.value)) > 1 else ""
    return Cause(label, node.primitive, node.argnums[0], node.site, reason, forward=True,
                 detail=f"its forward value{where} was already {fmt(value)}",
                 values={f"input[{a}]": v for a, v in inputs.items() if v is not None})


def _element(value, at, node, size):
    """``value`` (a node's outgrad) at the element ``at`` of a parent of ``size`` elements: the same
    element of an element-wise node of the parent's size, the number itself if it is one, else None."""
    values = flat(value)
    if values is None:
        return None
    if values.size == 1:
        return values[0]
    return values[at] if node.primitive in ELEMENTWISE and values.size == size else None


def _scalar(value):
    return value is not None and np.size(value) == 1 and np.asarray(value).dtype.kind in "fc"


def _finite(value):
    values = flat(dense(value, value)) if value is not None else None
    return values is None or values.dtype.kind not in "fc" or bool(np.isfinite(values).all())

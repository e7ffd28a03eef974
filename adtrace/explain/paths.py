"""A scalar graph's gradient as a sum over paths: each path from the input to the output carries the
product of the local partials along it (the chain rule, expanded), largest magnitude first.

A local partial is read from the recording where it can be: ``ingrad / outgrad`` of the edge's
``vjp`` event when the outgrad is not 0 (within a rounding of the rule's own value: the rule made
``ingrad`` as ``outgrad * partial``, or as another expression of it, ``outgrad / y`` for a quotient);
else the rule re-evaluated on a unit outgrad (``jacobians.py``, needs ``record(calls=True)``), else
unknown (NaN). The paths' sum therefore equals the gradient within rounding, not bit for bit: the
exact statement is ``contributions.fold``.

An array graph gets element paths when that is cheap (``element_paths``): from the input element
through each node's elements, along the non-zero entries of the nodes' Jacobians re-evaluated from
their recorded calls (``record(calls=True)``), ``v2_dot[1]`` a node's element (the input's as written,
``v0_root['W'][1]``), each path's product times the seed there (a path whose product is already
infinite goes on through an element-wise partial of 0, as the VJP's ``0 * inf`` did: the NaN a
``where`` trap makes is a path); none when a node on the way has no Jacobian or the paths exceed
``MAX_PATHS``.
"""

import numpy as np

from ..recording.events import BackwardStart, VJPCalled
from .elements import flat, flat_index
from .explanation import Path
from .jacobians import column as column_of, diagonal, jacobian
from .reasons import ELEMENTWISE
from .query_index import query_index

MAX_PATHS = 10_000  # enumerated at most; beyond, only counted
SHOWN = 10


def scalar_graph(recording, graph):
    on_paths = [label for label in graph.order if graph.from_root.get(label) and graph.to_end.get(label)]
    return bool(on_paths) and all(not isinstance(graph.value_of(recording, label), (dict, list, tuple))
                                  and np.size(graph.value_of(recording, label)) == 1 for label in on_paths)


def local_partials(recording, query, graph):
    """``(node, position) -> d node / d parent``, for every edge the query's VJPs ran."""
    partials = {}
    for event in query_index(recording, query).events:
        if type(event) is not VJPCalled:
            continue
        for position, ingrad in enumerate(event.ingrads):
            outgrad = np.asarray(event.outgrad).ravel()
            if outgrad.size == 1 and outgrad[0] != 0 and np.size(ingrad) == 1:
                with np.errstate(all="ignore"):
                    partials[event.node, position] = (np.asarray(ingrad).ravel() / outgrad)[0]
            else:
                J = jacobian(recording, event.node, position)
                partials[event.node, position] = J[0, 0] if isinstance(J, np.ndarray) and J.size == 1 else np.nan
    return partials


def paths(recording, query, graph, partials=None):
    """``(shown, more, more_sum)``: the largest ``SHOWN`` paths, how many others, and their sum;
    ``partials``: the edges' local partials when the caller has them (a value class's rules)."""
    if not scalar_graph(recording, graph):
        return (), 0, None
    if graph.paths() > MAX_PATHS:
        return (), graph.paths(), None
    partials = local_partials(recording, query, graph) if partials is None else partials
    found, stack = [], [((graph.root,), np.float64(1.0))]
    with np.errstate(all="ignore"):
        while stack:  # depth first, without recursion (a scalar chain may be thousands of nodes long)
            nodes, product = stack.pop()
            if nodes[-1] == graph.end:
                found.append(Path(nodes, product))
                continue
            for consumer, position in reversed(graph.consumers.get(nodes[-1], ())):
                if graph.to_end.get(consumer):
                    stack.append((nodes + (consumer,), product * partials.get((consumer, position), np.nan)))
    found.sort(key=lambda p: -abs(p.value) if np.isfinite(p.value) else -np.inf)
    rest = found[SHOWN:]
    return tuple(found[:SHOWN]), len(rest), (sum(p.value for p in rest) if rest else None)


def element_paths(recording, query, graph, element):
    """``(shown, more, more_sum)`` of an array graph's element paths, or ``((), 0, None)`` when not cheap."""
    seed = next((flat(e.seed) for e in query_index(recording, query).events if type(e) is BackwardStart), None)
    start = (graph.root, flat_index(graph.input, element))
    found, stack = [], [((start,), np.float64(1.0))]
    with np.errstate(all="ignore"):
        while stack:
            steps, product = stack.pop()
            label, at = steps[-1]
            if label == graph.end:
                names = (element.selector(graph.root),) + tuple(f"{node}[{i}]" for node, i in steps[1:])
                found.append(Path(names, product * seed[at]))  # the input's element as the user writes it
                continue
            for consumer, position in graph.consumers.get(label, ()):
                if not graph.to_end.get(consumer):
                    continue
                d = diagonal(recording, consumer, position)  # an element-wise node's: one VJP, not n x n
                if d is not None and at < d.size:
                    column = {at: d[at]}
                else:
                    J = jacobian(recording, consumer, position)
                    if J is None:
                        return (), 0, None
                    column = column_of(J, at)
                    if J.shape[0] != J.shape[1] or recording.nodes[consumer].primitive not in ELEMENTWISE:
                        d = None
                if seed is None:
                    return (), 0, None
                targets = [m for m, v in column.items() if v != 0]
                if not np.isfinite(product) and d is not None and at not in targets:
                    targets.append(at)  # a partial of 0 after an infinite product: the VJP's 0 * inf
                for m in targets:
                    stack.append((steps + ((consumer, int(m)),), product * column.get(m, 0.0)))
            if len(found) + len(stack) > MAX_PATHS:
                return (), 0, None
    found.sort(key=lambda p: -abs(p.value) if np.isfinite(p.value) else -np.inf)
    rest = found[SHOWN:]
    return tuple(found[:SHOWN]), len(rest), (sum(p.value for p in rest) if rest else None)

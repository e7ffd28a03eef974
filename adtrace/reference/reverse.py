"""Reverse mode, as the lecture writes it (CMU 10-414/714, "Reverse AD algorithm")::

    def gradient(out):
        node_to_grad = {out: [1]}
        for i in reverse_topo_order(out):
            v_i_bar = sum(node_to_grad[i])                # sum up partial adjoints
            for k in inputs(i):
                compute v_k_to_i_bar = v_i_bar * dv_i/dv_k # partial adjoint
                append v_k_to_i_bar to node_to_grad[k]    # propagate to input
        return adjoint of input v_input_bar

``gradient`` below is that loop over a graph traced by ``graph.trace_graph``; the
partial adjoints come from the local rules in ``rules.partial_adjoints``. For
``f(x) = x * x`` at 3.0 (graph ``v1_multiply = multiply(v0_root, v0_root)``)::

    i = v1_multiply   node_to_grad[i] = [1.0]   v_i_bar = 1.0
                      k = 0: append 1.0 * 3.0 to node_to_grad[v0_root]
                      k = 1: append 1.0 * 3.0 to node_to_grad[v0_root]
    i = v0_root       node_to_grad[i] = [3.0, 3.0]   v_i_bar = 6.0   -> returned

autograd's ``backward_pass`` computes the same sums with a running total per node
(``add_outgrads``) in the order of its own ``toposort``; the lecture keeps the list
and sums it when the node is visited. Where both orders bring a node's partial
adjoints in the same order, the results are bit for bit equal.
"""

import operator
from operator import attrgetter
from functools import reduce

import numpy as np
from autograd.core import vspace
from autograd.numpy.numpy_boxes import ArrayBox
from autograd.tracer import Box, getval
from autograd.wrap_util import unary_to_nary

from ..recording.events import REV
from ..recording.labels import ROOT_NAME, primitive_name

from .graph import parent_labels, trace_graph
from .order import reverse_topo_order
from .rules import OWN, ROOT, ACTIVE_TALLIES, note_visit, partial_adjoints, primitive_vjps, vjp_source
from .steps import GradientRun, make_contribution, make_step


def sum_partial_adjoints(partials):
    """``sum(node_to_grad[i])``, left to right, without Python's leading ``0 +``, in the node's
    vector space: ``+`` for arrays and scalars (the very additions autograd makes),
    ``vspace(...).add`` for the rest, as autograd's ``add_outgrads`` does (Python's ``+`` would
    concatenate three 3-tuples into a 9-tuple, and cannot add dicts)."""
    if len(partials) == 1:  # (most nodes: the sum of one term is the term itself, in every space)
        return partials[0]
    if Box.type_mappings.get(type(getval(partials[0]))) is ArrayBox:
        return reduce(operator.add, partials)
    return reduce(vspace(partials[0]).add, partials)


LABEL = attrgetter("label")
_RAW = frozenset({float, np.float64})  # a raw scalar: its own value, no box to look into (getval)


def gradient(graph, seed):
    """The lecture's algorithm on ``graph``: returns ``(v_input_bar, steps)``."""
    node_to_grad = {graph.out: [seed]}
    v_input_bar, steps, kinds = None, [], {}
    root, pop, get, append = graph.root, node_to_grad.pop, node_to_grad.get, steps.append
    tallies = ACTIVE_TALLIES  # (note_visit does nothing when no tally is counting)
    for i in reverse_topo_order(graph.out):
        partials = pop(i)  # (each node's list is read once: not kept for the whole run)
        v_i_bar = partials[0] if len(partials) == 1 else sum_partial_adjoints(partials)
        parents = i.parents
        if parents:
            kind = kinds.get(i.fun)
            if kind is None:
                kind = kinds[i.fun] = _kind(i.fun)
            rule, name, own = kind
            argnums = i.argnums
            if own is not None and len(argnums) == 1 and argnums[0] in own:  # (partial_adjoints' common case)
                v_k_to_i_bars = (own[argnums[0]](i.value, *i.args, **i.kwargs)(v_i_bar),)
            else:
                v_k_to_i_bars = partial_adjoints(i, v_i_bar)
            # (most nodes: _step's work inline, for one input and one partial adjoint. It pays: the loop below
            # and _step alone took 1.2-1.4x the time of gradient at 200k nodes, interleaved medians of 5 rounds)
            if len(parents) == 1:
                v_k, g = parents[0], v_k_to_i_bars[0]
                found = get(v_k)
                if found is None:
                    node_to_grad[v_k] = [g]
                else:
                    found.append(g)
                if tallies:
                    note_visit(i.fun, rule, REV)
                if len(partials) == 1 and type(v_i_bar) in _RAW and type(g) in _RAW:
                    append(make_step(i.label, name, rule, (v_i_bar,), v_i_bar,
                                     (make_contribution(0, argnums[0], v_k.label, g),)))
                    continue
            else:
                for v_k, v_k_to_i_bar in zip(parents, v_k_to_i_bars):  # inputs(i), by position
                    found = get(v_k)
                    if found is None:
                        node_to_grad[v_k] = [v_k_to_i_bar]
                    else:
                        found.append(v_k_to_i_bar)
                if tallies:
                    note_visit(i.fun, rule, REV)
            append(_step(i, rule, name, partials, v_i_bar, v_k_to_i_bars))
        else:
            append(_step(i, ROOT, ROOT_NAME, partials, v_i_bar, ()))
        if i is root:
            v_input_bar = v_i_bar
    if v_input_bar is None:  # the input got no partial adjoint: zeros of its space
        v_input_bar = vspace(graph.root.value).zeros()
    return v_input_bar, steps


def _kind(fun):
    """``(rule, name, own VJP makers or None)`` of a primitive: looked up once per run (a run visits the same few
    primitives at every node)."""
    rule = vjp_source(fun)
    return rule, primitive_name(fun), primitive_vjps[fun] if rule == OWN else None


def record_step(i, partials, v_i_bar, v_k_to_i_bars, kinds=None):
    """The visit of node ``i`` as a ``Step`` of raw values. ``kinds``: a cache of each primitive's
    ``(rule, name)`` for one run (a run visits the same few primitives at every node)."""
    if i.parents:
        kind = kinds.get(i.fun) if kinds is not None else None
        if kind is None:
            kind = (vjp_source(i.fun), primitive_name(i.fun))
            if kinds is not None:
                kinds[i.fun] = kind
        rule, name = kind
        note_visit(i.fun, rule, REV)
    else:
        rule, name = ROOT, ROOT_NAME
    return _step(i, rule, name, partials, v_i_bar, v_k_to_i_bars)


def _step(i, rule, name, partials, v_i_bar, v_k_to_i_bars):
    # (a float is its own raw value: no box to look into)
    if len(v_k_to_i_bars) == 1:  # (most nodes)
        g = v_k_to_i_bars[0]
        contributions = (make_contribution(0, i.argnums[0], i.parents[0].label, g if type(g) is float else getval(g)),)
    else:
        contributions = tuple([make_contribution(k, argnum, v_k.label, g if type(g) is float else getval(g))
                               for k, (argnum, v_k, g) in enumerate(zip(i.argnums, i.parents, v_k_to_i_bars))])
    if len(partials) == 1:
        p = partials[0]
        partials = (p if type(p) is float else getval(p),)
    else:
        partials = tuple([p if type(p) is float else getval(p) for p in partials])
    v_i_bar = v_i_bar if type(v_i_bar) is float else getval(v_i_bar)
    return make_step(i.label, name, rule, partials, v_i_bar, contributions)


# -------------------- the public surface, with autograd's signatures --------------------


def vjp_of(graph, x):
    """The function ``g -> v_input_bar`` for seeds ``g`` of the output's space."""

    def vjp(g):
        if graph.out is None:  # output independent of the input: zeros, as autograd
            return vspace(x).zeros()
        return gradient(graph, g)[0]

    return vjp


def unary_make_vjp(fun, x):
    graph = trace_graph(fun, x)
    return vjp_of(graph, x), graph.value


make_vjp = unary_to_nary(unary_make_vjp)
make_vjp.__doc__ = "Like ``autograd.make_vjp``: ``make_vjp(fun, argnum)(*args) -> (vjp, ans)``."


@unary_to_nary
def grad(fun, x):
    """Like ``autograd.grad``: the gradient of a scalar-valued ``fun`` wrt argument ``argnum``."""
    vjp, ans = unary_make_vjp(fun, x)
    if not vspace(ans).size == 1:
        raise TypeError("reference engine: grad only applies to scalar-output functions")
    return vjp(vspace(ans).ones())


@unary_to_nary
def elementwise_grad(fun, x):
    """Like ``autograd.elementwise_grad``: the VJP with a seed of ones."""
    vjp, ans = unary_make_vjp(fun, x)
    return vjp(vspace(ans).ones())


def run_gradient(fun, x, seed=None):
    """Trace ``fun`` at ``x`` and run ``gradient`` once, keeping everything: the
    ``GradientRun`` has the step log, the visit order, the graph as parent labels
    and the own/borrowed counts. ``seed`` defaults to ones of the output's space."""
    graph = trace_graph(fun, x)
    seed = vspace(graph.value).ones() if seed is None else seed
    if graph.out is None:
        adjoint, steps = vspace(x).zeros(), []
    else:
        adjoint, steps = gradient(graph, seed)
    run = GradientRun(
        value=getval(graph.value),
        seed=getval(seed),
        adjoint=getval(adjoint),
        order=tuple(map(LABEL, steps)),  # (read in C: a step and a node per node of the graph)
        steps=tuple(steps),
        parents=parent_labels(graph),
        labels=tuple(map(LABEL, graph.nodes)),
    )
    graph.nodes, graph.root, graph.out = [], None, None  # (each node holds the graph: freed now, not by a collection)
    return run

"""Forward mode: push a tangent through the traced graph, node by node.

Where reverse mode visits the graph output-first and carries adjoints ``v_i_bar``,
forward mode visits it input-first (``topo_order``) and carries tangents
``v_i_dot = sum over inputs k of dv_i/dv_k * v_k_dot``, starting from the input's
tangent ``x_dot``. One pass gives ``J x_dot``, one *column* combination of the
Jacobian (reverse mode gives ``u^T J``, a row combination). For
``f(x) = x * x + sin(x)`` at ``x = 3`` with ``x_dot = 1``::

    v0_root      v0_dot = 1
    v1_multiply  v1_dot = 1 * 3 + 3 * 1 = 6
    v2_sin       v2_dot = 1 * cos(3)
    v3_add       v3_dot = v1_dot + v2_dot = 6 + cos(3)
"""

import operator
from dataclasses import dataclass
from functools import reduce
from typing import Any

from autograd.core import vspace
from autograd.tracer import getval
from autograd.wrap_util import unary_to_nary

from ..recording.events import FWD
from ..recording.labels import primitive_name

from .graph import trace_graph
from .order import topo_order
from .rules import jvp_source, note_visit, tangent_shares


def tangents(graph, x_dot):
    """``node -> v_i_dot`` for the root and every node the output depends on."""
    node_to_tangent = {graph.root: x_dot}
    for i in topo_order(graph.out):
        if i is graph.root:
            continue
        input_tangents = [node_to_tangent[k] for k in i.parents]
        shares = tangent_shares(i, input_tangents)
        note_visit(i.fun, jvp_source(i.fun), FWD)
        node_to_tangent[i] = reduce(operator.add, shares)
    return node_to_tangent


def jvp_of(graph):
    """The function ``x_dot -> (value, output tangent)`` over one traced graph."""

    def jvp(x_dot):
        if graph.out is None:  # output independent of the input
            return graph.value, vspace(graph.value).zeros()
        return graph.value, tangents(graph, x_dot)[graph.out]

    return jvp


def unary_make_jvp(fun, x):
    return jvp_of(trace_graph(fun, x))


make_jvp = unary_to_nary(unary_make_jvp)
make_jvp.__doc__ = "Like ``autograd.make_jvp``: ``make_jvp(fun, argnum)(*args)(x_dot) -> (ans, J x_dot)``."


@dataclass(frozen=True)
class TangentStep:
    """The visit of node ``label`` in forward mode and its tangent ``v_i_dot``."""

    label: str
    primitive: str
    rule: str  # "own", "borrowed" or "root"
    tangent: Any


def run_tangents(fun, x, x_dot):
    """Trace ``fun`` at ``x``, push ``x_dot`` through, and log every node's tangent."""
    graph = trace_graph(fun, x)
    if graph.out is None:
        return ()
    node_to_tangent = tangents(graph, x_dot)
    return tuple(
        TangentStep(
            i.label,
            primitive_name(i.fun) if i.parents else "root",
            jvp_source(i.fun) if i.parents else "root",
            getval(node_to_tangent[i]),
        )
        for i in topo_order(graph.out)
    )

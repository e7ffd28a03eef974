"""Graph tracing: run the user's function once and keep its computational graph.

The reference engine does not build its own tracer. It hands autograd's tracer
(``autograd.tracer.trace``) a Node type of its own, exactly as autograd's
``examples/dot_graph.py`` does: every primitive call on a boxed value creates one
``ReferenceNode`` that simply *stores* what the lecture's graph needs:

    v_i = fun(*args, **kwargs)      value, fun, args, kwargs
    inputs(i)                       parents (one per boxed argument position)
    which argument each input is    argnums

No VJP closure is built here (that is ``autograd.core.VJPNode``'s job, which we do
not use); the local rules are looked up later, in ``rules.py``.

Worked example, ``f(x) = x * x`` at ``x = 3.0``::

    v0_root      value 3.0   parents ()
    v1_multiply  value 9.0   parents (v0_root, v0_root)   argnums (0, 1)

Labels come from ``recording/labels.py`` in creation order, the order autograd's tracer
creates nodes, so a recording of the same function has the same labels.
"""

from dataclasses import dataclass, field

from autograd.core import VJPNode, VSpace
from autograd.tracer import Box, Node, getval, notrace_primitives, trace

from ..recording.labels import ROOT_NAME, label_for, label_name, primitive_name


@dataclass(eq=False)
class Graph:
    """One traced graph: every node in creation order, the root (input) and the output."""

    nodes: list = field(default_factory=list)
    root: "ReferenceNode" = None
    out: "ReferenceNode" = None  # None when the output does not depend on the input
    value: object = None  # the output's value (a box if an outer trace is tracing)
    names: dict = field(default_factory=dict, repr=False)  # primitive -> its name in a label (the same few)

    def add(self, node):
        nodes = self.nodes
        if nodes:
            name = self.names.get(node.fun)
            if name is None:
                name = self.names[node.fun] = label_name(primitive_name(node.fun))
        else:
            name = label_name(ROOT_NAME)
        node.label = label_for(len(nodes), name)  # (node_label, the name reduced once per primitive)
        nodes.append(node)


class ReferenceNode(Node):
    """A node of the reference engine's graph: the primitive call, not a VJP closure."""

    __slots__ = ["graph", "label", "parents", "fun", "args", "kwargs", "argnums", "value"]

    def __init__(self, value, fun, args, kwargs, parent_argnums, parents):
        self.parents = tuple(parents)
        self.fun, self.args, self.kwargs = fun, args, kwargs
        self.argnums, self.value = tuple(parent_argnums), value
        self.graph = parents[0].graph  # the inputs of a node belong to the same trace
        self.graph.add(self)

    def initialize_root(self, graph, value):
        self.parents, self.fun, self.args, self.kwargs = (), None, (), {}
        self.argnums, self.value = (), value
        self.graph = graph
        graph.add(self)

    def __repr__(self):
        return f"<ReferenceNode {self.label}>"


# Primitives such as argmax are not traced (their outputs are constants). autograd
# keys this set by node type, so the engine's node type needs its own entry.
notrace_primitives[ReferenceNode] = set(notrace_primitives[VJPNode])


def check_input(x):
    """The engine differentiates values that have a vector space: arrays and scalars, containers
    of them (tuples, lists, dicts: a model's parameters) and a user's own registered ``VSpace``."""
    value = getval(x)
    if isinstance(value, (bool, int)) or type(value) not in VSpace.mappings or type(value) not in Box.type_mappings:
        raise TypeError(f"reference engine: no vector space to differentiate in for a {type(value).__name__} "
                        "(give a float, an array, or a tuple/list/dict of them)")


def trace_graph(fun, x):
    """Trace ``fun`` at ``x`` with autograd's tracer and return its ``Graph``."""
    check_input(x)
    graph = Graph()
    graph.root = ReferenceNode.new_root(graph, x)
    graph.value, graph.out = trace(graph.root, fun, x)
    return graph


def reachable(out):
    """The nodes the output depends on (out and all its ancestors)."""
    seen, stack = set(), [out] if out is not None else []
    while stack:
        node = stack.pop()
        if node not in seen:
            seen.add(node)
            stack.extend(node.parents)
    return seen


def parent_labels(graph, only_reachable=True):
    """``label -> tuple of parent labels by argument position`` (the recorder's format).

    By default only the nodes the output depends on (those a backward pass visits);
    ``only_reachable=False`` gives every traced node.
    """
    keep = reachable(graph.out) if only_reachable else set(graph.nodes)
    return {n.label: tuple([p.label for p in n.parents]) for n in graph.nodes if n in keep}

"""Orders of the graph: the lecture's ``reverse_topo_order`` and a validity check.

Reverse mode must visit a node only after every node that uses it, so that its
partial adjoints are all in ``node_to_grad`` when it is summed. Any *reverse
topological order* does that: each node comes before all of its inputs.

The lecture (and needle's ``find_topo_sort``) builds one by depth-first search:
visit the inputs of a node, then append the node (post-order); the list then has
inputs before users, and reversing it gives a reverse topological order.
For ``f(x) = sin(x) * x``::

    topo_order(out)          = [v0_root, v1_sin, v2_multiply]
    reverse_topo_order(out)  = [v2_multiply, v1_sin, v0_root]

autograd's ``toposort`` counts children instead and may visit siblings in another
order; both are valid, which ``is_reverse_topological`` checks on any order.
"""


def topo_order(out):
    """Depth-first post-order from ``out``: every node after all of its inputs.

    The recursion of the textbook version (``visit(k) for k in inputs(i)``, then
    append ``i``) is kept as an explicit stack so long chains do not hit Python's
    recursion limit; each stack entry is a node and the inputs it has yet to visit.
    """
    order, visited = [], {out}
    stack = [(out, iter(out.parents))]
    while stack:
        node, inputs_left = stack[-1]
        for k in inputs_left:
            if k not in visited:
                visited.add(k)
                stack.append((k, iter(k.parents)))
                break
        else:  # all inputs visited: post-order position of the node
            stack.pop()
            order.append(node)
    return order


def reverse_topo_order(out):
    """The order reverse mode visits nodes: each node before all of its inputs."""
    return list(reversed(topo_order(out)))


def is_reverse_topological(order, graph, leaves_anywhere=False):
    """Whether ``order`` (labels) is a reverse topological order of ``graph``.

    ``graph`` maps each label to the tuple of its parents' labels by argument
    position. Every node of the graph must appear exactly once, nothing else may
    appear, and each node must come before all of its parents; with ``leaves_anywhere``,
    a leaf (no parents) may come anywhere: in an engine of micrograd's shape a leaf's local
    backward does nothing, so visiting it before a consumer has added into it loses nothing.
    """
    order = list(order)
    position = dict(zip(order, range(len(order))))
    # each node once and nothing else: no label twice, as many as the graph has, all of the graph's (below)
    if len(position) != len(order) or len(position) != len(graph):
        return False
    get = position.get
    for node, parents in graph.items():
        at = get(node)
        if at is None:  # a node of the graph not in the order
            return False
        for parent in parents:
            after = get(parent)
            if after is None or not (at < after or (leaves_anywhere and not graph.get(parent))):
                return False
    return True

"""A layered layout of a recorded graph, in Python: the page's own (``assets/layout.js``) for the
exports that run no JavaScript (``graph_svg.py``).

Inputs at the bottom, the output on top. Nodes come in creation order, a topological order (a
node is created after its parents), so the layers are longest paths from the inputs in one pass;
an edge spanning several layers gets a chain of dummy points, one per layer it crosses (Sugiyama's
method, as dagre and the page do), so that it is routed beside the nodes, not through them; the
order within a layer comes from a few barycenter sweeps, and the x coordinates pull each node
towards its neighbours without overlap. The edges into a node enter its bottom side by side, in the
order given (its argument positions), and both pulls aim at those points, so that a node's first
argument tends to sit left of its second. Same graph, same coordinates: no randomness, ties broken
by creation order.

    >>> placed = layout([(40, 20), (40, 20), (40, 20)], [(0, 1), (1, 2), (0, 2)])
    >>> [placed.y[i] for i in range(3)]  # the output (2) on top
    [110.0, 60.0, 10.0]
    >>> placed.routes[2]  # the edge 0 -> 2 goes up the middle layer beside node 1, at its dummy
    [(65.0, 70.0), (65.0, 50.0)]
"""

from dataclasses import dataclass

SWEEPS = 4  # barycenter sweeps, alternately upward and downward
PLACEMENTS = 6  # passes pulling each layer's x towards its neighbours
GAP = 22  # horizontal space between nodes
DUMMY_WIDTH = 6  # an edge passing through a layer
RANK_GAP = 30  # vertical space between layers


@dataclass
class Placed:
    """Node centres ``x``, ``y``; the drawing's ``width`` and ``height``; per edge, the ``(x, y)``
    points it passes between its two ends (``routes``, from the parent's end: the bottom and the top
    of each layer it crosses, at its dummy's x)."""

    x: list
    y: list
    width: float
    height: float
    routes: list


class _Graph:
    def __init__(self, sizes):
        self.width = [w for w, _ in sizes]
        self.preds = [[] for _ in sizes]
        self.succs = [[] for _ in sizes]
        self.rank = []
        self.slot = {}  # (parent, child) -> where the edge enters the child: -0.5 (left) .. 0.5 (right)
        self.pulls = {}  # see _pulls

    def add(self, width, rank):
        self.width.append(width)
        self.preds.append([])
        self.succs.append([])
        self.rank.append(rank)
        return len(self.width) - 1

    def link(self, parent, child):
        self.preds[child].append(parent)
        self.succs[parent].append(child)


def layout(sizes, edges):
    """``sizes``: ``[(width, height)]`` per node in creation order; ``edges``: ``[(parent, child)]``
    as node indices, the parent created first. Returns a ``Placed``."""
    g = _Graph(sizes)
    entering, seen, slots = [0] * len(sizes), [0] * len(sizes), {}
    for _, child in edges:
        entering[child] += 1
    for parent, child in edges:
        if not parent < child:
            raise ValueError(f"edge {parent} -> {child}: a parent is created before its child")
        g.link(parent, child)
        seen[child] += 1
        slots.setdefault((parent, child), []).append(seen[child] / entering[child] - 0.5 / entering[child] - 0.5)
    g.slot = {pair: _mean(found, 0.0) for pair, found in slots.items()}  # (x * x: both slots, one parent)
    g.rank = _ranks(g)
    chains = _dummies(g, edges, len(sizes))
    g.pulls = _pulls(g)
    layers = _ordered_layers(g)
    x = _placed(g, layers)
    return _finish(sizes, g, layers, x, edges, chains)


def _ranks(g):
    """Longest path from the inputs (creation order is a topological order)."""
    rank = [0] * len(g.width)
    for node, parents in enumerate(g.preds):
        for p in parents:
            rank[node] = max(rank[node], rank[p] + 1)
    return rank


def _dummies(g, edges, count):
    """Each edge spanning k > 1 layers becomes a chain of k - 1 dummies; past a budget (one input
    feeding every step of a long loop would need quadratically many) the longest stay direct."""
    span = [g.rank[child] - g.rank[parent] for parent, child in edges]
    budget = max(2000, 3 * count)
    chains = {}
    for i in sorted((i for i in range(len(edges)) if span[i] > 1), key=lambda i: (span[i], i)):
        if span[i] - 1 > budget:
            break
        budget -= span[i] - 1
        parent, child = edges[i]
        g.succs[parent].remove(child)
        g.preds[child].remove(parent)
        chain, previous = [], parent
        for rank in range(g.rank[parent] + 1, g.rank[child]):
            dummy = g.add(DUMMY_WIDTH, rank)
            g.link(previous, dummy)
            chain.append(dummy)
            previous = dummy
        g.link(previous, child)
        g.slot[(previous, child)] = g.slot[(parent, child)]
        chains[i] = chain
    return chains


def _ordered_layers(g):
    layers = [[] for _ in range(max(g.rank, default=-1) + 1)]
    for node, rank in enumerate(g.rank):
        layers[rank].append(node)
    position = [0.0] * len(g.width)

    share = [0.0] * len(g.width)  # of a node's position, the width of its place in its layer

    def number(layer):
        for i, node in enumerate(layer):
            position[node], share[node] = (i + 0.5) / len(layer), 1 / len(layer)

    for layer in layers:
        number(layer)
    for sweep in range(SWEEPS):
        upward = sweep % 2 == 0
        pulls = g.pulls[upward]
        for r in (range(1, len(layers)) if upward else range(len(layers) - 2, -1, -1)):
            # a node without neighbours on that side keeps its place
            layers[r].sort(key=lambda n: (_mean([position[m] + slot * share[m] for m, slot in pulls[n]],
                                                position[n]), n))
            number(layers[r])
    return layers


def _placed(g, layers):
    x = [0.0] * len(g.width)
    for layer in layers:
        _pack(g, layer, [0.0] * len(layer), x)
    for sweep in range(PLACEMENTS):
        upward = sweep % 2 == 0
        pulls, width = g.pulls[upward], g.width
        for layer in (layers if upward else reversed(layers)):
            _pack(g, layer, [_mean([x[m] + slot * width[n if upward else m] for m, slot in pulls[n]], x[n])
                             for n in layer], x)
    return x


def _pack(g, layer, desired, x):
    """The layer at its desired x's, left to right without overlap, then shifted so that its mean
    is the desired mean (packing only ever pushes right)."""
    right, shift = float("-inf"), 0.0
    for node, want in zip(layer, desired):
        half = g.width[node] / 2
        x[node] = max(want, right + GAP + half)
        right = x[node] + half
        shift += want - x[node]
    for node in layer:
        x[node] += shift / len(layer)


def _finish(sizes, g, layers, x, edges, chains):
    """The output's layer on top (y = 0 at the top); x shifted to start at 0."""
    height = [h for _, h in sizes] + [0] * (len(g.width) - len(sizes))  # (dummies have none)
    y, half, top = [0.0] * len(g.width), [0.0] * len(g.width), 0.0
    for layer in reversed(layers):
        row = max((height[n] for n in layer), default=0)
        for node in layer:
            y[node], half[node] = top + row / 2, row / 2
        top += row + RANK_GAP
    left = min((x[n] - g.width[n] / 2 for n in range(len(x))), default=0.0)
    right = max((x[n] + g.width[n] / 2 for n in range(len(x))), default=0.0)
    x = [value - left for value in x]
    # an edge crosses a layer straight up its dummy's slot, bottom to top of the row: never through a node
    routes = [[point for d in chains.get(i, ()) for point in ((x[d], y[d] + half[d]), (x[d], y[d] - half[d]))]
              for i in range(len(edges))]
    return Placed(x[:len(sizes)], y[:len(sizes)], right - left, max(0.0, top - RANK_GAP), routes)


def _pulls(g):
    """``{upward: [[(neighbour, slot), ...] per node]}``: what pulls each node in a sweep upward (its
    parents) and downward (its children), with where it aims, as a share of the child's width: a
    parent at its slot in the child's bottom, a child at the parent's slot moved back (into a dummy: 0)."""
    return {True: [[(m, -g.slot.get((m, n), 0.0)) for m in g.preds[n]] for n in range(len(g.width))],
            False: [[(m, g.slot.get((n, m), 0.0)) for m in g.succs[n]] for n in range(len(g.width))]}


def _mean(values, default):
    return sum(values) / len(values) if values else default

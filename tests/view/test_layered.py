"""The exports' layered layout: parents below their children, no overlap, no edge through a node."""

import pytest

from adtrace.view.layered import layout


def boxes(placed, sizes):
    return [(x - w / 2, y - h / 2, x + w / 2, y + h / 2) for x, y, (w, h) in zip(placed.x, placed.y, sizes)]


def inside(point, box, margin=0.5):
    x, y = point
    left, top, right, bottom = box
    return left + margin < x < right - margin and top + margin < y < bottom - margin


def edge_points(placed, sizes, edges, steps=40):
    """Points along each drawn edge (top of the parent's box, its route, bottom of the child's),
    with the edge's two ends."""
    for (parent, child), route in zip(edges, placed.routes):
        ends = [(placed.x[parent], placed.y[parent] - sizes[parent][1] / 2), *route,
                (placed.x[child], placed.y[child] + sizes[child][1] / 2)]
        for (ax, ay), (bx, by) in zip(ends, ends[1:]):
            for k in range(steps + 1):
                yield parent, child, (ax + (bx - ax) * k / steps, ay + (by - ay) * k / steps)


def loop_graph(iterations):
    """x -> a chain of `iterations` steps, each also reading x (an input feeding every step), plus
    a side branch: edges spanning many layers."""
    edges, previous = [], 0
    for i in range(1, iterations + 1):
        edges += [(previous, i), (0, i)] if previous != 0 else [(0, i)]
        previous = i
    edges.append((1, iterations + 1))  # a side branch off the first step
    sizes = [(40 + 7 * (i % 5), 30 + 15 * (i % 3)) for i in range(iterations + 2)]
    return sizes, edges


def test_parents_are_below_their_children_and_nodes_of_a_layer_do_not_overlap():
    sizes, edges = loop_graph(12)
    placed = layout(sizes, edges)
    for parent, child in edges:
        assert placed.y[parent] > placed.y[child]  # the output on top
    drawn = boxes(placed, sizes)
    for i, a in enumerate(drawn):
        for b in drawn[i + 1:]:
            assert a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1], (a, b)
        assert a[0] >= 0 and a[1] >= 0 and a[2] <= placed.width + 1e-9 and a[3] <= placed.height + 1e-9


def test_no_edge_is_drawn_through_a_node():
    """An edge spanning several layers goes round the nodes between (its route's dummy points)."""
    sizes, edges = loop_graph(12)
    placed = layout(sizes, edges)
    drawn = boxes(placed, sizes)
    through = [(parent, child, n) for parent, child, point in edge_points(placed, sizes, edges)
               for n, box in enumerate(drawn) if n not in (parent, child) and inside(point, box)]
    assert through == []
    assert max(len(route) for route in placed.routes) == 2 * 11  # x feeds the last step: 11 layers between


def test_the_same_graph_is_laid_out_the_same_way():
    sizes, edges = loop_graph(30)
    assert layout(sizes, edges) == layout(list(sizes), list(edges))


def test_an_edge_from_a_later_node_is_refused():
    """Creation order is the layout's topological order: a parent comes first."""
    with pytest.raises(ValueError, match="created before"):
        layout([(10, 10), (10, 10)], [(1, 0)])


def test_an_empty_graph_has_no_size():
    placed = layout([], [])
    assert (placed.width, placed.height, placed.x) == (0, 0, [])


def test_a_nodes_first_argument_sits_left_of_its_second():
    """Edges enter a node side by side in the order given (its argument positions): b - a, with a made
    first, puts b on the left, where its edge enters, so the two edges do not cross."""
    placed = layout([(40, 20), (40, 20), (60, 20)], [(1, 2), (0, 2)])  # node 2 = node 1 (arg 0) - node 0 (arg 1)
    assert placed.x[1] < placed.x[2] < placed.x[0]
    in_order = layout([(40, 20), (40, 20), (60, 20)], [(0, 2), (1, 2)])  # a - b: a on the left
    assert in_order.x[0] < in_order.x[2] < in_order.x[1]

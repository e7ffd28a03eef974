"""The recorded graph seen from the input: consumers of each node, and counts of paths.

Paths are counted node to node, one per parent position (``x * x`` is two edges into the root), as
``backward_pass`` sends one contribution along each. The input's maximal paths end at the output or
at a sink (a value nothing consumed): ``Graph.fraction(node, position)`` is the share of them that go
along an edge, ``fraction_ending_at(sink)`` the share that end there, over one denominator.
"""

from functools import cached_property

import numpy as np

from .elements import flat
from .reasons import ELEMENTWISE


class Graph:
    def __init__(self, parents, root, end, input=None):
        self.parents = parents  # label -> parent labels by position (Recording.graph())
        self.root, self.end = root, end
        self.input = input  # the input's value (the root's)
        self.consumers = {label: [] for label in parents}  # label -> [(consumer, position)]
        for label, ps in parents.items():
            for position, parent in enumerate(ps):
                self.consumers.setdefault(parent, []).append((label, position))

    @cached_property
    def order(self):
        """Labels in creation order (``v<i>_...``: a parent before its consumers)."""
        return sorted(self.parents, key=_number)

    @cached_property
    def from_root(self):
        """label -> number of paths from the input to it."""
        counts = {label: 0 for label in self.order}
        counts[self.root] = 1
        for label in self.order:
            if label != self.root:
                counts[label] = sum(counts.get(p, 0) for p in self.parents[label])
        return counts

    @cached_property
    def to_end(self):
        """label -> number of paths from it to the output."""
        counts = {label: 0 for label in self.order}
        if self.end is not None:
            counts[self.end] = 1
        for label in reversed(self.order):
            if label != self.end:
                counts[label] = sum(counts.get(c, 0) for c, _ in self.consumers.get(label, ()))
        return counts

    def paths(self):
        """Paths from the input to the output."""
        return self.from_root.get(self.end, 0) if self.end is not None else 0

    @cached_property
    def to_exits(self):
        """label -> number of paths from it to the output or to a sink."""
        exits = set(self.sinks()) | ({self.end} if self.end is not None else set())
        counts = {}
        for label in reversed(self.order):
            counts[label] = 1 if label in exits else sum(counts.get(c, 0) for c, _ in self.consumers.get(label, ()))
        return counts

    def exits(self):
        """The input's maximal paths: to the output or to a sink."""
        return self.to_exits.get(self.root, 0)

    def edges_through(self, node, position):
        """The input's maximal paths along the edge ``parents[node][position] -> node``."""
        if node not in self.parents:
            return 0
        parent = self.parents[node][position]
        return self.from_root.get(parent, 0) * self.to_exits.get(node, 0)

    def descendants(self, label):
        """The nodes that consume ``label``'s value, directly or not."""
        seen, stack = set(), [label]
        while stack:
            for consumer, _ in self.consumers.get(stack.pop(), ()):
                if consumer not in seen:
                    seen.add(consumer)
                    stack.append(consumer)
        return seen

    def value_of(self, recording, label):
        """A node's recorded value (the input's for the root)."""
        return self.input if label == self.root else getattr(recording.nodes.get(label), "value", None)

    def inputs_at(self, recording, node, at):
        """argnum -> ``node``'s input at its flat element ``at`` (element-wise, same size) or the whole
        input if a number; from the node's call where kept, else from its parents' values."""
        call = recording.calls.get(node.label)
        args = dict(enumerate(call.args)) if call is not None else {
            argnum: self.value_of(recording, parent) for argnum, parent in zip(node.argnums, node.parents)}
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

    def sinks(self):
        """Nodes the input reaches that nothing consumes, the output aside: their values left the trace."""
        return [label for label in self.order if self.from_root[label] and not self.consumers.get(label)
                and label != self.end]

    def fraction(self, node, position):
        """The share of the input's maximal paths that go along an edge."""
        total = self.exits()
        return self.edges_through(node, position) / total if total else 0.0

    def fraction_ending_at(self, node):
        """The share of the input's maximal paths that end at ``node`` (a sink)."""
        total = self.exits()
        return self.from_root.get(node, 0) / total if total else 1.0


def _number(label):
    head = label.split("_", 1)[0]
    return (head[0] != "v", int(head[1:]) if head[1:].isdigit() else 0, label)

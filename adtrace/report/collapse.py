"""A large graph collapsed, not dropped: its nodes grouped by the user's source line that made them.

Each group keeps its node count, its primitives and the edges between two of its nodes; an edge
between two groups carries the number of node edges it stands for. A recording without source
lines groups by primitive. Past ``max_groups`` the smallest groups share one.
"""

from collections import Counter
from dataclasses import dataclass, field

from .profile import line_of, primitive_of


@dataclass
class Group:
    name: str  # the user's line ("path:line"), "(input)", or "primitive NAME" without lines
    labels: list = field(default_factory=list)
    primitives: Counter = field(default_factory=Counter)
    inner: int = 0  # edges between two nodes of this group
    parents: Counter = field(default_factory=Counter)  # group name -> edges from it into this group


def group_nodes(nodes, max_groups):
    """``(groups, group name of each node label)``, groups in the order of their first node."""
    by_line = any(getattr(n, "site", None) for n in nodes)
    key = line_of if by_line else (lambda n: f"primitive {primitive_of(n)}")
    names = {n.label: key(n) for n in nodes}
    sizes = Counter(names.values())
    if len(sizes) > max_groups:  # keep the largest, the rest share one group
        kept = {name for name, _ in sizes.most_common(max_groups - 1)}
        other = f"{len(sizes) - len(kept)} other {'lines' if by_line else 'primitives'}"
        names = {label: name if name in kept else other for label, name in names.items()}
    groups = {}
    for n in nodes:
        group = groups.get(names[n.label])
        if group is None:
            group = groups[names[n.label]] = Group(names[n.label])
        group.labels.append(n.label)
        group.primitives[primitive_of(n)] += 1
        for parent in getattr(n, "parents", ()):
            if parent not in names:
                continue
            if names[parent] == group.name:
                group.inner += 1
            else:
                group.parents[names[parent]] += 1
    return list(groups.values()), names


def primitives_text(group, n=3):
    ranked = group.primitives.most_common()
    text = ", ".join(f"{name} x{count}" for name, count in ranked[:n])
    return text + (f", ... {len(ranked) - n} more" if len(ranked) > n else "")



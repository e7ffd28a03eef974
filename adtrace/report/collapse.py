"""A large graph collapsed, not dropped: its nodes grouped by the user's source line that made them.

Each group keeps its node count, its primitives and the edges between two of its nodes; an edge
between two groups carries the number of node edges it stands for. A recording without source
lines groups by primitive. Past ``max_groups`` the smallest groups share one.
"""

from collections import Counter
from dataclasses import dataclass, field

from .profile import lines_of, primitives_of


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
    primitives = primitives_of(nodes)
    keys = lines_of(nodes) if by_line else [f"primitive {primitive}" for primitive in primitives]
    labels = [n.label for n in nodes]
    names = dict(zip(labels, keys))
    sizes = Counter(keys)
    if len(sizes) > max_groups:  # keep the largest, the rest share one group
        kept = {name for name, _ in sizes.most_common(max_groups - 1)}
        other = f"{len(sizes) - len(kept)} other {'lines' if by_line else 'primitives'}"
        names = {label: name if name in kept else other for label, name in names.items()}
        keys = [names[label] for label in labels]
    groups = {name: Group(name) for name in dict.fromkeys(keys)}  # (in the order of their first node)
    for label, name in zip(labels, keys):
        groups[name].labels.append(label)
    # each node's primitive, and each edge between two nodes of the list as (group, parent's group), counted in C
    for (name, primitive), count in Counter(zip(keys, primitives)).items():
        groups[name].primitives[primitive] = count
    edges = Counter([(name, names[parent]) for n, name in zip(nodes, keys)  # (a list: faster than a generator)
                     for parent in getattr(n, "parents", ()) if parent in names])
    for (name, parent), count in edges.items():
        group = groups[name]
        if parent == name:
            group.inner += count
        else:
            group.parents[parent] = count
    return list(groups.values()), names


def primitives_text(group, n=3):
    ranked = group.primitives.most_common()
    text = ", ".join(f"{name} x{count}" for name, count in ranked[:n])
    return text + (f", ... {len(ranked) - n} more" if len(ranked) > n else "")



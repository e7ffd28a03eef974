"""Where an input element's gradient came from: the contributions ``backward_pass`` added into the
input node (its ``AddOutgrads`` events: previous, contribution, result), and their sum per source line.

What is exact, and how:

- ``fold``: the element's contributions added in the recorded order, in their own dtype, give the
  recorded gradient bit for bit (``add_outgrads`` made each result as ``previous + contribution``).
  ``Gradient.exact`` says whether they did; a contribution missed or counted twice breaks it.
- ``by_line``: each line's share is the exact (rational) sum of its contributions, rounded once to
  a float. The shares' exact sum and the gradient differ only by the rounding of the recorded
  additions, ``rounding`` (exact as a rational, shown rounded): ``sum(shares) + rounding ==
  gradient`` holds exactly over the rationals, and ``rounding`` is within the recursive-summation
  bound ``(n - 1) * eps * sum(|c|)`` (``rounding_bound``).
"""

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional

import numpy as np

from .elements import component, covers
from .query_index import query_index


@dataclass(frozen=True)
class Contribution:
    """One ``add_outgrads`` into the input node: ``node`` made it through its argument ``argnum``."""

    node: str
    primitive: str
    argnum: Optional[int]
    line: Optional[str]
    value: Any  # its number at the element
    result: Any  # the input's running sum at the element after it (as recorded)
    covers: bool = True  # False: a sparse contribution into another item of the input (0 here by structure)


@dataclass(frozen=True)
class Share:
    """One line's part of the gradient: the exact sum of its contributions, rounded once."""

    line: str
    share: float
    contributions: int
    exact: Any = None  # the share as a Fraction (None when a contribution is not finite)


def recorded_contributions(recording, query, root, element, like):
    """The contributions into ``root`` at ``element`` in this query, in the order they were added."""
    found = []
    for event in query_index(recording, query).accumulations.get(root, ()):
        node = recording.nodes.get(event.node)
        value = component(event.contribution, element, like)
        if value is None:
            raise ValueError(f"the contribution of {event.node} was kept as a summary: explain needs the "
                             "values whole (record(capture=\"full\"))")
        found.append(Contribution(
            event.node, getattr(node, "primitive", ""), event.argnum, line_of(node, event.node), value,
            component(event.result[0], element, like), covers(event.contribution, element, like)))
    return found


def line_of(node, label):
    """The user's line that made a node (``path:line``), else its label (recorded without sites)."""
    return getattr(node, "site", None) or label


def fold(contributions):
    """The contributions added in the recorded order, as ``add_outgrads`` added them."""
    total = None
    for c in contributions:
        total = c.value if total is None else total + c.value
    return total


def same(a, b):
    """Equal as recorded numbers (NaN equals NaN, -0.0 equals 0.0)."""
    if a is None or b is None:
        return a is b
    return bool(np.asarray(a == b).all() or (np.isnan(a) and np.isnan(b)))


def exact(value):
    return Fraction(float(value)) if np.isfinite(value) and np.isrealobj(value) else None


def by_line(contributions):
    """``Share`` per line, largest magnitude first (the contributions into other items of the input
    left out: their 0 here is the input's structure, not the line's)."""
    lines = {}
    for c in contributions:
        if c.covers:
            lines.setdefault(c.line, []).append(c)
    shares = []
    for line, items in lines.items():
        parts = [exact(c.value) for c in items]
        if all(p is not None for p in parts):
            total = sum(parts, Fraction(0))
            shares.append(Share(line, float(total), len(items), total))
        else:
            shares.append(Share(line, float(fold(items)), len(items)))
    return sorted(shares, key=lambda s: -abs(s.share) if np.isfinite(s.share) else -np.inf)


def rounding(gradient, shares):
    """``gradient - sum(shares)`` exactly (a Fraction), or None when a value is not finite."""
    g = exact(gradient) if gradient is not None else None
    if g is None or any(s.exact is None for s in shares):
        return None
    return g - sum((s.exact for s in shares), Fraction(0))


def rounding_bound(contributions):
    """The recursive-summation error bound for these additions: ``(n - 1) * eps * sum |c|``."""
    values = [abs(float(c.value)) for c in contributions]
    eps = np.finfo(np.result_type(*[c.value for c in contributions]) if contributions else float).eps
    return Fraction(max(len(values) - 1, 0)) * Fraction(float(eps)) * sum((Fraction(v) for v in values), Fraction(0))

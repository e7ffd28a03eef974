"""Long values made short: for a table cell, within a width (``fit.py`` picks the width).

A value whose text (``format.fmt``) fits is written whole. A longer one keeps its shape: the
items of a container (the leaves of a summarized one) while they fit, each written short
(``array (4, 3)``), then ``...`` and the size (``(a, b, c, ... 12 items)``); text still too long
is cut with ``... (N chars)``. The JSON export (``export.py``) keeps every value whole.
"""

import itertools

from ..recording.values import Boxed, ContainerSummary, Sparse
from .format import fmt

VALUE_WIDTH = 120  # characters of one value in a table cell, unless its table needs fewer
OUTGRADS_WIDTH = 160  # characters of an outgrads dict
COMPACT_WIDTH = 24  # characters of one item of an abbreviated container


def brief(value, width=VALUE_WIDTH):
    """``value`` as text of at most ``width`` characters."""
    return clip(_shortened(value, width), width)


def counted(n, noun, plural="s"):
    """``1 node``, ``3 nodes``."""
    return f"{n} {noun}{'' if n == 1 else plural}"


def clip(text, width):
    """``text`` cut to ``width`` characters, saying how long it was."""
    text = str(text)
    if len(text) <= width:
        return text
    tail = f"... ({len(text)} chars)"
    return text[:max(width - len(tail), 1)] + tail


def each(values, width):
    """Several values side by side (``a, b``), each within its share of ``width``."""
    share = max(COMPACT_WIDTH, width // max(len(values), 1) - 2)
    return clip(", ".join(brief(v, share) for v in values), width)


def series(values, width=VALUE_WIDTH, keep=2):
    """Values one after the other (``a -> b -> c``): all of them when they fit in ``width``, else
    the first ``keep``, how many were left out, and the last."""
    values = list(values)
    whole = " -> ".join(fmt(v) for v in values)
    if len(whole) <= width:
        return whole
    skipped = len(values) - keep - 1 if len(values) > keep + 2 else 0
    shown = values[:keep] + values[-1:] if skipped else values
    share = max(COMPACT_WIDTH, width // (len(shown) + bool(skipped)) - 4)
    texts = [brief(v, share) for v in shown]
    if skipped:
        texts.insert(keep, f"... {skipped} more")
    return clip(" -> ".join(texts), width)


def brief_outgrads(state, width=OUTGRADS_WIDTH):
    """An ``outgrads`` dict as the seed writes it (``{M:(1,False)}``): whole when it fits in
    ``width``, else its first entries, each written short."""
    whole, length = [], 2
    for label, pair in state.items():
        whole.append(f"{label}:{fmt(pair)}")
        length += len(whole[-1]) + 2
        if length > width + 2:
            break
    else:
        return "{" + ", ".join(whole) + "}"
    each = max(COMPACT_WIDTH, (width - 2) // min(len(state), 3))
    entries = (f"{label}:{_shortened(pair, each - len(label) - 1)}"
               for label, pair in itertools.islice(state.items(), width // 8))  # (more could not fit)
    return clip("{" + _listed(entries, len(state), "entries", width - 2) + "}", width)


def _shortened(value, width):
    """``value`` whole if it fits, else with the items of its containers listed while they fit,
    each in its compact form, else (an array) its compact form."""
    text = fmt(value)
    if len(text) <= width:
        return text
    if isinstance(value, ContainerSummary):
        head = f"{value.type} of {value.length}: "
        leaves = [f"{path} {_compact(leaf)}" for path, leaf in value.leaves]
        return head + _listed(leaves, len(value.leaves) + value.more, "leaves", width - len(head))
    if isinstance(value, Boxed):
        head = f"Box[level {value.level}]("
        return f"{head}{_shortened(value.value, width - len(head) - 1)})"
    if isinstance(value, Sparse) and value.dense is not None:
        return f"Sparse({_shortened(value.dense, width - 8)})"
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], bool):  # autograd's (value, mutable) pair
        return f"({_shortened(value[0], width - len(str(value[1])) - 3)},{value[1]})"
    if isinstance(value, (tuple, list, dict)):
        items = ([f"{k}: {_compact(v)}" for k, v in value.items()] if isinstance(value, dict)
                 else [_compact(v) for v in value])
        inner = _listed(items, len(value), "items", width - 2)
        return {tuple: f"({inner})", list: f"[{inner}]"}.get(type(value), "{" + inner + "}")
    return _compact(value)


def _listed(items, count, noun, width):
    """The texts ``items`` joined while they fit in ``width``, then ``... N noun``."""
    items = list(items)
    if len(items) == count and sum(len(text) + 2 for text in items) - 2 <= width:
        return ", ".join(items)
    shown, length = [], 0
    for i, text in enumerate(items):
        length += len(text) + 2 * bool(shown)
        if shown and length + (0 if i == count - 1 else len(f", ... {count} {noun}")) > width:
            break
        shown.append(text)
    if len(shown) < count:
        shown.append(f"... {count} {noun}")
    return ", ".join(shown)


def _compact(value):
    """An item of a long container: itself when short, else its kind and size (``array (4, 3)``)."""
    text = fmt(value)
    if len(text) <= COMPACT_WIDTH:
        return text
    if isinstance(value, Boxed):
        return f"Box[level {value.level}]({_compact(value.value)})"
    shape = getattr(value, "shape", None)
    if shape is not None:  # an array, or its ArraySummary
        return f"array {tuple(shape)}"
    if isinstance(value, ContainerSummary):
        return f"{value.type} of {value.length}"
    if isinstance(value, (tuple, list, dict)):
        return f"{type(value).__name__} of {len(value)}"
    return clip(text, COMPACT_WIDTH)

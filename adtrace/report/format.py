"""Values and cells as text: deterministic, no memory addresses, safe inside Markdown tables.

Scalars get 6 significant digits (``1.86093``, and ``3`` for 3.0); arrays of at most
``INLINE`` elements are written inline in the same format, larger ones (and every
``ArraySummary``) as shape, dtype and statistics.
"""

import numpy as np

from ..recording.values import ArraySummary, Boxed, ContainerSummary, Sparse, summarize

INLINE = 8


def fmt(value):
    """A recorded value (a kept value, an autograd pair, a container) as short text."""
    if value is None:
        return "None"
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, float, complex, np.number)):
        return _scalar(value)
    if isinstance(value, np.ndarray):
        return _array(value)
    if isinstance(value, ArraySummary):
        return f"array {value.shape} {value.dtype} min {_scalar(value.min)} max {_scalar(value.max)} mean {_scalar(value.mean)}"
    if isinstance(value, Boxed):
        return f"Box[level {value.level}]({fmt(value.value)})"
    if isinstance(value, Sparse):
        if value.dense is not None:
            return f"Sparse({fmt(value.dense)})"
        if value.index is not None:
            return f"Sparse([{value.index}] += {fmt(value.value)})"
        return f"Sparse into {value.vspace}"
    if isinstance(value, ContainerSummary):
        leaves = "; ".join(f"{path} {fmt(leaf)}" for path, leaf in value.leaves)
        more = f"; {value.more} more leaves" if value.more else ""
        return f"{value.type} of {value.length} (above the inline size): {leaves}{more}"
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], bool):
        return f"({fmt(value[0])},{value[1]})"  # autograd's (value, mutable) pair, as the seed writes it
    if isinstance(value, (tuple, list)):
        inner = ", ".join(fmt(v) for v in value)
        return f"({inner})" if isinstance(value, tuple) else f"[{inner}]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {fmt(v)}" for k, v in value.items()) + "}"
    return type(value).__name__  # never repr(): it may hold a memory address


def fmt_outgrads(state):
    """An ``outgrads`` dict of labels, as the seed's ``{M:(1,False)}``."""
    return "{" + ", ".join(f"{label}:{fmt(pair)}" for label, pair in state.items()) + "}"


def _scalar(x):
    if isinstance(x, (complex, np.complexfloating)):
        return f"{_real(x.real)}{'+' if x.imag >= 0 else '-'}{_real(abs(x.imag))}j"
    return _real(x)


def _real(x):
    if isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)):
        return str(int(x))
    text = f"{float(x):.6g}"
    return "0" if text == "-0" else text


def _array(a):
    if a.ndim == 0:
        return _scalar(a[()])
    if a.size > INLINE:
        return fmt(summarize(a))
    if a.ndim == 1:
        return "[" + " ".join(_scalar(v) for v in a) + "]"
    return "[" + " ".join(_array(row) for row in a) + "]"


def cell(text):
    """Text safe inside a Markdown table cell: pipes escaped, line breaks as ``<br>``."""
    text = str(text).replace("\\", "\\\\").replace("|", "\\|")
    return text.replace("\r\n", "<br>").replace("\n", "<br>").replace("\r", "<br>")


def code(text):
    """Inline code that survives any content (backticks inside use a longer fence)."""
    text = str(text).replace("\n", " ")
    fence = "``" if "`" in text else "`"
    return f"{fence} {text} {fence}" if fence == "``" else f"`{text}`"

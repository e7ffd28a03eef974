"""Values and cells as text: deterministic, no memory addresses, escaped for where they go.

Scalars get 6 significant digits (``1.86093``, and ``3`` for 3.0); arrays of at most
``INLINE`` elements are written inline in the same format, larger ones (and every
``ArraySummary``) as shape, dtype and statistics.

Text from the user's program (names, labels, values, messages) can hold anything. Each place it
goes has its escape: ``text`` for a heading or paragraph, ``cell`` for a table cell, ``code`` for
inline code (``mermaid.escape`` for a flowchart label). All of them show control characters (ANSI
escapes, NUL), bidirectional overrides and line separators visibly (``visible``), and none lets raw
HTML, a link or a line break through.
"""

import re

import numpy as np

from ..recording.callsite import INPUT
from ..recording.values import ArraySummary, Boxed, ContainerSummary, Sparse, summarize

INLINE = 8


def fmt(value):
    """A recorded value (a kept value, an autograd pair, a container) as short text."""
    kind = type(value)
    if kind is float or kind is np.float64:  # (the usual kinds first: a page of 17,000 steps formats 65,000)
        text = f"{float(value):.6g}"  # (_real's, inline: a call and its checks were most of the time)
        return "0" if text == "-0" else text
    if kind is tuple and len(value) == 2 and type(value[1]) is bool:
        return f"({fmt(value[0])},{value[1]})"
    if value is None:
        return "None"
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, float, complex, np.number)):
        return _scalar(value)
    if isinstance(value, np.ndarray):
        return _array(value)
    if isinstance(value, ArraySummary):
        return (f"array {value.shape} {value.dtype} min {_scalar(value.min)} max {_scalar(value.max)} "
                f"mean {_scalar(value.mean)}")
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


def whole(value):
    """A value with every digit a float has (``repr``: it reads back the same), arrays of at most
    ``INLINE`` elements inline; anything else as the reports write it (``fmt``: a summary)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, complex, np.number, np.ndarray)):
        return fmt(value)
    if isinstance(value, np.ndarray):
        if value.size > INLINE or value.dtype.kind not in "biufc":
            return fmt(value)
        if value.ndim == 0:
            return whole(value[()])
        return "[" + " ".join(whole(v) for v in value) + "]"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (complex, np.complexfloating)):
        return repr(complex(value))
    return repr(float(value))


def fmt_outgrads(state):
    """An ``outgrads`` dict of labels, as the seed's ``{M:(1,False)}``."""
    return "{" + ", ".join(f"{label}:{fmt(pair)}" for label, pair in state.items()) + "}"


def _scalar(x):
    if isinstance(x, (complex, np.complexfloating)):
        return f"{_real(x.real)}{'+' if x.imag >= 0 else '-'}{_real(abs(x.imag))}j"
    return _real(x)


def _real(x):
    if not isinstance(x, float) and isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)):
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


# -------------------- escaping --------------------

_INVISIBLE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def visible(text, keep=""):
    """``text`` with control characters, bidirectional overrides and line separators written as
    escapes (``\\x1b``, ``\\u202e``, ``\\n``); the characters in ``keep`` stay as they are."""
    return _INVISIBLE.sub(lambda m: m.group() if m.group() in keep else _escape_char(m.group()), str(text))


def _escape_char(char):
    if char in _NAMED:
        return _NAMED[char]
    return f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"


def text(value):
    """Text safe inside a Markdown heading or paragraph, shown as written: one line, no raw HTML,
    entity, link, code span or emphasis."""
    escaped = _plain(value)
    for char in "*~":
        escaped = escaped.replace(char, "\\" + char)
    return re.sub(r"(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])", r"\\_", escaped)  # (``my_func`` stays as it is)


def _plain(value):
    """``value`` with no raw HTML, entity, link or code span (emphasis left: adtrace's cells use it)."""
    escaped = visible(value).replace("\\", "\\\\")
    for char in "`<&":
        escaped = escaped.replace(char, "\\" + char)
    return escaped.replace("](", "\\](")


def cell(value):
    """Text safe inside a Markdown table cell: pipes escaped, line breaks as ``<br>``; code spans
    (``code``'s, or the user's own backticks) stay code; the rest has no raw HTML, entity or link
    (emphasis stays: adtrace's own cells use it, as ``**DIFFERS**``)."""
    return "".join(_code_cell(piece) if is_code else _text_cell(piece) for is_code, piece in _code_spans(str(value)))


def _text_cell(piece):
    lines = re.split(r"\r\n|\n|\r", piece)
    return "<br>".join(_plain(line) for line in lines).replace("|", "\\|")


def _code_cell(piece):
    return visible(piece).replace("|", "\\|")  # (GFM reads \| as a pipe inside code spans too)


def _code_spans(value):
    """``(is_code, piece)`` in order, as CommonMark reads code spans: a run of n backticks opens
    one that the next run of exactly n backticks closes; a run never closed is plain text."""
    runs = list(re.finditer(r"`+", value))
    pieces, start, k = [], 0, 0
    while k < len(runs):
        opening = runs[k]
        closing = next((j for j in range(k + 1, len(runs)) if len(runs[j].group()) == len(opening.group())), None)
        if closing is None:
            k += 1
            continue
        pieces += [(False, value[start:opening.start()]), (True, value[opening.start():runs[closing].end()])]
        start, k = runs[closing].end(), closing + 1
    return pieces + [(False, value[start:])]


def made_at(site):
    """Where a value was made, for a sentence: ``made at path:line``, ``an input``."""
    if site == INPUT:
        return "an input"
    return f"made at {text(site or 'an unknown line')}"


def code(value):
    """Inline code that survives any content: a fence longer than any backtick run inside."""
    value = visible(value)
    longest = max((len(run) for run in re.findall(r"`+", value)), default=0)
    fence = "`" * (longest + 1)
    padded = longest or (value.startswith(" ") and value.endswith(" ") and value.strip())
    return f"{fence} {value} {fence}" if padded else f"{fence}{value}{fence}"


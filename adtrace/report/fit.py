"""Tables kept to a readable width: no line of a default report is wider than ``LINE_WIDTH``.

A cell is text, or a ``Short`` value written as short as its column needs. tabulate pads each
column to its widest cell, so one long cell widens every row: ``fit`` finds the widest cap the
columns can share within the width, writes the values of wider cells again within it
(``abbreviate.brief``: whole items dropped before any text is cut) and cuts what is still wider.
"""

from .abbreviate import VALUE_WIDTH, brief, clip
from .format import cell

LINE_WIDTH = 400  # characters of any line of a default report
_NARROWEST = 24  # a column is never cut below this


class Short:
    """A table cell holding a value, written by ``write(value, width)`` (default ``brief``) within
    ``width`` characters, or fewer when its table is too wide; ``prefix`` and ``suffix`` are text
    around it (``g = 1``, ``3 -> v0_root``)."""

    __slots__ = ("value", "write", "width", "prefix", "suffix")

    def __init__(self, value, write=brief, width=VALUE_WIDTH, prefix="", suffix=""):
        self.value, self.write, self.width, self.prefix, self.suffix = value, write, width, prefix, suffix

    def text(self, width=None):
        room = (self.width if width is None else min(width, self.width)) - len(self.prefix) - len(self.suffix)
        return f"{self.prefix}{self.write(self.value, max(room, 1))}{self.suffix}"


def fit(headers, rows, width=LINE_WIDTH):
    """``rows`` as text, so that the table tabulate writes (``tables.table``: ``| a | b |``, cells
    escaped, padded to the column) has no line wider than ``width``."""
    rows = [list(row) for row in rows]
    texts = [[c.text() if isinstance(c, Short) else str(c) for c in row] for row in rows]
    heads = [len(cell(h)) + 2 for h in headers]  # tabulate pads a header by 2 at least
    widths = [max([head] + [len(cell(row[i])) for row in texts]) for i, head in enumerate(heads)]
    room = width - 3 * len(headers) - 1  # "| " before each column, " |" after the last
    if sum(widths) <= room:
        return texts
    low, high = _NARROWEST, max(widths)
    while low < high:  # the widest cap with every column within it fitting the room
        cap = (low + high + 1) // 2
        if sum(min(w, max(cap, head)) for w, head in zip(widths, heads)) <= room:
            low = cap
        else:
            high = cap - 1
    caps = [max(low, head) for head in heads]
    return [[t if len(cell(t)) <= cap else _narrowed(c, cap) for c, t, cap in zip(row, text_row, caps)]
            for row, text_row in zip(rows, texts)]


def _narrowed(value, width):
    """A cell written again within ``width``, then cut so that its escaped form (``format.cell``)
    is at most ``width`` characters."""
    text = value.text(width) if isinstance(value, Short) else str(value)
    limit = width
    while True:
        clipped = clip(text, limit)
        if len(cell(clipped)) <= width or limit <= _NARROWEST // 2:
            return clipped
        limit -= len(cell(clipped)) - width

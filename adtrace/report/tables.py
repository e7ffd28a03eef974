"""Markdown tables through tabulate, with escaped cells and a row cap."""

from tabulate import tabulate

from .format import cell


def table(headers, rows, max_rows=None):
    """A GitHub-flavoured table; past ``max_rows`` rows a line says how many were left out."""
    rows = list(rows)
    shown = rows if max_rows is None else rows[:max_rows]
    text = tabulate([[cell(c) for c in row] for row in shown], headers=[cell(h) for h in headers],
                    tablefmt="github", disable_numparse=True)
    if len(shown) < len(rows):
        text += f"\n\n_{len(rows) - len(shown)} more rows (table capped at {max_rows} rows; the JSON export has all)._"
    return text

"""Markdown tables through tabulate, with escaped cells and a row cap."""

from .format import cell


def table(headers, rows, max_rows=None, total=None):
    """A GitHub-flavoured table; past ``max_rows`` rows a line says how many were left out
    (``total``: how many rows there are, when ``rows`` holds only the first ones)."""
    from tabulate import tabulate  # (here: it imports importlib.metadata, a tenth of `adtrace view`'s start-up)

    rows = list(rows)
    shown = rows if max_rows is None else rows[:max_rows]
    text = tabulate([[cell(c) for c in row] for row in shown], headers=[cell(h) for h in headers],
                    tablefmt="github", disable_numparse=True)
    total = len(rows) if total is None else total
    if len(shown) < total:
        text += f"\n\n_{total - len(shown)} more rows (table capped at {max_rows} rows; the JSON export has all)._"
    return text

"""Tables kept to a readable width: values written shorter, then text cut, never a wider line."""

import numpy as np

from adtrace.report.fit import LINE_WIDTH, Short, fit
from adtrace.report.tables import table


def widest(headers, rows):
    return max(len(line) for line in table(headers, fit(headers, rows)).splitlines())


def test_a_table_that_fits_is_left_as_it_is():
    rows = [("v0_root", Short(np.arange(3.0)), "x" * 100)]
    assert fit(["node", "value", "note"], rows) == [["v0_root", "[0 1 2]", "x" * 100]]


def test_the_widest_columns_are_narrowed_until_the_lines_fit():
    headers = ["node", "a", "b", "c", "d"]
    rows = [("v1", Short(list(range(200))), Short({str(i): np.ones(5) for i in range(50)}), "y" * 300, "short")]
    whole = [[v.text() if isinstance(v, Short) else v for v in rows[0]]]
    assert max(len(line) for line in table(headers, whole).splitlines()) > 400
    assert widest(headers, rows) <= LINE_WIDTH
    a, b, c, d = fit(headers, rows)[0][1:]
    assert a.endswith("... 200 items]") and b.endswith("... 50 items}")  # values keep their shape...
    assert c.endswith("... (300 chars)") and d == "short"  # ...text is cut, and a narrow column is untouched


def test_escaped_characters_count_against_the_width():
    headers = ["a", "b", "c", "d"]
    rows = [("|" * 150, "\\" * 150, "\n" * 60, "z" * 150)]
    assert widest(headers, rows) <= LINE_WIDTH


def test_a_short_cell_writes_its_prefix_and_suffix_within_its_width():
    cell = Short(list(range(100)), prefix="g = ", suffix=" -> v0_root", width=50)
    assert cell.text() == "g = [0, 1, 2, 3, 4, 5, ... 100 items] -> v0_root"
    assert cell.text(40).startswith("g = [0, 1") and len(cell.text(40)) <= 40


def test_a_line_is_cut_at_the_readmes_400_characters():
    """The README promises lines of at most 400 characters; a longer text fills them exactly."""
    assert widest(["note"], [("x" * 1000,)]) == 400

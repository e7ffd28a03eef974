"""The report, view and check commands' own helpers (their runs are in tests/tools/test_cli*.py)."""

from adtrace.tools.commands.traced import _one_line


def test_an_error_message_is_one_line_of_at_most_300_characters_then_cut():
    assert _one_line(ValueError("first\n  second \n\n")) == "first / second"
    exactly = "x" * 300
    assert _one_line(ValueError(exactly)) == exactly  # as long as allowed: whole
    assert _one_line(ValueError(exactly + "y")) == exactly + " ..."

"""The proof table's exit cell: a success plain (with its skipped checks), anything else in bold."""

from adtrace.compare.checks import Check, skipped
from adtrace.tools.autograd_examples.proof import _exit


def test_an_exit_is_bold_unless_it_is_a_success():
    assert _exit(0, [Check("a", True, "")]) == "exit 0"
    assert _exit(0, [Check("a", True, ""), skipped("b", "why")]) == "exit 0, 1 skipped"
    assert _exit(1, [Check("a", False, "")]) == "**exit 1**"
    assert _exit(3, []) == "**exit 3**"

"""The README's claims, read by the tests that hold them to the code (a number the README states
is the number a test counts)."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def readme():
    return README.read_text(encoding="utf-8")


def stated(pattern):
    """The number the README states where ``pattern`` (a regex with one group, matched against the
    README with its line breaks as spaces) is found once."""
    found = re.findall(pattern, " ".join(readme().split()))
    assert len(found) == 1, f"README: {pattern!r} found {len(found)} times"
    return int(found[0].replace(",", ""))

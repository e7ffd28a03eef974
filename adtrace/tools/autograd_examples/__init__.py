"""autograd's own examples (``examples/`` of its sdist), traced, reported and checked as a user would.

- ``load``: an example loaded from the sdist ``adtrace.tools.upstream.fetch_sdist`` caches, never
  copied here: its definitions, not its script;
- ``registry``, ``drivers``, ``more_drivers``: per example, the function differentiated and its
  arguments (``EXAMPLES``);
- ``proof``: each one through ``adtrace report`` and ``adtrace check``, timed; ``reports/examples.md``.
"""

from . import drivers, more_drivers  # noqa: F401 (they fill EXAMPLES)
from .load import module
from .registry import EXAMPLES, Example

__all__ = ["EXAMPLES", "Example", "module"]

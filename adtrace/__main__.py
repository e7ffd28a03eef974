"""``python -m adtrace``: the command line (``adtrace.tools.cli``)."""

import sys

from .tools.cli import main

sys.exit(main())

"""One module per group of ``adtrace`` commands; ``adtrace.tools.cli`` parses and dispatches.

A command returns its exit code (see ``adtrace.tools.cli``) and raises ``UserError`` for what the
user can fix: the command line prints it as one ``adtrace: ...`` line and exits 2.
"""


class UserError(Exception):
    """Something the user can fix; printed as one line."""

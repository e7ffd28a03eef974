"""One module per group of ``adtrace`` commands; ``adtrace.tools.cli`` parses and dispatches.

A command returns its exit code and raises ``UserError`` for what the user can fix: the command
line prints it as one ``adtrace: ...`` line and exits ``USAGE``.
"""

PASSED, FAILED, USAGE, NOTHING_CHECKED = 0, 1, 2, 3

EXIT_CODES = """\
exit status: 0 every check passed; 1 a check failed; 2 the command line or the target is wrong (it
could not load, raised or called sys.exit); 3 nothing was checked (every check was skipped or
could not run)."""
DIFF_EXIT_CODES = ("exit status: 0 the two backward passes are the same (structure, and values within --rtol; a "
                   "side saved under capture structure: structure only); 1 they differ; 2 the command line, a target "
                   "or a saved recording is wrong.")  # (adtrace diff's)


class UserError(Exception):
    """Something the user can fix; printed as one line."""

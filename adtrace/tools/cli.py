"""The ``adtrace`` command line: ``report``, ``view``, ``check``, ``experiments``, ``doctor``, ``upstream``.

Errors a user can make (a bad TARGET, an argument that cannot be differentiated, a function that
raises, a missing VJP rule) end with one ``adtrace: ...`` line and a non-zero exit, not a traceback.
"""

import argparse
import sys

from .commands import UserError
from .commands.doctor import doctor
from .commands.experiments import experiments
from .commands.traced import check, report, view
from .commands.upstream import upstream_check
from .targets import TargetError


_RTOL_HELP = ("relative tolerance of the numerical checks (central differences; default 1e-5, per node by the "
              "dtype): the error you accept from a rule approximate by design, e.g. an iterative solve")


def build_parser():
    parser = argparse.ArgumentParser(prog="adtrace", description="See, check and teach how autograd computes a gradient.")
    commands = parser.add_subparsers(dest="command", required=True)

    p = commands.add_parser("report", help="trace one call of a function and write its Markdown report")
    _point_options(p)
    _trace_options(p)
    p.add_argument("--max-rows", type=int, default=200, help="rows per table before it is capped")
    p.add_argument("-o", "--output", help="write the report here instead of standard output")
    p.add_argument("--json", help="also write every recorded event here as JSON")
    p.add_argument("--html", metavar="FILE", help="also write the step-through page here (see adtrace view)")
    p.add_argument("--check-nodes", action="store_true", help="add the per-node checks (see adtrace check)")
    p.add_argument("--rtol", type=float, help=_RTOL_HELP)

    p = commands.add_parser("view", help="trace one call and write a page that plays its backward pass step by step")
    _point_options(p)
    _trace_options(p)
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="the HTML page to write")
    p.add_argument("--open", action="store_true", help="open the page in the default browser")
    p.add_argument("--rtol", type=float, help=_RTOL_HELP)

    p = commands.add_parser("check", help="check every node's local rule; name the first wrong node and its line")
    _point_options(p)
    p.add_argument("--max-nodes", type=int, help="check only the first N nodes")
    p.add_argument("--sample", type=int, help="check a fixed pseudo-random sample of N nodes")
    p.add_argument("--max-rows", type=int, default=200, help="rows of the table before it is capped")
    p.add_argument("--rtol", type=float, help=_RTOL_HELP)

    p = commands.add_parser("experiments", help="run the experiments and write reports/NAME.md and NAME.html")
    p.add_argument("--only", action="append", metavar="NAME", help="run only this experiment (repeatable)")
    p.add_argument("--check", action="store_true", help="regenerate in memory; fail if a committed report differs")
    p.add_argument("--dir", default="experiments", help="folder of experiment scripts (default: experiments)")
    p.add_argument("--reports", default="reports", help="folder of reports (default: reports)")

    commands.add_parser("doctor", help="check the installed autograd against the hook points adtrace knows")

    p = commands.add_parser("upstream", help="run autograd's own test suite without and with --adtrace")
    p.add_argument("--version", help="the autograd release whose sdist to test (default: the installed one)")
    p.add_argument("--examples", action="store_true",
                   help="report and check autograd's own examples instead, and write their table")
    p.add_argument("--only", action="append", metavar="NAME", help="with --examples: only this example (repeatable)")
    p.add_argument("--rounds", type=int, default=5, help="with --examples: timing rounds per example (default 5)")
    p.add_argument("-o", "--output", default="reports/examples.md",
                   help="with --examples: where the table goes (default reports/examples.md)")
    return parser


def _point_options(p):
    """The function and the point it is differentiated at (report, view, check)."""
    p.add_argument("target", help="module:function or path/to/file.py:function")
    p.add_argument("--at", action="append", default=[], metavar="ARG",
                   help="an argument as a Python literal, once per argument (a list becomes a float array)")
    p.add_argument("--argnum", type=int, default=0, help="which argument to differentiate (default 0)")


def _trace_options(p):
    """How the call is traced (report, view)."""
    p.add_argument("--mode", choices=("rev", "fwd", "both"), default="rev")
    p.add_argument("--capture", choices=("auto", "full", "structure"), default="auto")


def main(argv=None):
    args = build_parser().parse_args(argv)
    handlers = {"report": report, "view": view, "check": check, "experiments": experiments, "doctor": doctor,
                "upstream": upstream_check}
    try:
        return handlers[args.command](args)
    except (UserError, TargetError) as exc:
        print(f"adtrace: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

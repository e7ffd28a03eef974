"""The ``adtrace`` command line: ``report``, ``view``, ``check``, ``explain``, ``diff``, ``graph``,
``experiments``, ``doctor``, ``upstream``.

Errors a user can make (a bad TARGET, an argument that cannot be differentiated, a function that
raises or exits, a missing VJP rule) end with one ``adtrace: ...`` line and exit 2, not a
traceback. Exit codes: ``commands.EXIT_CODES``. Standard output holds adtrace's result alone:
what the traced program prints goes to standard error.
"""

import argparse
import importlib
import os
import sys
import textwrap

from .. import __version__
from .commands import DIFF_EXIT_CODES, EXIT_CODES, USAGE, UserError
from .commands.traced import check, explain, graph, report, view
from .options import (engine_option, file_name, join_negative_values, natural, point_options, positive_float,
                      positive_int, trace_options)
from .output import StandardOutputError, show, standard_output, terminal_safe
from .targets import TargetError



def _later(module, name):
    """The handler ``name`` of ``module``, imported when its command runs (the diff stage, the experiments and
    autograd's suite are no part of the commands that trace one call, nor of their start-up)."""
    def handler(args):
        return getattr(importlib.import_module(module, __package__), name)(args)
    return handler


HANDLERS = {"report": report, "view": view, "check": check, "explain": explain, "graph": graph,
            "experiments": _later(".commands.experiments", "experiments"),
            "doctor": _later(".commands.doctor", "doctor"), "upstream": _later(".commands.upstream", "upstream_check"),
            "diff": _later(".commands.diff", "diff")}

_PROGRAM_OUTPUT = "What the traced program prints goes to standard error; standard output holds the result alone."
_TRACED = ("traced by autograd, run by adtrace's reference engine (when the call is in its scope) and 4 times "
           "by Richardson-extrapolated central differences, f(x +- h u) and f(x +- h/2 u) (up to 30 where that "
           "step does not resolve the derivative: other steps, h/4 and h/8, a probe 1000 steps out); --mode fwd: 2 "
           "(autograd's JVP, the reference's); both: 8; ")
_CALLS = {  # how many times each command calls the user's function (tests/tools/test_cli_arguments.py counts)
    "report": f"The function is called 6 times: {_TRACED}--check-nodes: once more (recorded for the per-node checks); "
              "--engine: 5 (the engine's backward() and 4 for finite differences; with --check-nodes too). "
              "A print in it shows as many times.",
    "view": f"The function is called 6 times: {_TRACED}--engine: 5 (the engine's backward() and 4 for finite "
            "differences). A print in it shows as many times.",
    "check": "The function is called once (recorded; each node's rule is then checked on its own).",
    "explain": "The function is called once (recorded); when some element has no traced path to the output, once "
               "more at the same point (under a profile hook) and once per such element, moved; --engine: once, "
               "and again for an argument no operation read (with it moved).",
    "graph": "The function is called once (recorded; no check runs).",
    "diff": "Each target is called once (recorded, its backward pass run); a saved recording is read, nothing run.",
}


def build_parser():
    parser = argparse.ArgumentParser(
        prog="adtrace", description="See, check and teach how autograd computes a gradient.",
        epilog=f"{EXIT_CODES}\n\nexample:\n  adtrace report funcs.py:f --at 0.5 --at 3.0 -o report.md",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action=_Version)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                     help="adtrace COMMAND --help says more about each")
    _report_parser(commands)
    _view_parser(commands)
    _check_parser(commands)
    _explain_parser(commands)
    _diff_parser(commands)
    _graph_parser(commands)
    _experiments_parser(commands)
    _command(commands, "doctor", "check the installed autograd against the hook points adtrace knows",
             "adtrace doctor")
    _upstream_parser(commands)
    return parser


def _command(commands, name, about, *examples, exit_codes=False):
    """A command whose ``--help`` ends with its examples (and, for the tracing ones, how many times
    they call the function and the exit codes: ``EXIT_CODES``, or the command's own text)."""
    calls = textwrap.fill(_CALLS.get(name, ""), 100)
    codes = exit_codes if isinstance(exit_codes, str) else EXIT_CODES
    epilog = (f"{calls}\n{_PROGRAM_OUTPUT}\n{codes}\n\n" if exit_codes else "") + "example:\n" + "\n".join(
        f"  {line}" for line in examples)
    return commands.add_parser(name, help=about, description=about[0].upper() + about[1:] + ".", epilog=epilog,
                               formatter_class=argparse.RawDescriptionHelpFormatter)


def _report_parser(commands):
    p = _command(commands, "report", "trace one call of a function and write its Markdown report",
                 "adtrace report funcs.py:f --at 0.5 --at 3.0 -o report.md --json events.json",
                 "adtrace report adtrace.tools.autograd_examples.drivers:rosenbrock "
                 "--args-from adtrace.tools.autograd_examples.drivers:rosenbrock_args", exit_codes=True)
    point_options(p)
    trace_options(p)
    p.add_argument("--max-rows", type=positive_int, default=200,
                   help="rows per table before it is capped (default 200)")
    p.add_argument("--collapse-above", type=positive_int, default=60, metavar="N",
                   help="group the graph's nodes by source line above N nodes (default 60)")
    p.add_argument("-o", "--output", type=file_name, metavar="FILE",
                   help="write the report here (UTF-8) instead of standard output")
    p.add_argument("--json", type=file_name, metavar="FILE", help="also write every recorded event here as JSON")
    p.add_argument("--html", type=file_name, metavar="FILE",
                   help="also write the step-through page here (see adtrace view)")
    p.add_argument("--check-nodes", action="store_true", help="add the per-node checks (see adtrace check)")


def _view_parser(commands):
    p = _command(commands, "view", "trace one call and write a page that plays its backward pass step by step",
                 "adtrace view funcs.py:f --at 0.5 --at 3.0 --mode both -o page.html --open", exit_codes=True)
    point_options(p)
    trace_options(p)
    p.add_argument("-o", "--output", required=True, type=file_name, metavar="FILE", help="the HTML page to write")
    p.add_argument("--open", action="store_true", help="open the page in the default browser")


def _check_parser(commands):
    p = _command(commands, "check", "check every node's local rule; name the first wrong node and its line",
                 "adtrace check funcs.py:f --at 0.5 --at 3.0 --sample 50", exit_codes=True)
    point_options(p)
    p.add_argument("--max-nodes", type=positive_int, metavar="N", help="check only the first N nodes")
    p.add_argument("--sample", type=positive_int, metavar="N", help="check a fixed pseudo-random sample of N nodes")
    p.add_argument("--max-rows", type=positive_int, default=200,
                   help="rows of the table before it is capped (default 200)")


_EXPLAIN_CODES = ("exit status: 0 explained; 2 the command line, the target or a selector is wrong; 3 the "
                  "differentiated argument has no element.")


def _explain_parser(commands):
    p = _command(commands, "explain", "explain why an input element's gradient is zero, NaN or what it is",
                 "adtrace explain funcs.py:mlp --args-from funcs.py:mlp_args --wrt \"params['W'][0, 1]\"",
                 "adtrace explain funcs.py:f --at [1.0, 0.0] --json why.json",
                 "adtrace explain funcs.py:neuron --at 0.5 --at -2.0 --engine micrograd --wrt w",
                 exit_codes=_EXPLAIN_CODES)
    point_options(p, autograd_only=True)
    engine_option(p)
    p.add_argument("--wrt", action="append", default=[], metavar="SELECTOR",
                   help="an input element: x, x[3], params['W'][0, 1] (repeatable; default: a few whose gradient "
                        "is non-finite, zero or largest); with --engine, a leaf: an argument's name (x) or a leaf "
                        "Value's label (v3_leaf, as the explanations name them)")
    p.add_argument("-o", "--output", type=file_name, metavar="FILE",
                   help="write the explanations here (UTF-8) instead of standard output")
    p.add_argument("--json", type=file_name, metavar="FILE", help="also write them here as JSON")


_GRAPH_CODES = ("exit status: 0 written; 2 the command line or the target is wrong (it could not load, raised or "
                "called sys.exit).")


def _graph_parser(commands):
    p = _command(commands, "graph", "record one call and export its graph as SVG, DOT or JSON (no graphviz needed)",
                 "adtrace graph funcs.py:f --at 0.5 --at 3.0 --format svg -o graph.svg",
                 "adtrace graph funcs.py:f --at 3.0 --engine micrograd --format dot -o graph.dot",
                 exit_codes=_GRAPH_CODES)
    point_options(p, autograd_only=True)  # (no numerical check: no --rtol)
    p.add_argument("--engine", metavar="ENGINE",
                   help="record this engine instead of autograd: micrograd, or path/to/file.py:Value (a Value class "
                        "of micrograd's shape); each argument becomes a leaf Value and backward() runs on the result")
    p.add_argument("--mode", choices=("rev", "fwd"), default="rev",
                   help="rev: the graph of a VJP with a seed of ones (default); fwd: of a JVP with a tangent of ones")
    p.add_argument("--capture", choices=("auto", "full", "structure"), default="auto",
                   help="what the recording keeps of values: auto (small ones exactly, large ones summarized; "
                        "default), full (every value), structure (none: the nodes' values are left out)")
    p.add_argument("--format", choices=("svg", "dot", "json"), default="svg",
                   help="svg: a standalone picture laid out by adtrace (default); dot: graphviz's language; json: "
                        "the nodes (label, primitive, line, value) and edges (argument position)")
    p.add_argument("-o", "--output", required=True, type=file_name, metavar="FILE",
                   help="the file to write (- for standard output)")


def _diff_parser(commands):
    p = _command(commands, "diff", "diff two backward passes node by node and name their first divergence",
                 "adtrace diff funcs.py:f funcs.py:f_fixed --at 3.0 -o diff.md --json diff.json",
                 "adtrace diff funcs.py:f funcs.py:f --engine-b micrograd --at 3.0",
                 "adtrace diff before.json after.json",
                 "adtrace diff funcs.py:f --autograd 1.8.0 --autograd 1.9.1 --at 3.0", exit_codes=DIFF_EXIT_CODES)
    for side in ("a", "b"):
        p.add_argument(side, metavar=side.upper(), nargs=None if side == "a" else "?",
                       help=f"{side.upper()}: a target (module:function or "
                       "path/to/file.py:function), or a recording saved as FILE.json (Recording.save, "
                       "adtrace report --json)" + (" (none with --autograd: A under each release)" if side == "b"
                                                    else ""))
    p.add_argument("--at", action="append", default=[], metavar="ARG",
                   help="a positional argument as a Python literal, once per argument (as adtrace report); both "
                        "targets get them unless --at-b or --args-from-b gives B its own")
    p.add_argument("--at-b", action="append", default=[], metavar="ARG", help="B's own positional arguments")
    p.add_argument("--kw", action="append", default=[], metavar="NAME=VALUE",
                   help="a keyword argument of both targets, a literal as for --at (repeatable)")
    p.add_argument("--args-from", metavar="FUNCTION",
                   help="module:function or path/to/file.py:function returning the arguments (as adtrace report)")
    p.add_argument("--args-from-b", metavar="FUNCTION", help="B's own --args-from")
    p.add_argument("--dtype", choices=("float64", "float32"), default="float64",
                   help="the float type of --at and --kw values (default float64)")
    p.add_argument("--argnum", type=natural, default=0,
                   help="which positional argument autograd differentiates (default 0)")
    p.add_argument("--engine", metavar="ENGINE", help="run both targets through this engine instead of autograd: "
                   "micrograd, or path/to/file.py:Value (each argument a leaf Value, backward() on the result)")
    p.add_argument("--engine-a", metavar="ENGINE", help="A's engine alone")
    p.add_argument("--engine-b", metavar="ENGINE", help="B's engine alone")
    p.add_argument("--autograd", action="append", metavar="VERSION",
                   help="twice: run target A under each of these autograd releases (each in its own venv, built and "
                        "cached under $ADTRACE_CACHE/venvs), then diff the two recordings")
    p.add_argument("--rtol", type=positive_float, help="relative tolerance two values are the same within "
                   "(default 1e-9, relative to the larger value's largest element)")
    p.add_argument("--max-rows", type=positive_int, default=200,
                   help="rows of the aligned table before it is capped (default 200)")
    p.add_argument("-o", "--output", type=file_name, metavar="FILE",
                   help="write the report here (UTF-8) instead of standard output")
    p.add_argument("--json", type=file_name, metavar="FILE", help="also write the diff here as JSON")
    p.add_argument("--html", type=file_name, metavar="FILE",
                   help="also write a side-by-side page here: both passes stepped together, the first divergence "
                   "ringed")


def _experiments_parser(commands):
    p = _command(commands, "experiments", "run the experiments and write reports/NAME.md and NAME.html",
                 "adtrace experiments --only multiple_paths", "adtrace experiments --check")
    p.add_argument("--only", action="append", metavar="NAME", help="run only this experiment (repeatable)")
    p.add_argument("--check", action="store_true", help="regenerate in memory; fail if a committed report differs")
    p.add_argument("--dir", default="experiments", help="folder of experiment scripts (default: experiments)")
    p.add_argument("--reports", default="reports", help="folder of reports (default: reports)")


def _upstream_parser(commands):
    p = _command(commands, "upstream", "run autograd's own test suite without and with --adtrace",
                 "adtrace upstream", "adtrace upstream --examples --only rosenbrock --rounds 1 -o examples.md",
                 "adtrace upstream --golden")
    p.add_argument("--version", help="the autograd release whose sdist to test (default: the installed one)")
    p.add_argument("--examples", action="store_true",
                   help="report and check autograd's own examples instead, and write their table")
    p.add_argument("--golden", action="store_true",
                   help="record every experiment under every supported autograd release, diff neighbouring releases "
                        "and write what changed (default reports/upstream_diff.md); exit 2 if a release cannot be "
                        "installed here")
    p.add_argument("--dir", default="experiments", help="with --golden: folder of experiments (default: experiments)")
    p.add_argument("--only", action="append", metavar="NAME",
                   help="with --examples: only this example; with --golden: only this experiment (repeatable)")
    p.add_argument("--rounds", type=positive_int, default=5,
                   help="with --examples: timing rounds per example (default 5)")
    p.add_argument("-o", "--output", type=file_name,
                   help="with --examples: where the table goes (default reports/examples.md); with --golden: where "
                        "the report goes (default reports/upstream_diff.md)")


def _version():
    from ..recording.autograd.drift import installed_version

    return f"adtrace {__version__} (autograd {installed_version()})"


class _Version(argparse.Action):
    """``--version``, read when asked: autograd's version comes through importlib.metadata, whose import was a
    tenth of every command's start-up."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, argparse.SUPPRESS, nargs=0, default=argparse.SUPPRESS,
                         help="show program's version number and exit")

    def __call__(self, parser, namespace, values, option_string=None):
        show(_version())
        parser.exit()


def main(argv=None):
    for stream in (sys.stdout, sys.stderr):
        terminal_safe(stream)
    parser = build_parser()
    args = parser.parse_args(join_negative_values(sys.argv[1:] if argv is None else argv, parser))
    try:
        code = HANDLERS[args.command](args)
        if sys.stdout is not None:
            with standard_output():  # (flushed here: a write error at exit would be a traceback)
                pass
        return code
    except (UserError, TargetError) as exc:
        show(f"adtrace: {exc}", sys.stderr)
        return USAGE
    except StandardOutputError as exc:  # its reader went away (`| head`), it is closed, the disk is full
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # what is left in its buffer goes nowhere, not to a traceback
        show(f"adtrace: cannot write to standard output: {exc}", sys.stderr)
        return USAGE


if __name__ == "__main__":
    sys.exit(main())

"""Options shared by several commands, the types that check option values, and negative numbers
after an option (``--at -1e-3``), which argparse would take for an option of their own."""

import argparse
import math
import re

from ..compare.traced_call import REFERENCE_LIMIT

RTOL_HELP = ("relative tolerance of the numerical checks (central differences; default 1e-5, per node by the "
             "dtype): the error you accept from a rule approximate by design, e.g. an iterative solve")


def point_options(p, autograd_only=False):
    """The function and the point it is differentiated at (report, view, check; ``explain``, which runs
    autograd or ``--engine`` and no numerical check, without ``--rtol``)."""
    p.add_argument("target", help="the function: module:function or path/to/file.py:function")
    p.add_argument("--at", action="append", default=[], metavar="ARG",
                   help="a positional argument as a Python literal, once per argument: 3.0, -1e-3 (also "
                        "--at=-1e-3), nan, -inf, 1.5j, [1.0, 2.0], or a tuple or dict of them; a list becomes "
                        "an array of --dtype")
    p.add_argument("--kw", action="append", default=[], metavar="NAME=VALUE",
                   help="a keyword argument, its value a literal as for --at (repeatable); keyword arguments "
                        "are passed, never differentiated")
    p.add_argument("--args-from", metavar="FUNCTION",
                   help="module:function or path/to/file.py:function, called with no arguments, returning the "
                        "positional arguments as a tuple, or (args, kwargs); instead of --at (--kw adds keyword "
                        "arguments)")
    p.add_argument("--dtype", choices=("float64", "float32"), default="float64",
                   help="the float type of --at and --kw values: lists become arrays of it, floats scalars of "
                        "it (default float64)")
    p.add_argument("--argnum", type=natural, default=0, help="which positional argument to differentiate (default 0)")
    if not autograd_only:
        add_engine_options(p)


def add_engine_options(p):
    """The tolerance of the numerical checks and the engine traced (report, view, check)."""
    p.add_argument("--rtol", type=positive_float, help=RTOL_HELP)
    engine_option(p)


def engine_option(p):
    """The engine traced (report, view, check, explain)."""
    p.add_argument("--engine", metavar="ENGINE",
                   help="trace this engine instead of autograd: micrograd, or path/to/file.py:Value (a Value class "
                        "of micrograd's shape); each argument becomes a leaf Value and backward() runs on the result")


def trace_options(p):
    """How the call is traced (report, view)."""
    p.add_argument("--mode", choices=("rev", "fwd", "both"), default="rev",
                   help="rev: reverse mode, a VJP with a seed of ones (default); fwd: forward mode, a JVP with a "
                        "tangent of ones; both")
    p.add_argument("--capture", choices=("auto", "full", "structure"), default="auto",
                   help="what the recording keeps of values: auto (small ones exactly, large ones summarized; "
                        "default), full (every value), structure (none: the graph and the order only)")
    p.add_argument("--reference-limit", type=natural, metavar="N",
                   help=f"run the reference engine beside autograd on a call of at most N nodes (default "
                        f"{REFERENCE_LIMIT:,}: it reruns the function, about doubling the time); above it the "
                        "report says it did not run and checks autograd's visit order alone")


# -------------------- types --------------------


def positive_int(text):
    return _checked(int, text, lambda n: n >= 1, "a whole number, at least 1")


def natural(text):
    return _checked(int, text, lambda n: n >= 0, "a whole number, 0 or more")


def positive_float(text):
    return _checked(float, text, lambda x: math.isfinite(x) and x > 0, "a finite positive number")


def file_name(text):
    return _checked(str, text, bool, "a file name")  # ("": a variable left unset, `--json "$OUT"`)


def _checked(kind, text, valid, what):
    try:
        value = kind(text)
    except ValueError:
        value = None
    if value is None or not valid(value):
        raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}")
    return value


# -------------------- negative numbers after an option --------------------

_NEGATIVE = re.compile(r"-(\d|\.\d|inf|nan|\(|\[)")


def join_negative_values(argv, parser):
    """``--at -1e-3`` as ``--at=-1e-3``: argparse reads a word starting with ``-`` as an option
    unless it looks like a plain negative number (``-1``, not ``-1e-3``, ``-1.5j`` or ``-inf``)."""
    takes_value = _options_with_a_value(parser)
    argv, joined, i = list(argv), [], 0
    while i < len(argv):
        word = argv[i]
        if word == "--":
            return joined + argv[i:]
        if word in takes_value and i + 1 < len(argv) and _NEGATIVE.match(argv[i + 1]):
            joined.append(f"{word}={argv[i + 1]}")
            i += 2
        else:
            joined.append(word)
            i += 1
    return joined


def _options_with_a_value(parser):
    names, parsers = set(), [parser]
    while parsers:
        p = parsers.pop()
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                parsers.extend(action.choices.values())
            elif action.option_strings and action.nargs is None:
                names.update(action.option_strings)
    return names


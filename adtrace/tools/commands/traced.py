"""``report``, ``view``, ``check`` and ``explain``: the commands that trace one call of the user's function.

The function is loaded, its arguments made and the call run inside ``program_output_to_stderr``:
what the program prints goes to standard error, so standard output holds the report (or the
check table) alone.
"""

import functools
import re
import sys
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from ...recording.callsite import source_location
from ...recording.eventlog import collector_paused
from ..engine_call import engine_call, engine_check, engine_of, one_class
from ..output import program_output_to_stderr, show
from ..targets import TargetError, arguments_from, load_target, parse_arg, parse_keyword, source_file
from . import FAILED, NOTHING_CHECKED, PASSED, UserError
from .files import outputs, write, write_all


def report(args):
    from ...report import ReportOptions, render
    from ...report.export import events_json

    given = {"-o": args.output or "-", "--json": args.json, "--html": args.html}
    paths = outputs(given, _sources(args))
    with collector_paused():  # (one command: a large call's millions of objects are not walked again between steps)
        call = _traced_call(args, node_checks=args.check_nodes)
        text = render(call, ReportOptions(max_rows=args.max_rows, collapse_above=args.collapse_above))
        texts = {}
        if args.json:
            recordings = {"reverse": call.recording, "forward": call.forward_recording}
            texts["--json"] = events_json(**{k: r for k, r in recordings.items() if r is not None})
        if args.html:
            from ...view import call_page

            texts["--html"] = call_page(call)
    if paths["-o"] != "-":
        texts["-o"] = text
    write_all([(option, given[option], paths[option], text) for option, text in texts.items()])  # all or none
    if paths["-o"] == "-":
        show(text, end="")
    return call_exit(call)


def view(args):
    """Write the step-through page of one traced call (``adtrace.view``)."""
    from ...view import call_page

    path = outputs({"-o": args.output}, _sources(args))["-o"]
    call = _traced_call(args)
    write(path, call_page(call), args.output)
    if args.open:
        import webbrowser

        if path == "-" or not webbrowser.open(Path(path).as_uri()):
            show(f"adtrace: no browser could open {args.output}: open it yourself", sys.stderr)
    return call_exit(call)


def check(args):
    from ...checker import SKIPPED, check as check_nodes
    from ...report.node_checks import node_checks_table, verdict_line

    with program_output_to_stderr():
        function, values, _ = _call_of(args, "check")
        if args.engine:  # micrograd, or a class of its shape (tools/engine_call.py)
            if args.max_nodes is not None or args.sample is not None:
                raise UserError("--max-nodes and --sample limit autograd's checks; with --engine every node is checked")
            engine = engine_of(args.engine)
            with _user_errors(args):
                report = engine_check(function, values, engine)
        else:
            with _user_errors(args):
                report = check_nodes(function, *values, argnum=args.argnum, max_nodes=args.max_nodes,
                                     sample=args.sample, rtol=args.rtol)
    show(node_checks_table(report, args.max_rows))
    show("")
    show(verdict_line(report))
    if not report.passed:
        return FAILED
    return PASSED if any(r.status != SKIPPED for r in report.rows) else NOTHING_CHECKED


def explain(args):
    """Why an input element's gradient is zero, non-finite or what it is (``adtrace/explain/``): exit 0
    explained, 3 when the differentiated argument has no element."""
    from ...explain import explain as explain_call
    from ...explain.elements import select
    from ...explain.entry import argument_name

    given = {"-o": args.output or "-", "--json": args.json}
    paths = outputs(given, _sources(args))
    if args.engine:
        return _explain_engine(args, given, paths)
    with program_output_to_stderr():
        function, values, _ = _call_of(args, "explain")
        if not 0 <= args.argnum < len(values):
            raise UserError(f"--argnum {args.argnum}: the function is given {len(values)} argument(s)")
        selectors = []
        for text in args.wrt:  # a part or the whole argument: its elements, in the argument's own name
            try:
                selectors += select(text, values[args.argnum], argument_name(function, args.argnum, None))
            except ValueError as exc:
                raise UserError(f"--wrt {text}: {_one_line(exc)}") from exc
        with _user_errors(args):
            explanations = explain_call(function, *values, wrt=selectors or None, argnum=args.argnum)
    return _explained(args, explanations, given, paths)


def _explain_engine(args, given, paths):
    """``explain --engine``: every argument a leaf of the engine, ``--wrt`` a leaf's name or label."""
    from ...explain import explain as explain_call
    from ...explain.value_class import NoSuchLeaf

    if args.argnum:
        raise UserError("--argnum picks autograd's differentiated argument; with --engine every argument is a leaf "
                        "(name one with --wrt)")
    with program_output_to_stderr():
        function, values, _ = _call_of(args, "explain")
        engine = engine_of(args.engine)
        try:
            with one_class(function, engine), _user_errors(args):
                explanations = explain_call(function, *values, wrt=args.wrt or None, engine=engine)
        except UserError as exc:
            if isinstance(exc.__cause__, NoSuchLeaf):  # a --wrt naming no leaf
                raise UserError(f"--wrt: {exc.__cause__.args[0]}") from exc.__cause__
            raise
    return _explained(args, explanations, given, paths)


def _explained(args, explanations, given, paths):
    import json

    from ...explain import render_explanations

    if not explanations:
        show("adtrace: the differentiated argument has no element: nothing to explain", sys.stderr)
        return NOTHING_CHECKED
    texts = {}
    if args.json:
        texts["--json"] = json.dumps([e.to_json() for e in explanations], indent=1) + "\n"
    text = render_explanations(explanations, f"Explanations: {args.target}", explanations.lines, explanations.leaves)
    if paths["-o"] != "-":
        texts["-o"] = text
    write_all([(option, given[option], paths[option], t) for option, t in texts.items()])  # all or none
    if paths["-o"] == "-":
        show(text, end="")
    return PASSED


def call_exit(call):
    """The exit code of ``report`` and ``view``: a check that ran and failed, or none that ran."""
    if not all(c.passed for c in call.checks):
        return FAILED
    if all(c.skipped for c in call.checks):
        show("adtrace: no check could run on this call (see the report's checks): nothing was checked",
             sys.stderr)
        return NOTHING_CHECKED
    return PASSED


# -------------------- the call --------------------


def _traced_call(args, node_checks=False):
    """Trace the call the command line names (``report`` and ``view``)."""
    from ...checker import check_call, check_if_rule_suspected
    from ...compare.traced_call import REFERENCE_LIMIT, trace_call

    with program_output_to_stderr():
        function, values, target = _call_of(args, "differentiate")
        if args.engine:  # micrograd, or a class of its shape (tools/engine_call.py)
            if args.mode != "rev":
                raise UserError(f"--engine {args.engine} runs backward(): reverse mode only (leave out --mode)")
            if args.reference_limit is not None:
                raise UserError(f"--engine {args.engine}: the reference engine runs over the recorded graph, "
                                "not the function again: no limit to set (leave out --reference-limit)")
            engine = engine_of(args.engine)
            with _user_errors(args):
                return engine_call(function, values, engine, args.capture, args.rtol, node_checks)
        with _user_errors(args):
            limit = REFERENCE_LIMIT if args.reference_limit is None else args.reference_limit
            call = trace_call(function, values, argnum=args.argnum, mode=args.mode, capture=args.capture,
                              rtol=args.rtol, reference_limit=limit)
            if node_checks:
                call = check_call(call, function, rtol=args.rtol)
            else:  # finite differences fail, the engines agree: the per-node checker names the rule
                call = check_if_rule_suspected(call, function, rtol=args.rtol)
    if function is not target:
        call.location = source_location(target)  # where the user's function is, not the keywords' wrapper
    return call


def _call_of(args, verb):
    """The function with its keyword arguments bound, its positional arguments (the differentiated
    one a float when given as an int), and the function as loaded."""
    function = load_target(args.target)
    dtype = np.dtype(args.dtype)
    if args.args_from:
        if args.at:
            raise UserError("give the arguments either with --at or with --args-from, not both")
        if dtype != np.float64 and not args.kw:
            raise UserError("--dtype applies to --at and --kw values: make the --args-from function return "
                            f"{dtype} arrays")
        values, kwargs = arguments_from(args.args_from)
    else:
        values, kwargs = [parse_arg(text, dtype) for text in args.at], {}
        if not values:
            raise UserError(f"give the point to {verb} at with --at ARG (one per argument) or --args-from FUNCTION")
        if 0 <= args.argnum < len(values) and type(values[args.argnum]) is int:  # `--at 3` is 3.0 when differentiated
            values[args.argnum] = _as_float(values[args.argnum], dtype, args.at[args.argnum])
    given = set()
    for text in args.kw:
        name, value = parse_keyword(text, dtype)
        if name in given:
            raise UserError(f"--kw {name} is given twice")
        given.add(name)
        kwargs[name] = value
    return _with_keywords(function, kwargs), tuple(values), function


def _as_float(value, dtype, text):
    """The differentiated ``--at 3`` as 3.0 of ``dtype``; an integer too large for it is the user's error."""
    with np.errstate(over="ignore"):
        try:
            number = dtype.type(float(value))
        except OverflowError:
            number = np.inf
    if not np.isfinite(number):
        raise UserError(f"--at {text[:40]}{'...' if len(text) > 40 else ''}: an integer of {len(str(abs(value)))} "
                        f"digits is too large for a {dtype} (differentiated, it becomes one)")
    return float(number) if dtype == np.float64 else number


def _with_keywords(function, kwargs):
    if not kwargs:
        return function

    @functools.wraps(function)
    def with_keywords(*args):
        return function(*args, **kwargs)

    return with_keywords


def _sources(args):
    """The user's files named on the command line, module form included (outputs must not
    overwrite them)."""
    named = {"TARGET": args.target, "--args-from": args.args_from, "--engine": getattr(args, "engine", None)}
    files = {option: source_file(spec) for option, spec in named.items() if spec}
    return {option: path for option, path in files.items() if path}


@contextmanager
def _user_errors(args):
    """Turn what differentiating the user's function can raise into one-line errors."""
    try:
        yield
    except TargetError:  # (already one line: an engine's class built twice, tools/engine_call.py)
        raise
    except NotImplementedError as exc:
        if _MISSING_RULE.match(str(exc)):  # autograd: "VJP of f wrt argnums (0,) not defined"
            raise UserError(f"autograd has no rule for a primitive {args.target} uses: {exc}") from exc
        raise UserError(f"{args.target} raised NotImplementedError: {_one_line(exc)}") from exc
    except (TypeError, ValueError) as exc:
        no_space = _NO_VECTOR_SPACE.match(str(exc))  # autograd's vspace() of what the function returned
        if no_space:
            value, kind = no_space.groups()
            raise UserError(f"{args.target} returned {_a(kind)} ({_one_line(value, 60)}): autograd differentiates "
                            "float outputs (a float, an array of floats, or a tuple/list/dict of them)") from exc
        rejected = _REJECTED.match(str(exc))  # adtrace refused what it returned: the function raised nothing
        if rejected:
            raise UserError(f"{args.target} {_one_line(rejected.group(1))}") from exc
        if "differentiate" in str(exc) or "argnum" in str(exc):
            raise UserError(f"cannot differentiate {args.target} at argument {args.argnum}: {_one_line(exc)}") from exc
        raise UserError(f"{args.target} raised {type(exc).__name__}: {_one_line(exc)}") from exc
    except SystemExit as exc:
        raise UserError(f"{args.target} called sys.exit({exc.code!r})") from exc
    except Exception as exc:  # the user's function raised: say so, in one line
        raise UserError(f"{args.target} raised {type(exc).__name__}: {_one_line(exc)}") from exc


_MISSING_RULE = re.compile(r"^[VJ]JP of .+ wrt argnums? .+ not defined$")
_REJECTED = re.compile(r"^the function (returned .*)", re.S)
_NO_VECTOR_SPACE = re.compile(r"^Can't find vector space for value (.*) of type <class '([\w.]+)'>", re.S)


def _a(kind):
    return f"{'an' if kind[0] in 'aeiou' else 'a'} {kind}"


def _one_line(exc, limit=300):
    text = " / ".join(line.strip() for line in str(exc).splitlines() if line.strip())
    return text if len(text) <= limit else text[:limit] + " ..."


# -------------------- graph: the recording alone, exported --------------------


def graph(args):
    """Write the recorded graph of one call as SVG, DOT or JSON (``view/graph_*.py``): the function is
    called once, recorded; no check runs. Exit 0 written, 2 the command line or the target is wrong."""
    from ...view.graph_dot import graph_dot
    from ...view.graph_export import graph_json
    from ...view.graph_svg import graph_svg
    from ..recorded_call import recorded_call, recorded_engine_call

    path = outputs({"-o": args.output}, _sources(args))["-o"]
    with program_output_to_stderr():
        function, values, _ = _call_of(args, "differentiate")
        if args.engine:
            if args.mode != "rev":
                raise UserError(f"--engine {args.engine} runs backward(): reverse mode only (leave out --mode)")
            engine = engine_of(args.engine)
            with _user_errors(args):
                recording = recorded_engine_call(function, values, engine, args.capture)
        else:
            with _user_errors(args):
                recording = recorded_call(function, values, args.argnum, args.mode, args.capture)
    exports = {"svg": lambda r: graph_svg(r, title=f"adtrace graph: {args.target}"), "dot": graph_dot,
               "json": graph_json}
    write(path, exports[args.format](recording), args.output)
    return PASSED


call_of, user_errors = _call_of, _user_errors  # (``diff`` makes two calls as these commands make one)

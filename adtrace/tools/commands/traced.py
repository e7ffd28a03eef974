"""``report``, ``view`` and ``check``: the commands that trace one call of the user's function."""

import re
import sys
from contextlib import contextmanager
from pathlib import Path

from ..targets import load_target, parse_arg
from . import UserError
from .files import write


@contextmanager
def _user_errors(args):
    """Turn what differentiating the user's function can raise into one-line errors."""
    try:
        yield
    except NotImplementedError as exc:
        if _MISSING_RULE.match(str(exc)):  # autograd: "VJP of f wrt argnums (0,) not defined"
            raise UserError(f"autograd has no rule for a primitive {args.target} uses: {exc}") from exc
        raise UserError(f"{args.target} raised NotImplementedError: {_one_line(exc)}") from exc
    except (TypeError, ValueError) as exc:
        if "differentiate" in str(exc) or "argnum" in str(exc):
            raise UserError(f"cannot differentiate {args.target} at argument {args.argnum}: {_one_line(exc)}") from exc
        raise UserError(f"{args.target} raised {type(exc).__name__}: {_one_line(exc)}") from exc
    except (Exception, SystemExit) as exc:  # the user's function raised: say so, in one line
        raise UserError(f"{args.target} raised {type(exc).__name__}: {_one_line(exc)}") from exc


_MISSING_RULE = re.compile(r"^[VJ]JP of .+ wrt argnums? .+ not defined$")


def _one_line(exc, limit=300):
    text = " / ".join(line.strip() for line in str(exc).splitlines() if line.strip())
    return text if len(text) <= limit else text[:limit] + " ..."


# -------------------- report --------------------


def report(args):
    from ...report import ReportOptions, render
    from ...report.export import events_json

    call = _traced_call(args, node_checks=args.check_nodes)
    text = render(call, ReportOptions(max_rows=args.max_rows))
    if args.json:  # written first: a bad path fails before anything is printed
        recordings = {"reverse": call.recording, "forward": call.forward_recording}
        write(args.json, events_json(**{k: r for k, r in recordings.items() if r is not None}))
    if args.html:
        from ...view import call_page

        write(args.html, call_page(call))
    if args.output:
        write(args.output, text)
    else:
        sys.stdout.write(text)
    return _exit_code(call)


def _traced_call(args, node_checks=False):
    """Trace the call the command line names (``report`` and ``view``)."""
    from ...compare.traced_call import trace_call

    function, values = _target_and_point(args, "differentiate")
    with _user_errors(args):
        return trace_call(function, values, argnum=args.argnum, mode=args.mode, capture=args.capture,
                          node_checks=node_checks, rtol=args.rtol)


def _exit_code(call):
    return 0 if all(c.passed for c in call.checks) else 1


def _target_and_point(args, verb):
    """The function and its arguments; the differentiated one as a float when given as an int."""
    max_rows = getattr(args, "max_rows", None)
    if max_rows is not None and max_rows < 1:
        raise UserError("--max-rows must be at least 1")
    if args.rtol is not None and not args.rtol > 0:
        raise UserError("--rtol must be a positive number")
    function = load_target(args.target)
    values = [parse_arg(text) for text in args.at]
    if not values:
        raise UserError(f"give the point to {verb} at with --at ARG (one per argument)")
    if 0 <= args.argnum < len(values) and type(values[args.argnum]) is int:
        values[args.argnum] = float(values[args.argnum])  # `--at 3` means 3.0 for the argument differentiated
    return function, tuple(values)



# -------------------- view --------------------


def view(args):
    """Write the step-through page of one traced call (``adtrace.view``)."""
    from ...view import call_page

    call = _traced_call(args)
    write(args.output, call_page(call))
    print(f"wrote {args.output}")
    if args.open:
        import webbrowser

        webbrowser.open(Path(args.output).resolve().as_uri())
    return _exit_code(call)


# -------------------- check --------------------


def check(args):
    from ...checker import check as check_nodes
    from ...report.node_checks import node_checks_table, verdict_line

    function, values = _target_and_point(args, "check")
    with _user_errors(args):
        report = check_nodes(function, *values, argnum=args.argnum, max_nodes=args.max_nodes, sample=args.sample,
                             rtol=args.rtol)
    print(node_checks_table(report, args.max_rows))
    print()
    print(verdict_line(report))
    return 0 if report.passed else 1



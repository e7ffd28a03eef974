"""The ``adtrace`` command line: ``report``, ``view``, ``check``, ``experiments``, ``doctor``, ``upstream``.

Errors a user can make (a bad TARGET, an argument that cannot be differentiated, a function that
raises, a missing VJP rule) end with one ``adtrace: ...`` line and a non-zero exit, not a traceback.
"""

import argparse
import re
import sys
from contextlib import contextmanager
from pathlib import Path

from tabulate import tabulate

from ..recording.autograd import drift, hooks
from . import selftest
from .engine_call import engine_call, engine_check, engine_of
from .targets import TargetError, load_target, parse_arg


class UserError(Exception):
    """Something the user can fix; printed as one line."""


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
    from ..report import ReportOptions, render
    from ..report.export import events_json

    call = _traced_call(args, node_checks=args.check_nodes)
    text = render(call, ReportOptions(max_rows=args.max_rows))
    if args.json:  # written first: a bad path fails before anything is printed
        recordings = {"reverse": call.recording, "forward": call.forward_recording}
        _write(args.json, events_json(**{k: r for k, r in recordings.items() if r is not None}))
    if args.html:
        from ..view import call_page

        _write(args.html, call_page(call))
    if args.output:
        _write(args.output, text)
    else:
        sys.stdout.write(text)
    return _exit_code(call)


def _traced_call(args, node_checks=False):
    """Trace the call the command line names (``report`` and ``view``)."""
    from ..checker import check_call
    from ..compare.traced_call import trace_call

    function, values = _target_and_point(args, "differentiate")
    if args.engine:  # micrograd, or a class of its shape (tools/engine_call.py)
        if args.mode != "rev":
            raise UserError(f"--engine {args.engine} runs backward(): reverse mode only (leave out --mode)")
        engine = engine_of(args.engine)
        with _user_errors(args):
            return engine_call(function, values, engine, args.capture, args.rtol, node_checks)
    with _user_errors(args):
        call = trace_call(function, values, argnum=args.argnum, mode=args.mode, capture=args.capture, rtol=args.rtol)
        return check_call(call, function, rtol=args.rtol) if node_checks else call


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


def _write(path, text):
    try:
        Path(path).write_text(text)
    except OSError as exc:
        raise UserError(f"cannot write {path}: {exc.strerror or exc}") from exc


# -------------------- view --------------------


def view(args):
    """Write the step-through page of one traced call (``adtrace.view``)."""
    from ..view import call_page

    call = _traced_call(args)
    _write(args.output, call_page(call))
    print(f"wrote {args.output}")
    if args.open:
        import webbrowser

        webbrowser.open(Path(args.output).resolve().as_uri())
    return _exit_code(call)


# -------------------- check --------------------


def check(args):
    from ..checker import check as check_nodes
    from ..report.node_checks import node_checks_table, verdict_line

    function, values = _target_and_point(args, "check")
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
    print(node_checks_table(report, args.max_rows))
    print()
    print(verdict_line(report))
    return 0 if report.passed else 1


# -------------------- experiments --------------------


def experiments(args):
    from .experiment import discover, load, outputs, report_path

    scripts = discover(args.dir)
    if args.only:
        missing = [name for name in args.only if name not in scripts]
        if missing:
            raise UserError(f"no experiment named {', '.join(missing)} in {args.dir}/ "
                            f"(there are: {', '.join(scripts) or 'none'})")
        scripts = {name: scripts[name] for name in args.only}
    if not scripts:
        raise UserError(f"no experiment scripts in {args.dir}/")
    failed, stale = [], []
    for name, path in scripts.items():
        target = report_path(args.reports, name)
        try:
            outcome = load(path).run()
        except Exception as exc:
            print(f"{name}: raised {type(exc).__name__}: {exc}")
            failed.append(name)
            continue
        ok = not outcome.failed and outcome.checks
        for path, text in outputs(args.reports, name, outcome).items():  # the report and its page
            if args.check:
                if not path.exists() or path.read_text() != text:
                    stale.append(str(path))
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
        status = "all checks passed" if ok else f"FAILED: {'; '.join(outcome.failed) or 'checked nothing'}"
        print(f"{name}: {status} -> {target}")
        if not ok:
            failed.append(name)
    for path in stale:
        print(f"report differs from the committed one: {path} (run `adtrace experiments` and commit it)")
    passed = len(scripts) - len(failed)
    print(f"{passed} of {len(scripts)} experiments passed" + (f"; {len(stale)} report(s) stale" if stale else ""))
    return 1 if failed or stale else 0


# -------------------- doctor --------------------


def doctor(args):
    """Print the installed autograd version, every hook point and every watched function."""
    version = drift.installed_version()
    releases = list(drift.known_releases())
    print(f"autograd {version} (adtrace knows {', '.join(releases)})")
    print()
    rows = [(p.name, "patched" if hooks.is_patched(p) else "original", p.reason) for p in hooks.HOOK_POINTS]
    print(tabulate(rows, headers=["hook point", "now", "why patched there"], tablefmt="github"))
    print()
    status = drift.status()
    rows = [(key, ", ".join(matches) or "UNKNOWN", reason) for key, reason, matches in status]
    print(tabulate(rows, headers=["watched function", "matches releases", "why watched"], tablefmt="github"))
    unknown = [key for key, _, matches in status if not matches]
    exact = [v for v in releases if all(v in matches for _, _, matches in status)]
    print()
    tests = selftest.run()
    print(tabulate([(name, "ok" if ok else "FAIL", detail) for name, ok, detail in tests],
                   headers=["self-test", "result", "detail"], tablefmt="github"))
    print()
    failed = [name for name, ok, _ in tests if not ok]
    if failed:
        print(f"FAIL: the self-test failed: {', '.join(failed)}")
        return 1
    if unknown:
        print(f"UNKNOWN: {len(unknown)} watched function(s) match no known release; recordings may be wrong")
        return 1
    print(f"ok: the installed hooks match autograd {', '.join(exact) or 'a mix of known releases'}, "
          "and the self-test passes")
    return 0


# -------------------- upstream --------------------


def upstream_check(args):
    """autograd's own test suite without and with --adtrace: the same outcome, test id by test id;
    with --examples, autograd's own examples reported and checked instead."""
    from .upstream import UpstreamError, compare

    if args.examples:
        return upstream_examples(args)

    try:
        plain, recorded, differences = compare(args.version)
    except UpstreamError as exc:
        raise UserError(str(exc)) from exc
    for name, run in (("plain", plain), ("--adtrace", recorded)):
        counts = ", ".join(f"{n} {k}" for k, n in sorted(run.counts().items()))
        print(f"{name:>9}: {counts} in {run.seconds:.1f} s")
    print(f"wall time ratio --adtrace / plain: {recorded.seconds / plain.seconds:.2f}")
    for test_id, before, after in differences:
        print(f"DIFFERS: {test_id}: {before} without adtrace, {after} with it")
    print("same outcome for every test id" if not differences else f"{len(differences)} test ids differ")
    return 1 if differences else 0


def upstream_examples(args):
    """Every example of autograd's sdist through ``adtrace report`` and ``adtrace check``, timed;
    writes the table (reports/examples.md)."""
    from .autograd_examples import EXAMPLES
    from .autograd_examples.proof import markdown, run
    from .upstream import UpstreamError

    if args.rounds < 1:
        raise UserError("--rounds must be at least 1 (the table holds timings)")
    unknown = [name for name in args.only or () if name not in EXAMPLES]
    if unknown:
        raise UserError(f"no example named {', '.join(unknown)} (there are: {', '.join(EXAMPLES)})")
    runs = []
    try:
        for name in args.only or EXAMPLES:
            runs.append(run(EXAMPLES[name], rounds=args.rounds))
            r = runs[-1]
            print(f"{name}: report exit {r.report_exit}, check exit {r.check_exit}, {r.report_bytes / 1000:.0f} KB"
                  f"{'' if r.within_size else ' (over the size limit)'}, overhead {r.overhead:.2f}x")
    except UpstreamError as exc:
        raise UserError(str(exc)) from exc
    _write(args.output, markdown(runs, rounds=args.rounds))
    passed = sum(r.passed for r in runs)
    print(f"{passed} of {len(runs)} examples pass every check within the size limit -> {args.output}")
    return 0 if passed == len(runs) else 1


# -------------------- the parser --------------------


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
    p.add_argument("--engine", metavar="ENGINE",
                   help="trace this engine instead of autograd: micrograd, or path/to/file.py:Value (a Value class "
                        "of micrograd's shape); each argument becomes a leaf Value and backward() runs on the result")


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

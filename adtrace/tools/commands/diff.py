"""``adtrace diff A B``: two backward passes aligned by structure, their first divergence
(``adtrace/diff/``).

A and B are each a target (``file.py:f``, ``module:f``), recorded here with the same arguments unless
``--at-b``/``--args-from-b`` give B its own, through autograd or ``--engine``/``--engine-a``/``--engine-b``;
or a recording saved as JSON (``Recording.save(path)``, ``adtrace report --json``: a file ending in
``.json``). Exit 0 the same backward pass, 1 they differ, 2 the command line, a target or a file is wrong.
"""

import argparse
import os

from ...diff import NothingToDiff, diff as diff_recordings
from ...diff.calls import record_call
from ...recording.saved import SavedRecordingError, load
from ..engine_call import engine_of, one_class
from ..output import program_output_to_stderr, show
from ..targets import TargetError, source_file
from . import UserError
from .files import outputs, write_all
from .traced import call_of, user_errors


def is_saved(spec):
    """A saved recording (a ``.json`` file), not a target."""
    return spec.endswith(".json")


def diff(args):
    from ...report.diffed import diff_json, diff_markdown

    _check_releases(args)
    given = {"-o": args.output or "-", "--json": args.json, "--html": args.html}
    sources = {name: source_file(spec) for name, spec in (("A", args.a), ("B", args.b))
               if spec is not None and not is_saved(spec)}
    paths = outputs(given, {k: v for k, v in sources.items() if v})
    if args.autograd:
        a, b = (_in_release(args, version) for version in args.autograd)
        names = [f"{args.a} (autograd {version})" for version in args.autograd]
    else:
        _check_arguments_used(args)
        with program_output_to_stderr():
            a = side_recording(args, "A", args.a, args.engine_a or args.engine, args.at, args.args_from)
            own = bool(args.at_b or args.args_from_b)  # B's own arguments, else A's
            b = side_recording(args, "B", args.b, args.engine_b or args.engine, args.at_b if own else args.at,
                           args.args_from_b if own else args.args_from)
        names = [args.a, args.b]
    try:
        result = diff_recordings(a, b, rtol=args.rtol)
    except NothingToDiff as exc:
        raise UserError(str(exc)) from exc
    texts = {}
    text = diff_markdown(result, *names, max_rows=args.max_rows)
    if args.json:
        texts["--json"] = diff_json(result)
    if args.html:
        from ...view.diffed import diff_page

        texts["--html"] = diff_page(result, *names)
    if paths["-o"] != "-":
        texts["-o"] = text
    write_all([(option, given[option], paths[option], t) for option, t in texts.items()])
    if paths["-o"] == "-":
        show(text, end="")
    return result.exit_code


def _check_releases(args):
    """``--autograd`` given twice and one target, or no ``--autograd`` and two sides."""
    if not args.autograd:
        if args.b is None:
            raise UserError("B is missing: give two sides, or one target and --autograd twice")
        return
    if len(args.autograd) != 2:
        raise UserError(f"--autograd: give it twice (two releases to diff), not {len(args.autograd)} time(s)")
    if args.b is not None:
        raise UserError(f"--autograd runs one target under two releases: B ({args.b}) is not wanted")
    if is_saved(args.a):
        raise UserError(f"--autograd: A is a saved recording ({args.a}), not a target to run")
    chosen = [o for o, v in (("--engine", args.engine), ("--engine-a", args.engine_a), ("--engine-b", args.engine_b),
                             ("--at-b", args.at_b), ("--args-from-b", args.args_from_b)) if v]
    if chosen:
        raise UserError(f"--autograd: {', '.join(chosen)} cannot be used with it (autograd's own pass, one target)")


def _check_arguments_used(args):
    """Two saved recordings run nothing: the options that give a target its arguments would be ignored."""
    if not (is_saved(args.a) and is_saved(args.b)):
        return
    given = [option for option, value in (("--at", args.at), ("--kw", args.kw), ("--args-from", args.args_from),
                                          ("--engine", args.engine),
                                          ("--at-b", args.at_b), ("--args-from-b", args.args_from_b),
                                          ("--argnum", args.argnum), ("--dtype", args.dtype != "float64")) if value]
    if given:
        raise UserError(f"{', '.join(given)}: A and B are both saved recordings, nothing is run (each was recorded "
                        "with its own arguments and engine)")


def _in_release(args, version):
    """Target A recorded under autograd ``version``, in that release's venv, read back from its saved JSON."""
    import json
    import tempfile

    from ..releases import run_in
    from ..sdist import UpstreamError

    call = {"target": args.a, "at": list(args.at), "kw": args.kw, "args_from": args.args_from, "dtype": args.dtype,
            "argnum": args.argnum, "engine": None}
    with tempfile.TemporaryDirectory() as folder:
        spec, saved = os.path.join(folder, "call.json"), os.path.join(folder, "recording.json")
        with open(spec, "w", encoding="utf-8") as file:
            json.dump(call, file)
        try:
            done = run_in(version, ["call", spec, saved])
        except UpstreamError as exc:
            raise UserError(str(exc)) from exc
        imported = done.stdout.split("\n", 1)[0].strip()
        if done.returncode != 0 or not os.path.isfile(saved):
            said = done.stderr.strip().splitlines()[-1:] or ["the recording was not made"]  # (its error, last)
            raise UserError(f"under autograd {version}: {said[0]}")
        if imported != version:
            raise UserError(f"--autograd {version}: its venv imported autograd {imported}")
        return load(saved)


def side_recording(args, side, spec, engine, at, args_from):
    """The recording side ``side`` names: loaded, or recorded from its target."""
    if is_saved(spec):
        if getattr(args, f"engine_{side.lower()}"):
            raise UserError(f"--engine-{side.lower()}: {side} is a saved recording ({spec}), not a target to run")
        if not os.path.isfile(spec):
            raise UserError(f"{side}: no such file: {spec}")
        try:
            return load(spec)
        except SavedRecordingError as exc:
            raise UserError(f"{side} {spec}: {exc}") from exc
    call = argparse.Namespace(target=spec, at=list(at), kw=args.kw, args_from=args_from, dtype=args.dtype,
                              argnum=args.argnum)
    function, values, _ = call_of(call, "differentiate")
    if engine is None and args.argnum >= len(values):
        raise UserError(f"--argnum {args.argnum}: {side} ({spec}) is given {len(values)} argument(s)")
    try:
        if engine is not None:
            engine = engine_of(engine)
        with user_errors(call):
            if engine is None:
                return record_call(function, values, args.argnum)
            with one_class(function, engine):
                return record_call(function, values, engine=engine)
    except (UserError, TargetError) as exc:  # (A and B may be the same target: say which side's run failed)
        raise UserError(f"{side}: {exc}") from exc

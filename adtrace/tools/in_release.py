"""What ``adtrace diff --autograd`` and ``adtrace upstream --golden`` run inside one release's venv
(``releases.run_in``): a recording made there and saved as JSON (``Recording.save``), read back by the
process that started it. Its first line of output is the autograd version it imported.

    python -m adtrace.tools.in_release call CALL.json OUT.json     # a target, as adtrace diff's A
    python -m adtrace.tools.in_release experiments DIR OUT [NAME...]  # each experiment's autograd recording

Exit 2 with the reason on standard error when the target is wrong."""

import argparse
import json
import sys
import traceback
from pathlib import Path


def record_target(call, out):
    from .commands import UserError
    from .commands.diff import side_recording
    from .output import program_output_to_stderr
    from .targets import TargetError

    args = argparse.Namespace(engine_a=None, kw=call["kw"], dtype=call["dtype"], argnum=call["argnum"])
    try:
        with program_output_to_stderr():
            recording = side_recording(args, "A", call["target"], call["engine"], call["at"], call["args_from"])
    except (UserError, TargetError) as exc:  # (what the command line says in one line)
        print(exc, file=sys.stderr)
        return 2
    recording.save(out)
    return 0


def autograd_recording(call):
    """The autograd recording an experiment's outcome is about, or None (another engine's, or none)."""
    from ..recording.recording import Recording

    recording = call if isinstance(call, Recording) else getattr(call, "recording", None)
    return recording if recording is not None and recording.engine == "autograd" else None


def record_experiments(folder, out, names):
    """Each experiment's autograd recording saved as ``OUT/NAME.json``; ``OUT/NAME.error`` when it raised."""
    import contextlib
    import io

    from .experiment import discover, load

    out = Path(out)
    for name, path in discover(folder).items():
        if names and name not in names:
            continue
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                recording = autograd_recording(load(path).run().call)
        except (Exception, SystemExit) as exc:  # an experiment that fails under this release: said in the report
            last = traceback.format_exception_only(type(exc), exc)[-1].strip().splitlines()[0]
            (out / f"{name}.error").write_text(last + "\n", encoding="utf-8")
            continue
        if recording is not None:
            recording.save(out / f"{name}.json")
    return 0


def main(argv):
    from ..recording.autograd.drift import installed_version

    print(installed_version(), flush=True)
    if argv[0] == "call":
        return record_target(json.loads(Path(argv[1]).read_text(encoding="utf-8")), argv[2])
    return record_experiments(argv[1], argv[2], set(argv[3:]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

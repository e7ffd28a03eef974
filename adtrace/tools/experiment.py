"""The harness every script in ``experiments/`` uses, and ``adtrace experiments`` runs.

An experiment module defines ``run() -> Outcome``: the lines of its numeric summary, its checks
(each claim computed two independent ways), its Markdown report and the traced call the report is
about (or a ``Recording`` alone: a graph drawn before any backward pass). ``main()`` in the script is
``adtrace.tools.experiment.main(run, __file__)``: print the summary, write ``reports/NAME.md`` and the
call's step-through page ``reports/NAME.html``, end with ``all checks passed`` or a non-zero exit.
"""

import importlib.util
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Outcome:
    lines: list = field(default_factory=list)  # the numeric summary, printed as is
    checks: dict = field(default_factory=dict)  # claim -> passed
    report: str = ""  # Markdown, deterministic
    call: Any = None  # the TracedCall (or Recording alone) the report is about: its page is reports/NAME.html

    @property
    def failed(self):
        return [claim for claim, passed in self.checks.items() if not passed]


def main(run, script):
    """Run one experiment as a script: summary, report, verdict; returns the exit code."""
    from .output import write_file

    script = Path(script).resolve()
    outcome = run()
    for line in outcome.lines:
        print(line)
    for path, text in outputs(script.parent.parent / "reports", script.stem, outcome).items():
        path.parent.mkdir(parents=True, exist_ok=True)
        write_file(path, text)
    return verdict(outcome)


def outputs(reports, name, outcome):
    """``path -> text`` of what an experiment writes: its report, and its page when it has a call."""
    written = {report_path(reports, name): outcome.report}
    if outcome.call is not None:
        from ..recording.recording import Recording
        from ..view import call_page, recording_page

        page = recording_page if isinstance(outcome.call, Recording) else call_page
        written[Path(reports) / f"{name}.html"] = page(outcome.call, title=_heading(outcome.report))
    return written


def _heading(markdown):
    """The report's title (its first line, ``# ...``, as ``report.format.text`` escaped it), for the page."""
    first = markdown.split("\n", 1)[0]
    return re.sub(r"\\(.)", r"\1", first[2:]) if first.startswith("# ") else None


def verdict(outcome):
    for claim in outcome.failed:
        print(f"check failed: {claim}")
    if outcome.failed or not outcome.checks:
        if not outcome.checks:
            print("check failed: the experiment checked nothing")
        return 1
    print("all checks passed")
    return 0


def report_path(reports, name):
    return Path(reports) / f"{name}.md"


def discover(folder):
    """The experiment scripts in ``folder``, by name, in name order."""
    return {p.stem: p for p in sorted(Path(folder).glob("*.py")) if not p.name.startswith("_")}


def load(path):
    """Import an experiment script by path (it is not a package module)."""
    name = f"adtrace_experiment_{Path(path).stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    if not callable(getattr(module, "run", None)):
        raise AttributeError(f"{Path(path).name} defines no run() -> Outcome")
    return module


def repo_root(script):
    """The folder holding ``experiments/`` (source locations in reports are relative to it)."""
    return str(Path(script).resolve().parent.parent)

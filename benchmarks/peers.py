"""The tools a user would otherwise reach for, on the same workloads: viztracer (every function call of the
run, in its ring buffer), and PySnooper and snoop (every line of the user's own function, with its
variables, written to a file). Each is measured only when installed (``pip install -e '.[bench]'``);
otherwise its column reads "not installed".

viztracer wraps the whole run, as ``with VizTracer():`` does; its trace is not saved (adtrace's recorded run
writes no report either). PySnooper and snoop decorate the workload's own function (``wrap``), as a user
decorates theirs, writing to a file in a temporary folder.
"""

import importlib.util
import tempfile
from pathlib import Path

PEERS = ("viztracer", "PySnooper", "snoop")
NOT_INSTALLED = "not installed"
_MODULES = {"viztracer": "viztracer", "PySnooper": "pysnooper", "snoop": "snoop"}


def installed(peer):
    return importlib.util.find_spec(_MODULES[peer]) is not None


def variants(make, folder):
    """peer -> a zero-argument run of the workload made by ``make`` under that peer, for the installed
    peers. ``make(wrap=...)`` builds the workload with its own function passed through ``wrap``; the
    files the line tracers write go to ``folder``."""
    found = {}
    if installed("viztracer"):
        found["viztracer"] = _under_viztracer(make())
    if installed("PySnooper"):
        import pysnooper

        found["PySnooper"] = make(wrap=pysnooper.snoop(output=str(Path(folder) / "pysnooper.log"), color=False))
    if installed("snoop"):
        import snoop

        found["snoop"] = make(wrap=snoop.Config(out=str(Path(folder) / "snoop.log"), color=False).snoop)
    return found


def _under_viztracer(run):
    from viztracer import VizTracer

    tracer = VizTracer(verbose=0, output_file=str(Path(tempfile.gettempdir()) / "unsaved.json"))

    def go():
        tracer.start()
        try:
            run()
        finally:
            tracer.stop()
            tracer.clear()
    return go

"""adtrace: see, check and teach how HIPS autograd computes a gradient.

    import adtrace
    from autograd import grad

    with adtrace.record() as rec:
        grad(lambda x: x * x)(3.0)
    rec.of_kind("add_outgrads")  # the two 3s that become 6

The package is laid out as its pipeline: ``recording`` (autograd's run becomes events; what knows
autograd is in ``recording/autograd``) -> ``reference`` (the lecture's engine) -> ``compare`` (the
two engines side by side, and the checks a report states) -> ``checker`` (which node's local rule
is wrong) -> ``diff`` (two backward passes aligned, their first divergence) -> ``report`` (Markdown)
-> ``view`` (the step-through page) -> ``tools`` (the command
line, the pytest plugin, autograd's own suite and examples). A stage imports only the stages
before it. This module is the public surface.
"""

import importlib
import sys

from . import explain
from .checker import check
from .recording import events
from .recording.autograd.drift import UnknownAutogradError, UnknownAutogradWarning
from .recording.recorder import RecorderWarning
from .recording.recording import RENDERERS, Recording
from .recording.saved import SavedRecordingError, load
from .recording.session import PatchConflictWarning, RecordingOrderError, record
from .recording.snapshots import StateSnapshot
from .recording.values import ArraySummary, Boxed, ContainerSummary, Sparse
from .report import render_recording
from .report.export import save_recording
from .view import inline_recording_page, write_recording_page

# What is imported when first used (module __getattr__): the diff stage and the graph exports, which no command
# that traces one call needs (the diff stage, xml.sax and the urllib it brings were a tenth of `adtrace view`'s
# start-up). name -> (module, attribute: None for the module itself)
_LATER = {"diff": (".diff", None), "diffs": (".diff", None), "graph_svg": (".view.graph_svg", "graph_svg"),
          "graph_dot": (".view.graph_dot", "graph_dot"), "graph_json": (".view.graph_export", "graph_json")}


def __getattr__(name):
    if name not in _LATER:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attribute = _LATER[name]
    found = importlib.import_module(module, __name__)
    return found if attribute is None else getattr(found, attribute)


def _later(name, attribute=None):
    """The renderer ``_LATER[name]`` (or its ``attribute``), imported when first called."""
    def render(*args, **kwargs):
        found = __getattr__(name)
        return (getattr(found, attribute) if attribute else found)(*args, **kwargs)
    return render


# How a Recording renders itself (recording/ never imports the stages that render): every renderer,
# declared here and only here (tests/recording/test_recording.py checks).
RENDERERS.update(markdown=render_recording, html=write_recording_page, html_inline=inline_recording_page,
                 explain=explain.explain_recording, explanations=explain.explanations_section,
                 graph_svg=_later("graph_svg"), dot=_later("graph_dot"), graph_json=_later("graph_json"),
                 save=save_recording, diff=_later("diff", "diff"))

sys.modules[__name__ + ".events"] = events  # `adtrace.events`, the public name of the event classes

__version__ = "0.2.0"
__all__ = [
    "record", "check", "Recording", "events", "StateSnapshot", "ArraySummary", "ContainerSummary", "Boxed", "Sparse",
    "explain", "load", "SavedRecordingError",
    "RecordingOrderError", "RecorderWarning", "PatchConflictWarning",
    "UnknownAutogradError", "UnknownAutogradWarning",
]

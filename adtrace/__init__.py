"""adtrace: see, check and teach how HIPS autograd computes a gradient.

    import adtrace
    from autograd import grad

    with adtrace.record() as rec:
        grad(lambda x: x * x)(3.0)
    [e for e in rec.events if e.kind == "add_outgrads"]  # the two 3s that become 6

Layout: ``hooks`` (where autograd is patched) -> ``recorder`` (calls become ``events``, values
snapshotted by ``values``) -> ``recording`` / ``snapshots`` (derived views); ``session`` switches
recording on and off; ``drift`` checks the installed autograd; ``cli`` is the command line.
"""

import sys

from .recording import events
from .checker import check
from .recording.autograd.drift import UnknownAutogradError, UnknownAutogradWarning
from .recording.autograd.recorder import RecorderWarning
from .recording.recording import Recording
from .recording.session import PatchConflictWarning, RecordingOrderError, record
from .recording.snapshots import StateSnapshot
from .recording.values import ArraySummary, Boxed, ContainerSummary, Sparse

sys.modules[__name__ + ".events"] = events  # `adtrace.events`, the public name of the event classes

__version__ = "0.1.0"
__all__ = [
    "record", "check", "Recording", "events", "StateSnapshot", "ArraySummary", "ContainerSummary", "Boxed", "Sparse",
    "RecordingOrderError", "RecorderWarning", "PatchConflictWarning",
    "UnknownAutogradError", "UnknownAutogradWarning",
]

"""``record()``: the context manager that switches recording on and off.

The hook points are patched while at least one recording is active on any thread, and restored
exactly (LIFO, the original objects) when the last one ends. Which recorders receive a call is
decided per thread (``adtrace.hooks.state``): another thread's autograd runs through the wrappers
untouched and unrecorded. Recordings nest on one thread (both receive events) and must be left
innermost first; leaving one out of order closes it and those inside it, restores autograd if no
recording is left anywhere, and raises ``RecordingOrderError``.
"""

import threading
import warnings

from .autograd import drift, hooks
from .patching import Patcher
from .autograd.recorder import Recorder
from .recording import Recording
from .values import DEFAULT_INLINE_SIZE, Capture

_lock = threading.Lock()
_patcher = Patcher()
_active = 0  # recordings active on all threads


class RecordingOrderError(RuntimeError):
    """A recording was left while a recording entered inside it was still active."""


class PatchConflictWarning(UserWarning):
    """Someone else replaced a hooked attribute while adtrace had it patched."""


class record:
    """Record autograd's internals inside a ``with`` block; the block receives a ``Recording``.

    ``capture``: ``"auto"`` (default; arrays above ``inline_size`` elements as summaries),
    ``"full"`` (every value exact) or ``"structure"`` (no values). ``strict=True`` raises
    ``drift.UnknownAutogradError`` instead of warning when a hooked autograd function is not one
    adtrace knows. ``calls=True`` also keeps each node's primitive call and the user's line that
    made it (``Recording.calls``), for per-node checks; it costs a stack walk per node and keeps
    the inputs alive, so it is off by default. ``root``: the folder call sites are relative to.
    """

    def __init__(self, capture="auto", inline_size=DEFAULT_INLINE_SIZE, strict=False, calls=False, root=None):
        self._capture = Capture(capture, inline_size)
        self._strict = strict
        self._calls, self._root = calls, root
        self._recorder = None
        self._thread = None

    def __enter__(self):
        if self._recorder is not None:
            raise RuntimeError("this record() was already entered; use a new record() per block")
        drift.check_installed(strict=self._strict)
        recording = Recording(self._capture.level)
        self._recorder = Recorder(recording, self._capture, keep_calls=self._calls, root=self._root)
        self._thread = threading.get_ident()
        _activate(self._recorder)
        return recording

    def __exit__(self, exc_type, exc, tb):
        if threading.get_ident() != self._thread:
            if self._recorder.live:
                _close_elsewhere(self._recorder)
            raise RecordingOrderError("a recording must be left on the thread that entered it; "
                                      "it was closed")
        stack = hooks.state.recorders
        if self._recorder not in stack:
            return False  # already closed when an outer recording was left out of order
        inner = stack[stack.index(self._recorder) + 1:]
        _deactivate(stack.index(self._recorder))
        if inner:
            raise RecordingOrderError(
                f"recording left while {len(inner)} recording(s) entered inside it were still "
                "active; they were closed too (leave nested recordings innermost first)")
        return False


def _activate(recorder):
    global _active
    with _lock:
        if _active == 0:
            hooks.install(_patcher)
        _active += 1
        live = tuple(r for r in hooks.state.recorders if not r.closed)  # drop ones closed elsewhere
        hooks.state.recorders = live + (recorder,)


def _deactivate(position):
    """Close the recorders of this thread from ``position`` inwards; unpatch after the last one."""
    with _lock:
        stack = hooks.state.recorders
        hooks.state.recorders = stack[:position]
        raised = None
        for recorder in stack[position:]:  # every one released, even if one raises (a warning as error)
            try:
                _release(recorder)
            except BaseException as exc:
                raised = raised or exc
        if raised is not None:
            raise raised


def _close_elsewhere(recorder):
    """Close a recorder from another thread: it stops receiving calls at once; its entry in its
    own thread's stack is dropped the next time that thread enters or leaves a recording."""
    with _lock:
        _release(recorder)


def _release(recorder):
    global _active
    if recorder.closed:
        return
    try:
        recorder.close()  # (it may warn, and warnings may be errors)
    finally:
        _active -= 1
        if _active == 0:
            replaced = _patcher.undo()
            if replaced:
                warnings.warn(PatchConflictWarning(
                    f"{', '.join(replaced)} had been replaced while recording; the originals were restored"),
                    stacklevel=5)


def active_recordings():
    """How many recordings are active on all threads (0 means autograd is unpatched)."""
    return _active

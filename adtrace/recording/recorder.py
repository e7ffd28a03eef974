"""What every engine's recorder shares: its life (live, closed, failed) and how it reports failing.

A recorder turns one engine's hooked calls into events in a ``Recording``, written through the
recording's ``RecordingWriter`` (``values``: the event log the hot path appends to); it never formats
anything. Its callbacks are guarded (``fanout.guard_callbacks``): an internal error calls
``fail``, which switches this recorder off with a ``RecorderWarning`` while the traced program
runs on. Where warnings are errors, that warning is not raised inside the engine's call (the
program must get its result): it is raised when the ``record()`` block ends (``pending``).
"""

import threading
import traceback

from .callsite import warn_at_user


class RecorderWarning(UserWarning):
    """The recorder stopped recording after an internal error; the program ran on unaffected."""


class RecorderBase:
    def __init__(self, writer):
        self.writer = writer  # the RecordingWriter of the recording this recorder fills
        self.values = writer.values  # where events are written (packers.write; recording/eventlog.py)
        self.live = True  # False once closed or failed: the guards skip it
        self.closed = False  # left (its record() block ended, or it was closed out of order)
        self.failure = None  # the traceback of the internal error that stopped it, as text
        self.pending = None  # a warning that could not be issued where it arose (warnings as errors)
        self.thread = threading.get_ident()  # the thread recorded: the one entering the record() block
        self._told = False  # (elsewhere: said once)

    def fail(self, exc):
        """An internal error: stop recording, keep what was recorded, tell the user once."""
        self.live = False
        self._note_failure(exc)
        try:
            self._release()
        except Exception:  # the recorder is already broken: the traced program must go on
            self.writer.before_read(None)
        self.warn(RecorderWarning(f"adtrace stopped recording after an internal error: {exc!r}; "
                                  "the traced program is unaffected"))

    def close(self):
        """Stop (the record() block ended). A failure to release is the recorder's failure, unless it
        had failed before (its first failure stays); the recording stays readable as far as it got."""
        self.live, self.closed = False, True
        try:
            self._release()
        except Exception as exc:
            self.writer.before_read(None)
            if self.failure is None:
                self._note_failure(exc)
                self.warn(RecorderWarning(f"adtrace could not finish the recording: {exc!r}; autograd is restored"))

    def elsewhere(self):
        """A call from another thread running in a copy of this recording's context: it is left out
        (it would mix into this thread's passes); said once. None: no recorder of the calling thread."""
        if self.live and not self._told:
            self._told = True
            self.warn(RecorderWarning(
                f"thread {threading.current_thread().name!r} runs in a copy of the context of a record() entered on "
                f"another thread (asyncio.to_thread, contextvars.copy_context().run): its calls are not recorded "
                f"(they would mix into that thread's passes); enter a record() in the thread itself"))

    def warn(self, warning):
        """Warn at the user's line; if warnings are errors, keep it for the end of the block."""
        try:
            warn_at_user(warning)
        except Exception as raised:  # (-W error): raised when the record() block ends, not inside the engine
            if self.pending is None:
                raised.__context__ = None  # (no frame of this call kept: no cycle through the recorder)
                if self.failure and hasattr(raised, "add_note"):  # (Python 3.11+)
                    raised.add_note(self.failure)
                self.pending = raised.with_traceback(None)

    def _note_failure(self, exc):
        # As text: the exception object would hold this recorder (through its traceback's frames,
        # an AttributeError's obj...), a reference cycle keeping the recording alive.
        self.failure = "".join(traceback.format_exception(exc))
        self.writer.fail(f"{type(exc).__name__}: {exc}")

    def _release(self):
        """The engine-specific work of stopping (copies the recording still needs)."""


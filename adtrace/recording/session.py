"""``record()``: the context manager that switches recording on and off.

An engine's hook points are patched while at least one recording of it is active anywhere, and
restored exactly (LIFO, the original objects) when the last one ends; an attribute the user
replaced meanwhile is theirs and stays. Entering and leaving are all-or-nothing, also when an
interrupt comes at any line (SIGINT is held back meanwhile: ``interrupts.py``). Which recorders receive a
call is decided per logical context (``contextvars``): another thread, or another asyncio task,
runs through the wrappers untouched and unrecorded. Recordings nest in one context (each receives
the events) and must be left innermost first; leaving one out of order closes it and those inside
it, restores autograd if no recording is left anywhere, and raises ``RecordingOrderError``.

What can go wrong around a block, and what the session does (``registry.py`` holds the shared
state, the lock, and the recovery after a thread's death or a fork):

- left on another thread, or in another context than the one that entered it: closed, with
  ``RecordingOrderError`` for the former;
- entered in a generator that yields inside the block: while the generator is suspended its
  recording receives its caller's autograd calls (they share a context), and says so once; a
  ``contextlib.contextmanager`` generator or a pytest fixture is exempt: its caller's with-body, or
  the test, is what it records;
- the recorder failed while warnings are errors: the program got its results; the warning is
  raised here, when the block ends.
"""

import contextlib
import gc
import sys
import threading

from . import interrupts, registry
from .callsite import relative_to_given
from .registry import PatchConflictWarning, RecordingOrderError, active_recordings
from .recording import Recording, RecordingWriter
from .values import DEFAULT_INLINE_SIZE, capture_options

__all__ = ["record", "RecordingOrderError", "PatchConflictWarning", "active_recordings"]


class record:
    """Record an engine's internals inside a ``with`` block; the block receives a ``Recording``.

    ``capture``: ``"auto"`` (default; arrays above ``inline_size`` elements as summaries),
    ``"full"`` (every value exact) or ``"structure"`` (no values). ``strict=True`` raises
    ``UnknownAutogradError`` instead of warning when a hooked autograd function is not one adtrace
    knows. ``calls=True`` also keeps each node's primitive call and the user's line that made it
    (``Recording.calls``), for per-node checks; it keeps the inputs alive, so it is off by default.
    ``sites=True`` gives each node event the user's line that made it (``site``): a stack walk per
    node (``calls=True`` implies it). ``relative_to``: the folder call sites are relative to (default:
    the working directory; ``root=``, its former name, still works with a ``DeprecationWarning``).

    ``engine``: ``"autograd"`` (default), ``"micrograd"`` (``micrograd.engine.Value``) or a
    ``Value`` class of micrograd's shape, recorded with the same events (``recording/micrograd``),
    or an engine adapter itself (``recording/engines.py``: another engine's package made it).
    """

    def __init__(self, capture="auto", inline_size=DEFAULT_INLINE_SIZE, strict=False, calls=False, sites=False,
                 relative_to=None, engine="autograd", root=None):
        relative_to = relative_to_given(relative_to, root)
        self._capture_options = capture_options(capture, inline_size)
        self._strict = strict
        self._calls, self._sites, self._relative_to = calls, sites, relative_to
        self._engine = registry.engine_named(engine)
        self._recorder = None
        self._thread = None

    def __enter__(self):
        if self._recorder is not None:
            raise RuntimeError("this record() was already entered; use a new record() per block")
        self._engine.check_installed(self._strict)
        capture, inline_size = self._capture_options
        engine = self._engine
        recording = Recording(capture, engine=engine.name, code=engine.code(self._relative_to))
        recorder = engine.recorder(RecordingWriter(recording), capture, inline_size, keep_calls=self._calls,
                                   keep_sites=self._sites, relative_to=self._relative_to)
        generator = _generator_of(sys._getframe(1))
        if generator is not None:
            registry.follow_generator(recorder, generator)
        self._recorder, self._thread = recorder, threading.get_ident()
        try:  # all or nothing: whatever raises (an interrupt, at any line) leaves the engine as it was
            with interrupts.deferred():
                registry.activate(self._engine, recorder)
            return recording
        except BaseException:
            registry.abandon(recorder)
            interrupts.restore()
            raise

    def __exit__(self, exc_type, exc, tb):
        recorder = self._recorder
        try:  # whatever raises (an interrupt, at any line), the recording is closed and the engine restored
            with interrupts.deferred():
                inner = self._leave(recorder)
        except BaseException:
            registry.abandon(recorder)
            interrupts.restore()
            raise
        if inner:
            raise RecordingOrderError(
                f"recording left while {inner} recording(s) entered inside it were still active; they were "
                "closed too (leave nested recordings innermost first)")
        if recorder.pending is not None and exc_type is None:  # a warning that was an error inside autograd
            pending, recorder.pending = recorder.pending, None
            raise pending
        return False

    def _leave(self, recorder):
        if threading.get_ident() != self._thread:
            registry.close_elsewhere(recorder)
            raise RecordingOrderError("a recording must be left on the thread that entered it; it was closed")
        return registry.deactivate(recorder)

    def __del__(self):
        # An interrupt at the very first line of __exit__ comes before any handler of it: the
        # recording is closed when the block's record() goes (once the interrupt is handled).
        try:
            if self._recorder is not None and registry.is_open(self._recorder):
                registry.abandon_if_free(self._recorder)
        except Exception:  # (__init__ failed, interpreter shutdown, warnings as errors): nothing more to do
            pass


def _generator_of(frame):
    """The generator (or async generator) running ``frame``, or None for an ordinary function and
    for the generator of a ``contextlib.contextmanager`` or a pytest fixture (its yield hands over
    to the with-body, or to the test)."""
    if not frame.f_code.co_flags & (_CO_GENERATOR | _CO_ASYNC_GENERATOR) or _pytest_fixture(frame):
        return None
    for referrer in gc.get_referrers(frame):  # once per record() entered in a generator
        if getattr(referrer, "gi_frame", None) is frame or getattr(referrer, "ag_frame", None) is frame:
            return None if _managed(referrer) else referrer
    return None


def _pytest_fixture(frame):
    """Whether pytest's fixture machinery runs the generator ``frame`` up to its yield (the caller
    of its first ``next``: ``_pytest.fixtures.call_fixture_func``)."""
    caller = frame.f_back
    return caller is not None and caller.f_code.co_name == "call_fixture_func" and \
        caller.f_globals.get("__name__") == "_pytest.fixtures"


def _managed(generator):
    """Whether a ``contextlib`` context manager holds ``generator`` (directly, or through its
    ``__dict__``, which is what refers to it on Python 3.10)."""
    for holder in gc.get_referrers(generator):
        if isinstance(holder, _CONTEXT_MANAGERS):
            return True
        if isinstance(holder, dict) and any(isinstance(owner, _CONTEXT_MANAGERS) for owner in gc.get_referrers(holder)):
            return True
    return False


_CO_GENERATOR, _CO_ASYNC_GENERATOR = 0x20, 0x200  # inspect.CO_GENERATOR, inspect.CO_ASYNC_GENERATOR
_CONTEXT_MANAGERS = (contextlib._GeneratorContextManager, contextlib._AsyncGeneratorContextManager)

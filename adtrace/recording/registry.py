"""The session's shared state: the open recordings, the engines patched for them, and recovery.

- ``_open``: every recording not yet closed, with its engine and the thread that entered it (None
  for one that no thread owns: micrograd's ``attach``, open until it is left, from any thread); an
  engine's hooks are installed while it has one (``_installs``, one ``Patcher`` each; an engine
  whose hooks are not attributes, micrograd's class descriptors, puts its own undo on the
  ``Patcher``); each class of micrograd's shape is an engine of its own;
- ``_STACK``: the recordings of the calling logical context (thread or asyncio task), outermost
  first; from it each engine's wrappers get what to call in this context (one recorder, or a
  fan-out of several; unset again when the context has none left);
- recovery: a thread that ends with a recording still open has it closed (and says so once);
  after ``fork`` the child keeps only the forking thread's recordings (and those no thread owns),
  and no lock the parent held blocks it (``os.register_at_fork``).
"""

import contextvars
import inspect
import os
import threading
import types
import weakref
from contextvars import ContextVar

from .callsite import warn_at_user
from .engines import is_engine
from .patching import Patcher
from .recorder import RecorderWarning

_lock = threading.RLock()
_STACK = ContextVar("adtrace_recordings", default=())
_open = {}  # recorder -> (engine, id of the thread that entered it, or None: no thread owns it)
_installs = {}  # engine -> _Install
_watch = threading.local()  # a sentinel per recording thread, collected when the thread ends


class RecordingOrderError(RuntimeError):
    """A recording was left while a recording entered inside it was still active."""


class PatchConflictWarning(UserWarning):
    """Someone else replaced a hooked attribute while adtrace had it patched."""


class _Install:
    __slots__ = ("patcher", "active", "first", "tells_replaced")

    def __init__(self, patcher, tells_replaced):
        self.patcher, self.active = patcher, None  # active: the context variable its wrappers read, once installed
        self.first = ContextVar("adtrace_first_set", default=None)  # per context: the tokens of active's first set
        self.tells_replaced = tells_replaced  # (an attachment's detach() restores the class without a word)


def engine_named(engine):
    """The engine a ``record(engine=...)`` names: ``"autograd"``, ``"micrograd"``, a ``Value``
    class of micrograd's shape (a ``ShapeError`` says what such a class lacks), or an engine
    adapter itself (``engines.is_engine``: one a third engine's package made, kept as it is)."""
    if is_engine(engine):
        return engine
    if engine == "autograd":
        from .autograd import ENGINE

        return ENGINE
    if engine == "micrograd" or isinstance(engine, type):
        from .micrograd.engine import engine_for

        return engine_for(engine)
    raise ValueError("engine must be 'autograd', 'micrograd', a Value class of micrograd's shape or an engine object "
                     f"(every member of recording/engines.Engine); got {engine!r}")


def lock():
    """The session's lock (for an engine made once per class: its check runs the user's code)."""
    return _lock


def installed():
    """The engines whose hooks are in now (read without the lock: one copy, atomic)."""
    return tuple(_installs)


def recorders_of(engine):
    """The open recorders of ``engine``, on every thread (read without the lock: one copy, atomic;
    ``activate`` reads it under the lock, for ``engine.admit``)."""
    return [r for r, (e, _) in list(_open.items()) if e is engine]


def active_recordings():
    """How many recordings are open on all threads (0 means nothing is patched)."""
    return len(_open)


def activate(engine, recorder, owned=True):
    """Open ``recorder``, if ``engine.admit`` lets it join the engine's open recorders (checked under
    the lock): patch its engine if it is the first, make it this context's innermost. All or
    nothing: an exception (an interrupt) at any point leaves everything as it was.

    ``owned``: the thread that enters it owns it (``record()``): it is closed when that thread
    ends, dropped in a fork child of another thread, and closed with a recording of its context it
    was entered inside. Not owned (``attach``): open until it is left (``leave``), from any thread."""
    if owned:
        _watch_thread()
    with _lock:
        engine.admit(recorder, recorders_of(engine))
        try:
            _open[recorder] = (engine, threading.get_ident() if owned else None)  # (noted first: undone with the rest)
            if engine not in _installs:
                install = _installs[engine] = _Install(Patcher(), tells_replaced=owned)
                install.active = engine.install(install.patcher)  # (all hook points or none)
            _set_stack(_STACK.get() + (recorder,))
        except BaseException:
            _close_from(recorder)
            raise


def deactivate(recorder):
    """Close ``recorder`` and those entered inside it in this context; returns how many of those
    were still open (an error of order). Every one is released even if one raises."""
    with _lock:
        stack = _STACK.get()
        inner = _owned(stack[stack.index(recorder) + 1:]) if recorder in stack else ()
        still_open = sum(1 for r in inner if r in _open)
        try:
            _release_all([recorder, *inner])
        finally:
            _set_stack(stack)
        return still_open


def abandon(recorder):
    """What an exception (an interrupt) cut short of ``activate`` or ``deactivate``, finished:
    ``recorder`` and those entered inside it in this context closed, every engine without an open
    recording restored, and no lock held by this thread. Idempotent."""
    try:
        with _lock:
            _close_from(recorder)
    finally:
        release_held(_lock)


def abandon_if_free(recorder):
    """``abandon`` from a finalizer (``record.__del__``): it may run inside any code, on any thread,
    so it never waits for the lock (another thread holding it may wait for a lock this one holds),
    nor runs inside this thread's own use of it."""
    if not _lock._is_owned() and _lock.acquire(blocking=False):
        try:
            _close_from(recorder)
        finally:
            _lock.release()


def remove_stale_hooks():
    """Take autograd's hooks of an earlier recording off where someone's undo put them back after
    it ended (a test's monkeypatch, undone at teardown, restores the wrapper it found). They record
    nothing, but the program should find autograd as it was. Nothing while a recording of autograd
    is open. Returns the names of the points cleared."""
    from .autograd import ENGINE

    with _lock:
        return [] if ENGINE in _installs else ENGINE.remove_stale()


def is_open(recorder):
    return recorder in _open


def _close_from(recorder):
    stack = _STACK.get()
    for inside in (recorder, *_owned(stack[stack.index(recorder) + 1:])) if recorder in stack else (recorder,):
        if not inside.closed:
            try:
                inside.close()
            except Exception:  # (a warning that is an error) the recording is closed all the same
                inside.live, inside.closed = False, True
        _open.pop(inside, None)
    _restore_unused()
    _set_stack(stack)


def _owned(recorders):
    return tuple(r for r in recorders if r not in _open or _open[r][1] is not None)


def _restore_unused():
    """Undo the hooks of every engine no open recording uses (undoing is idempotent)."""
    used = {engine for engine, _ in _open.values()}
    for engine in [e for e in _installs if e not in used]:
        install = _installs[engine]
        if install.active is not None:
            _point(install, None)  # (this context keeps no recorder alive)
        try:
            replaced = install.patcher.undo()
        finally:
            if not len(install.patcher):  # (undone to the end, also past an error: the next record() installs)
                del _installs[engine]
        if replaced and install.tells_replaced:
            warn_at_user(PatchConflictWarning(
                f"{', '.join(replaced)} had been replaced while recording (by this program, or another library "
                "patching it): left as it is now; adtrace restored only its own hooks"))


def release_held(lock):
    """Release ``lock`` where this thread still holds it: an interrupt at the line that leaves a
    ``with lock:`` block comes before its release (an RLock tells its owner)."""
    while lock._is_owned():
        lock.release()


def leave(recorder):
    """Close ``recorder`` alone, from any thread (those entered after it stay open), and drop it
    from this context."""
    with _lock:
        try:
            _release_all([recorder])
        finally:
            _set_stack(_STACK.get())


def close_elsewhere(recorder):
    """Close a recorder from another thread: it stops receiving calls at once; its entry in its own
    context is dropped the next time that context enters or leaves a recording."""
    with _lock:
        _release_all([recorder])


def follow_generator(recorder, generator):
    """``recorder`` was entered in the body of ``generator``, which has no context of its own: while
    it is suspended at a yield inside the block, its caller runs in the same context, and its
    recording receives the caller's autograd calls. It does (deterministically), and says so once."""
    cls = type(recorder)
    suspendable = _SUSPENDABLE.get(cls)
    if suspendable is None:
        suspendable = _SUSPENDABLE[cls] = type(cls.__name__, (_Suspendable, cls), {})
    live = recorder.live
    hidden = inspect.getattr_static(cls, "live", None)  # (a slot, or a compiled base's member: shadowed from now on)
    recorder.__class__ = suspendable
    if type(hidden) is types.MemberDescriptorType:  # the compiled paths that read it directly hand over to Python
        hidden.__set__(recorder, None)              # (neither True nor False), which reads the property
    recorder.__dict__.pop("live", None)
    recorder.__dict__["_live"] = live
    recorder._generator, recorder._told = weakref.ref(generator), False  # (no cycle through its frame)


class _Suspendable:
    """A recorder entered in a generator: ``live`` also notices events that arrive while the
    generator is suspended (the guard reads it before every callback)."""

    @property
    def live(self):
        if not self.__dict__["_live"]:
            return False
        generator = self._generator()
        if generator is None or self._told:
            return True
        if not (getattr(generator, "gi_running", False) or getattr(generator, "ag_running", False)):
            self._told = True
            name = getattr(generator, "__qualname__", "a generator")
            self.warn(RecorderWarning(
                f"a recording entered in {name} is open across a yield: while the generator is suspended, "
                "the autograd calls of its caller are recorded in it too (enter record() outside the "
                "generator, or leave it before yielding)"))
        return True

    @live.setter
    def live(self, value):
        self.__dict__["_live"] = value


_SUSPENDABLE = {}  # recorder class -> its _Suspendable subclass


def _set_stack(stack):
    """Make ``stack``'s open recordings this context's, and tell each patched engine's wrappers in
    this context what to call: None, its one recorder here, or a fan-out of its several."""
    stack = tuple(r for r in stack if r in _open)
    _STACK.set(stack)
    for engine, install in _installs.items():
        if install.active is None:  # (being installed)
            continue
        mine = [r for r in stack if _open[r][0] is engine]
        _point(install, None if not mine else mine[0] if len(mine) == 1 else engine.fanout(mine))


def _point(install, target):
    """Set ``install.active`` in this context to ``target``; None unsets it where this context set it
    first (a copy of that context, or a context it was set in before, gets None)."""
    active, first = install.active, install.first.get()
    if target is not None:
        if first is None:  # the first set in this context: its tokens undo it
            tokens = []
            tokens += [install.first.set(tokens), active.set(target)]
        else:
            active.set(target)
        return
    if first:
        try:
            install.first.reset(first[0]), active.reset(first[1])
            return
        except (ValueError, RuntimeError):  # (tokens of another context, or used there already)
            first.clear()
    if active.get() is not None:
        active.set(None)


def _release_all(recorders):
    raised = None
    for recorder in recorders:
        try:
            _release(recorder)
        except BaseException as exc:  # (a warning that is an error): the others are released all the same
            raised = raised or exc
    if raised is not None:
        try:
            raise raised
        finally:
            raised = None  # (no cycle through this frame)


def _release(recorder, closing=True):
    """Close ``recorder`` (once) and unpatch its engine after its last recording."""
    if recorder not in _open:
        return
    try:
        if closing:
            recorder.close()  # (it may warn, and warnings may be errors)
        else:
            recorder.live, recorder.closed = False, True
    finally:
        _open.pop(recorder, None)
        _restore_unused()


# -------------------- a thread that ends inside record() --------------------


class _ThreadEnd:
    """Kept in a thread-local: collected when its thread ends, it closes what that thread left open.
    In a fork child the parent's other threads' thread-locals are collected too: those threads did
    not end, the child never had them; their recordings are dropped without a word."""

    def __init__(self, thread):
        self.thread, self.pid = thread, os.getpid()

    def __del__(self):
        try:
            _recover_thread(self.thread, ended=os.getpid() == self.pid)
        except Exception:  # (interpreter shutdown, warnings as errors): nothing more can be done
            pass


def _watch_thread():
    if getattr(_watch, "end", None) is None:
        _watch.end = _ThreadEnd(threading.get_ident())


def _recover_thread(thread, ended=True):
    with _lock:
        abandoned = [r for r, (_, t) in _open.items() if t == thread]  # (None: no thread owns it)
        for recorder in abandoned:
            _release(recorder, closing=ended)
    if abandoned and ended:
        warn_at_user(RecorderWarning(
            f"a thread ended inside record(): its {len(abandoned)} open recording(s) were closed and autograd "
            "restored"))


# -------------------- fork --------------------


def _before_fork():
    _lock.acquire()


def _after_fork_in_parent():
    _lock.release()


def _after_fork_in_child():
    """Only the forking thread exists in the child: the recordings other threads own are dropped
    (their engines unpatched after the last; those no thread owns stay), and the lock starts free."""
    global _lock
    _lock = threading.RLock()
    me = threading.get_ident()
    for recorder, (_, thread) in list(_open.items()):
        if thread not in (me, None):
            _release(recorder, closing=False)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent,
                        after_in_child=_after_fork_in_child)


def unrecorded(function, *args, **kwargs):
    """``function(*args, **kwargs)`` unseen by the recordings open in this context (adtrace's own runs:
    explain's VJPs made again, its probes): run in a copy of the context whose engines' hooks call no
    recorder; a ``record()`` entered inside it records there as anywhere."""

    def run():
        _STACK.set(())
        for install in list(_installs.values()):
            if install.active is not None:
                install.first.set(None)  # (this copy's own first set: the tokens of the context copied stay its)
                install.active.set(None)
        return function(*args, **kwargs)

    return contextvars.copy_context().run(run)

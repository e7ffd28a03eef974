"""Hooks on a class of micrograd's shape: what its values do, told to sinks as it happens.

``attach(cls, sink)`` hooks the class (on the first attachment) and returns an ``Attachment``;
``detach()`` (or leaving ``with attach(cls, sink):``) removes the sink and, with the last one,
restores the class: its ``__dict__`` entries are the very objects they were (one the user replaced
or deleted meanwhile stays as they made it), instances keep plain numbers and their own closures.
One installation per class serves every attachment: two recordings of one class each get every
event once, and may end in any order. Hooking a class while
a subclass or base class of it is hooked is refused (a value would be seen twice).

Hook points, each installed on the class itself (an inherited one is deleted again on restore):
``__init__`` (the children in argument order, from ``_children``: ``_prev`` is a set),
``backward`` (start and end of a pass), ``grad`` and ``_backward`` (data descriptors,
``descriptors.py``). Events go to the sinks attached in the calling context (``contextvars``,
as ``record()`` follows them: another thread, or a task made before the attachment, runs
unhooked), in attachment order. A sink that raises gets no more callbacks and its exception is
kept in ``Attachment.failure``; the engine runs on. Inside a callback the hooks are quiet: a sink
reads plain values and what it does is not recorded.

``record(engine=cls)`` hooks a class through ``hold(cls)`` instead: one installation whose ``active``
variable the session sets per context (one recorder, or a fan-out of several nested recordings),
as it does for autograd's hook points. A class is hooked one way at a time.

Writes into ``.grad`` are seen only inside a hooked ``backward()`` (not in ``__init__``, not a
``zero_grad`` loop, not a ``_backward()`` called by hand outside ``backward()``).
"""

import os
import threading
from typing import Protocol

from .. import registry
from .class_hooks import ClassHooks
from .descriptors import MISSING
from .shape import check_shape

__all__ = ["Attachment", "HookError", "MISSING", "Sink", "attach", "hold", "hooked_classes"]


class Sink(Protocol):
    """What a hooked class tells, in the order it happens. ``node`` arguments are the live values."""

    def node_created(self, node, children: tuple, op: str, data) -> None:
        """``__init__`` returned: ``children`` as passed in ``_children`` (``x*x``: ``(x, x)``;
        a leaf: ``()``), ``op`` the value's ``_op`` (``'+'``, ``'**2'``, ``'tanh'``)."""

    def backward_started(self, root) -> None:
        """``root.backward()`` was called."""

    def seeded(self, root, previous, value) -> None:
        """``backward()`` wrote ``root.grad = value`` outside any ``_backward``: the seed."""

    def local_backward_started(self, node, grad) -> None:
        """``backward()`` calls ``node._backward()`` (the visit order); ``grad`` is ``node.grad``, its input."""

    def grad_written(self, node, target, position, previous, contribution, result, accumulated) -> None:
        """``target.grad`` went from ``previous`` (``MISSING`` if unset) to ``result``.

        ``node``: the value whose ``_backward`` wrote it (None: written by ``backward()`` itself).
        ``position``: which of ``node``'s children ``target`` is, the first not yet written
        (``x*x``: 0 then 1); None if ``target`` is not among them or ``node`` was made before the
        hooks. ``accumulated``: True for ``grad += c`` (``result`` is the sum ``previous + c``,
        ``contribution`` is ``c`` exactly), False for an assignment that replaces (``grad = c``,
        ``contribution`` is ``c``), None when unknown (a ``.grad`` that is not an int or float, or a
        write by ``backward()`` itself): then ``contribution`` is None, and a value updated in place
        (an ndarray's ``+=``) is the same object as ``previous``.
        """

    def local_backward_ended(self, node, error) -> None:
        """``node._backward()`` returned, or raised ``error`` (else None)."""

    def backward_ended(self, root, error) -> None:
        """``root.backward()`` returned, or raised ``error`` (else None)."""


class HookError(RuntimeError):
    """The class cannot be hooked now (a subclass or base class of it is hooked)."""


_lock = threading.RLock()  # (an RLock tells its owner: registry.release_held after an interrupt)
_installed = {}  # class -> ClassHooks
_attached = {}   # class -> how many attachments are left, in every context
_held = set()    # the classes hooked for the session (hold)


def attach(cls, sink):
    """Hook ``cls`` (all or nothing, after checking its shape) and send its events in this context to ``sink``."""
    with _lock:
        if cls in _held:
            raise HookError(f"{cls.__qualname__} is being recorded by adtrace.record(); attach a sink after it ends")
        hooks = _installed.get(cls) or _install(cls)
        _attached[cls] += 1
        attachment = Attachment(hooks, sink)
        here = hooks.active.get()
        if here is None:  # the first here: detaching the last one resets the variable to unset
            here = _Sinks((), hooks.active.set(None))
        hooks.active.set(_Sinks(here.attachments + (attachment,), here.token))
    return attachment


def _install(cls):
    for other in _installed:
        if issubclass(cls, other) or issubclass(other, cls):
            raise HookError(f"{other.__qualname__} is hooked and {cls.__qualname__} is its subclass or base: "
                            "its values would be recorded twice; record one class at a time")
    hooks = ClassHooks(check_shape(cls))
    _installed[cls], _attached[cls] = hooks, 0  # (noted first: release() restores what install() put)
    try:
        hooks.install()
    except BaseException:
        _installed.pop(cls, None), _attached.pop(cls, None)
        raise
    return hooks


def hold(cls):
    """Hook ``cls`` for the session (all or nothing, after checking its shape); returns its
    ``ClassHooks``, whose ``active`` variable the caller sets per context. ``release(cls)``
    restores the class."""
    with _lock:
        if cls in _installed:
            raise HookError(f"{cls.__qualname__} has sinks attached (adtrace.recording.micrograd.attach); "
                            "detach them before recording it")
        _held.add(cls)  # (noted first: release() undoes whatever part of _install was done)
        return _install(cls)


def release(cls):
    """Restore a class ``hold`` hooked (a second call does nothing; so does one after an
    interrupt cut the first short). Returns the hooked names someone else replaced meanwhile."""
    with _lock:
        if cls not in _held:
            return []
        hooks = _installed.get(cls)
        replaced = hooks.restore() if hooks is not None else []
        _installed.pop(cls, None), _attached.pop(cls, None)
        _held.discard(cls)
        return replaced


def release_held():
    """Release the lock where this thread still holds it (an interrupt at the line leaving a ``with``)."""
    while _lock._is_owned():
        _lock.release()


def hooked_classes():
    with _lock:
        return tuple(_installed)


class Attachment:
    """One sink attached to a hooked class in one context."""

    def __init__(self, hooks, sink):
        self.sink, self.failure, self.attached = sink, None, True
        self._hooks = hooks

    def detach(self):
        """Stop sending events to the sink; the last one out restores the class. A second call does nothing."""
        with _lock:
            hooks, self._hooks = self._hooks, None
            if hooks is None:
                return
            self.attached = False  # (also where detach() cannot reach the context: another thread)
            here = hooks.active.get()
            if here is not None and self in here.attachments:  # (the context keeps no sink it no longer calls)
                left = tuple(a for a in here.attachments if a is not self)
                if left:
                    hooks.active.set(_Sinks(left, here.token))
                else:
                    _unset(hooks.active, here.token)
            _attached[hooks.cls] -= 1
            if _attached[hooks.cls] == 0:
                del _installed[hooks.cls], _attached[hooks.cls]
                hooks.restore()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.detach()


class _Sinks:
    """The attachments of one context, served as one sink: each in attachment order, a sink that
    raises keeps its exception in ``failure`` and gets no more callbacks."""
    __slots__ = ("attachments", "token")

    def __init__(self, attachments, token):
        self.attachments, self.token = attachments, token  # token: of the first set in this context

    def __getattr__(self, callback):
        def call(*args):
            for attachment in self.attachments:
                if attachment.attached and attachment.failure is None:
                    try:
                        getattr(attachment.sink, callback)(*args)
                    except Exception as exc:
                        attachment.failure = exc
        return call


def _unset(variable, token):
    try:
        variable.reset(token)
    except ValueError:  # the token was made in another context (this one is a copy of it)
        variable.set(None)


def _after_fork_in_child():
    """Only the forking thread exists in the child: a lock another thread held must not block it
    (the session releases the other threads' recordings, and so their classes, through ``release``)."""
    global _lock
    _lock = threading.RLock()  # (an RLock tells its owner: registry.release_held after an interrupt)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
    registry.hold_across_fork(lambda: _lock)  # (taken before a fork: no other thread holds it in the child)

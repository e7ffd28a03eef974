"""The engine the session records for ``record(engine="micrograd")``, ``record(engine=MyValue)``
and ``attach(cls, sink)``: one adapter of micrograd's shape, configured by the class.

One engine object per class (``engine_for``), as ``recording/autograd``'s ``ENGINE`` is one for
autograd: ``micrograd.engine.Value`` and a learner's class are both a ``Shape`` (``shape.py``,
checked when the engine is made: a class not of micrograd's shape gets one ``ShapeError`` naming
what is missing) given to the same hooks, recorder and ``EngineCode``. The session installs the
hooks once while any recording of that class is open (undone through its ``Patcher``), sets their
``active`` variable per context (one recorder, or a fan-out of several) and makes one
``Recorder`` per ``record()`` block.

``attach(cls, sink)`` opens a session of the same engine whose recorder is the ``sink`` itself
(``Attachment``, behind the same guard): the sink gets every ``Sink`` callback in this context;
one that raises gets no more and its exception is kept in ``Attachment.failure``, the engine
runs on. Several sinks may be attached to a class and detached in any order; a class is hooked
either by sinks or by ``record()``, one way at a time.
"""

import inspect
import weakref

from .. import registry
from ..fanout import callbacks_of, guard_callbacks
from .code import ENGINE, engine_code
from .hooks import ClassHooks, HookError, Sink
from .recorder import Fanout, Recorder, keeper
from .shape import check_shape

_engines = weakref.WeakKeyDictionary()  # class -> its MicrogradEngine


class MicrogradEngine:
    """The micrograd-shaped adapter (``recording/engines.Engine``), configured by a class's ``Shape``."""
    name, callbacks, fanout = ENGINE, Sink, Fanout

    def __init__(self, shape):
        self.cls, self.shape, self.hooks = shape.cls, shape, None
        self.pass_start, self.local_backward, self.grad_write = (self.cls, "backward"), (self.cls, "_backward"), \
            (self.cls, "grad")

    def check_installed(self, strict):
        """Nothing to check beyond the shape (checked when the engine was made)."""

    def install(self, patcher):
        """Hook the class (all or nothing); the patcher's undo restores it. Returns the context
        variable its hooks read."""
        _refuse_hooked(self.cls)
        self.hooks = ClassHooks(self.shape)
        self.hooks.install(patcher)
        return self.hooks.active

    def recorder(self, recording, level, inline_size, keep_calls=False, keep_sites=False, root=None):
        if any(isinstance(r, Attachment) for r in registry.recorders_of(self)):
            raise HookError(f"{self.cls.__qualname__} has sinks attached (adtrace.recording.micrograd.attach); "
                            "detach them before recording it")
        recording.engine, recording.code = ENGINE, self.code(root)
        return Recorder(recording, keeper(level, inline_size), self.cls, keep_sites=keep_sites or keep_calls,
                        root=root)

    def code(self, root=None):
        """The class's own ``backward()`` and the statement each event stands for."""
        return engine_code(self.cls, root)

    # ---- the values, read as this engine keeps them

    def data(self, value):
        return value.data

    def grad(self, value):
        return value.grad

    def children(self, value):
        return tuple(value._prev)  # (a set: in its iteration order; the hooks read _children, in argument order)

    def __repr__(self):
        return f"<engine micrograd: {self.cls.__qualname__}>"


def engine_for(engine):
    """The engine of ``"micrograd"`` (``micrograd.engine.Value``) or of a class of its shape."""
    if engine == ENGINE:
        try:
            from micrograd.engine import Value
        except ImportError as exc:
            raise ValueError("engine 'micrograd' needs the micrograd package: pip install 'adtrace[micrograd]' "
                             "(or give your own Value class: record(engine=Value))") from exc
        engine = Value
    found = _engines.get(engine)
    if found is None:
        with registry.lock():  # (one engine per class; a fork waits for the check, which runs the class's code)
            found = _engines.get(engine)
            if found is None:
                _refuse_hooked(engine)  # (its shape check makes a probe value: a hooked class would record it)
                found = _engines[engine] = MicrogradEngine(check_shape(engine))
    return found


def hooked_classes():
    """The classes of micrograd's shape hooked now (by ``record()`` or by sinks)."""
    return tuple(engine.cls for engine in registry.installed() if isinstance(engine, MicrogradEngine))


def _refuse_hooked(cls):
    for other in hooked_classes():
        if isinstance(cls, type) and other is not cls and (issubclass(cls, other) or issubclass(other, cls)):
            raise HookError(f"{other.__qualname__} is hooked and {cls.__qualname__} is it, its subclass or "
                            "its base: its values would be recorded twice; record one class at a time")


def attach(cls, sink):
    """Hook ``cls`` (all or nothing, after checking its shape) and send its events in this context to ``sink``."""
    engine = engine_for(cls)
    if any(not isinstance(r, Attachment) for r in registry.recorders_of(engine)):
        raise HookError(f"{cls.__qualname__} is being recorded by adtrace.record(); attach a sink after it ends")
    attachment = Attachment(sink)
    registry.activate(engine, attachment)
    return attachment


def _forwarding(name):
    def forward(self, *args):
        getattr(self.sink, name)(*args)

    forward.__name__, forward.__signature__ = name, inspect.signature(getattr(Sink, name))
    return forward


@guard_callbacks(Sink)
class Attachment(type("Forwarding", (), {name: _forwarding(name) for name in callbacks_of(Sink)})):
    """One sink attached to a hooked class in one context: the session's recorder is the sink."""

    def __init__(self, sink):
        self.sink, self.failure, self.live, self.closed = sink, None, True, False

    @property
    def attached(self):
        return not self.closed

    def fail(self, exc):
        self.live, self.failure = False, exc

    def close(self):
        self.live, self.closed = False, True

    def detach(self):
        """Stop sending events to the sink; the last one out restores the class. A second call does nothing."""
        registry.leave(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.detach()

"""The engine the session records for ``record(engine="micrograd")``, ``record(engine=MyValue)``
and ``attach(cls, sink)``: one adapter of micrograd's shape, configured by the class.

One engine object per class (``engine_for``), as ``recording/autograd``'s ``ENGINE`` is one for
autograd: ``micrograd.engine.Value`` and a learner's class are both a ``Shape`` (``shape.py``,
checked when the engine is made: a class not of micrograd's shape gets one ``ShapeError`` naming
what is missing) given to the value-class hooks and recorder (``recording/value_class/``, installed
at this engine's ``pass_start``, ``local_backward`` and ``grad_write``) and to ``EngineCode``. The
session installs the hooks once while any recording of that class is open (undone through its
``Patcher``), sets their ``active`` variable per context (one recorder, or a fan-out of several)
and makes one ``Recorder`` per ``record()`` block.

``attach(cls, sink)`` opens a session of the same engine whose recorder is the ``sink`` itself
(``Attachment``, behind the same guard): the sink gets every ``Callbacks`` call in this context;
one that raises gets no more and its exception is kept in ``Attachment.failure``, the engine
runs on. No thread owns an attachment: it stays open until ``detach()`` (from any thread), also
after its thread ended, in a fork child, or after a ``record()`` it was made inside. Several
sinks may be attached to a class and detached in any order; the last ``detach()`` restores the
class without a word about attributes the user replaced meanwhile (they stay as they are). A
class is hooked either by sinks or by ``record()``, one way at a time (``admit``, under the
session's lock); a class is not hooked while its subclass or base is.
"""

import inspect
import weakref

from .. import registry
from ..fanout import callbacks_of, guard_callbacks
from ..value_class.hooks import Callbacks, ClassHooks, HookError
from ..value_class.recorder import Fanout, Recorder, keeper
from ..value_class.rewrite import instrument, signature
from .code import ENGINE, engine_code
from .shape import check_shape

REWRITE = True  # False: every class recorded through the descriptors (a test holds both ways to the same events)
_engines = weakref.WeakKeyDictionary()  # class -> its MicrogradEngine (made by record() or by attach())
_named = weakref.WeakSet()  # the classes record() was given, each checked once against the hooked classes


class MicrogradEngine:
    """The micrograd-shaped adapter (``recording/engines.Engine``), configured by a class's ``Shape``."""
    name, fanout = ENGINE, Fanout

    def __init__(self, shape):
        self.cls, self.shape, self.hooks = shape.cls, shape, None
        self._rewrite = None  # (the class's functions, its methods recompiled or None)
        # the engine's hook sites: ClassHooks installs its hooks there
        self.pass_start = (shape.cls, shape.backward)
        self.local_backward = (shape.cls, shape.edges or shape.local_backward)  # (the edge style: its pairs)
        self.grad_write = (shape.cls, shape.grad)

    def check_installed(self, strict):
        """Nothing to check beyond the shape (checked when the engine was made)."""

    def admit(self, recorder, others):
        """One way at a time: sinks (``Attachment``) join sinks, ``record()``'s recorders join theirs."""
        if isinstance(recorder, Attachment) and any(not isinstance(r, Attachment) for r in others):
            raise HookError(f"{self.cls.__qualname__} is being recorded by adtrace.record(); attach a sink after it "
                            "ends")
        if not isinstance(recorder, Attachment) and any(isinstance(r, Attachment) for r in others):
            raise HookError(f"{self.cls.__qualname__} has sinks attached (adtrace.recording.micrograd.attach); "
                            "detach them before recording it")

    def install(self, patcher):
        """Hook the class (all or nothing); the patcher's undo restores it. Returns the context
        variable its hooks read."""
        _refuse_relatives(self.cls)
        self.hooks = ClassHooks(self)
        self.hooks.install(patcher, self._rewritten() if self._deferrable() else None)
        return self.hooks.active

    def _deferrable(self):
        """Whether the hooks may defer (``value_class/deferred.py``): recorders of ``record()`` read their
        events afterwards; an attached sink hears each call as it happens (the descriptors)."""
        return REWRITE and not any(isinstance(r, Attachment) for r in registry.recorders_of(self))

    def _rewritten(self):
        """The class's methods recompiled (``value_class/rewrite.py``), made again if one changed since; None
        if its code is not of the forms the recompiled hooks read."""
        read = signature(self.cls)
        if self._rewrite is None or self._rewrite[0] != read:
            self._rewrite = (read, instrument(self.shape))
        return self._rewrite[1]

    def recorder(self, writer, capture, inline_size, keep_calls=False, keep_sites=False, relative_to=None):
        return Recorder(writer, keeper(capture, inline_size), self.cls, keep_sites=keep_sites or keep_calls,
                        relative_to=relative_to)

    def code(self, relative_to=None):
        """The class's own ``backward()`` and the statement each event stands for."""
        return engine_code(self.cls, relative_to, self.shape)

    # ---- the values, read as this engine keeps them

    def leaf(self, data):
        return self.cls(data)

    def backward(self, value):
        return getattr(value, self.pass_start[1])()

    def data(self, value):
        return getattr(value, self.shape.data)

    def grad(self, value):
        return getattr(value, self.shape.grad)

    def __repr__(self):
        return f"<engine micrograd: {self.cls.__qualname__}>"


def engine_for(engine):
    """The engine ``record(engine=...)`` names: of ``"micrograd"`` (``micrograd.engine.Value``) or of
    a class of its shape. The first time a class is named, it is refused while it, its subclass or
    its base is hooked (its shape check makes a probe value: a hooked class would record it)."""
    if engine == ENGINE:
        try:
            from micrograd.engine import Value
        except ImportError as exc:
            raise ValueError("engine 'micrograd' needs the micrograd package: pip install 'adtrace[micrograd]' "
                             "(or give your own Value class: record(engine=Value))") from exc
        engine = Value
    if engine in _named:
        return _engines[engine]
    if isinstance(engine, type):
        _refuse_hooked(engine)
    found = _made(engine)
    _named.add(engine)
    return found


def declare(cls, *, data="data", grad="grad", children=None, local_backward="_backward", backward="backward",
            op="_op"):
    """The engine of a value class that keeps what micrograd keeps under other names, described in a
    few lines: the attributes holding each value's ``data``, gradient (``grad``), local backward
    (``local_backward``: a closure per value or one method) and op (``op``), the method running the
    pass (``backward``), and ``__init__``'s parameter taking the operation's inputs (``children``;
    None: one of micrograd's usual names). Give it to ``record(engine=...)`` (and ``check_engine``'s
    ``cls=``, ``trace_engine_call``'s ``engine=``); from then on ``record(engine=cls)`` records the
    class as declared. The class is checked as any other (a ``ShapeError`` names what is still missing)."""
    if isinstance(cls, type):
        _refuse_hooked(cls)
    engine = MicrogradEngine(check_shape(cls, data=data, grad=grad, children=children, local_backward=local_backward,
                                         backward=backward, op=op))
    with registry.lock():
        if cls in hooked_classes():
            raise HookError(f"{cls.__qualname__} is hooked: declare it before recording it")
        _engines[cls] = engine
    _named.add(cls)
    return engine


def _refuse_hooked(cls):
    for other in hooked_classes():
        if issubclass(cls, other) or issubclass(other, cls):
            raise HookError(f"{other.__qualname__} is hooked and {cls.__qualname__} is it, its subclass or "
                            "its base: its values would be recorded twice; record one class at a time")


def _made(cls):
    """The class's engine, made once: its shape checked outside the session's lock (the check runs
    the class's code), the engine kept under it unless another thread kept one first."""
    found = _engines.get(cls)
    if found is None:
        engine = MicrogradEngine(check_shape(cls))
        with registry.lock():
            found = _engines.setdefault(cls, engine)
    return found


def hooked_classes():
    """The classes of micrograd's shape hooked now (by ``record()`` or by sinks)."""
    return tuple(engine.cls for engine in registry.installed() if isinstance(engine, MicrogradEngine))


def _refuse_relatives(cls):
    for other in hooked_classes():
        if other is not cls and (issubclass(cls, other) or issubclass(other, cls)):
            raise HookError(f"{other.__qualname__} is hooked and {cls.__qualname__} is its subclass or base: "
                            "its values would be recorded twice; record one class at a time")


def attach(cls, sink):
    """Hook ``cls`` (all or nothing, after checking its shape) and send its events in this context to ``sink``."""
    engine = _engines.get(cls) if isinstance(cls, type) else None
    if engine is None:
        _refuse_relatives(cls)  # (before its shape check: a probe value of a hooked class would be recorded)
        engine = _made(cls)
    attachment = Attachment(sink)
    registry.activate(engine, attachment, owned=False)
    return attachment


def _forwarding(name):
    def forward(self, *args):
        getattr(self.sink, name)(*args)

    forward.__name__, forward.__signature__ = name, inspect.signature(getattr(Callbacks, name))
    return forward


@guard_callbacks(Callbacks)
class Attachment(type("Forwarding", (), {name: _forwarding(name) for name in callbacks_of(Callbacks)})):
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

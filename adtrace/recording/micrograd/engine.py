"""The engine the session records for ``record(engine="micrograd")`` or ``record(engine=MyValue)``.

One engine object per class (``engine_for``), as ``recording/autograd``'s ``ENGINE`` is one for
autograd: the session installs its hooks once while any recording of that class is open
(``hooks.hold``, undone through the session's ``Patcher``), sets its ``active`` variable per
context to the recorder of that context or a fan-out of several, and makes one ``Recorder`` per
``record()`` block. The class's shape is checked when its engine is made: a class that is not of
micrograd's shape gets one ``ShapeError`` naming what is missing.
"""

import weakref

from . import hooks
from .code import ENGINE, engine_code
from .recorder import Fanout, Recorder, keeper
from .shape import check_shape

_engines = weakref.WeakKeyDictionary()  # class -> its MicrogradEngine


class MicrogradEngine:
    name = ENGINE
    fanout = Fanout

    def __init__(self, cls):
        self.cls = cls

    def check_installed(self, strict):
        """Nothing to check beyond the shape (checked when the engine was made)."""

    def install(self, patcher):
        """Hook the class (all or nothing); the patcher's undo restores it. Returns the context
        variable its hooks read."""
        patcher.on_undo(lambda: hooks.release(self.cls))  # (first: it undoes any part of hold)
        return hooks.hold(self.cls).active

    def release_held(self):
        """Release the hooks' lock where this thread still holds it (after an interrupt)."""
        hooks.release_held()

    def recorder(self, recording, level, inline_size, keep_calls=False, keep_sites=False, root=None):
        recording.engine, recording.code = ENGINE, engine_code(self.cls, root)
        return Recorder(recording, keeper(level, inline_size), self.cls, keep_sites=keep_sites or keep_calls,
                        root=root)

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
        _refuse_hooked(engine)  # (its shape check makes a probe value: a hooked class would record it)
        check_shape(engine)
        found = _engines[engine] = MicrogradEngine(engine)
    return found


def _refuse_hooked(cls):
    for other in hooks.hooked_classes():
        if isinstance(cls, type) and (issubclass(cls, other) or issubclass(other, cls)):
            raise hooks.HookError(f"{other.__qualname__} is hooked and {cls.__qualname__} is it, its subclass or "
                                  "its base: its values would be recorded twice; record one class at a time")

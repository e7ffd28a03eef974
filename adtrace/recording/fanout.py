"""What the hook wrappers call: one recorder, or one object standing for several, behind one guard.

The wrappers of an engine (``recording/autograd/``) call the callbacks its ``Protocol`` lists on
whatever is active in the calling context: nothing, one recorder, or a ``Fanout`` that forwards
each call to every active recorder (nested ``record()`` blocks). So every wrapper has a single
path, and the guard is written once, here: ``guard_callbacks`` puts each callback of a recorder
class behind ``guarded``, which skips a recorder that is not live and switches off one that
raises (``Recorder.fail``), never the traced program.

A callback may return a token that the wrapper hands back to a later callback of the same call
(``add_outgrads``' previous entry, a ``JVPNode``'s frame); the fan-out returns one token per
recorder and gives each recorder its own back.
"""

import functools
import inspect
import threading


def guarded(callback):
    """``callback`` (a recorder method) behind the guard. The guard is generated with the
    callback's own parameters, as ``dataclasses`` generates ``__init__``: forwarding ``*args``
    would build a tuple and take a slower call on every event."""
    params = ", ".join(list(inspect.signature(callback).parameters)[1:])
    source = (f"def {callback.__name__}(self, {params}):\n"
              f"    if self.live:\n"
              f"        try:\n"
              f"            return callback(self, {params})\n"
              f"        except Exception as exc:\n"
              f"            self.fail(exc)\n")
    namespace = {"callback": callback}
    # (a fixed template over the callback's own parameter names, filed under this module: machinery)
    exec(compile(source, f"{__file__} (guard of {callback.__qualname__})", "exec"), namespace)
    return functools.wraps(callback)(namespace[callback.__name__])


def guards_itself(callback):
    """Mark a callback whose body is its own guard (``if not self.live: return``, then its statements
    under ``try:``, ``except Exception as exc: self.fail(exc)``), written out on a hot path: one frame
    per call. ``guard_callbacks`` leaves it as it is."""
    callback.__guards_itself__ = True
    return callback


def callbacks_of(protocol):
    """The callback names a recorder ``Protocol`` lists, in definition order."""
    return [name for name, value in vars(protocol).items() if inspect.isfunction(value) and not name.startswith("_")]


def guard_callbacks(protocol):
    """Class decorator: every callback of ``protocol`` that the class defines goes behind the guard."""
    def decorate(cls):
        for name in callbacks_of(protocol):
            if not getattr(getattr(cls, name), "__guards_itself__", False):
                setattr(cls, name, guarded(getattr(cls, name)))
        return cls

    return decorate


def fanout_for(protocol, tokens):
    """A ``Fanout`` class for ``protocol``; ``tokens`` maps a callback to the position of the
    argument that carries a token an earlier callback returned."""
    methods = {name: _forwarding(name, tokens.get(name)) for name in callbacks_of(protocol)}
    return type(f"{protocol.__name__}Fanout", (Fanout,), methods)


class Fanout:
    """Several active recorders, served as one (each behind its own guard)."""

    __slots__ = ("recorders", "keeps_values", "thread")

    def __init__(self, recorders):
        self.recorders = tuple(recorders)
        self.keeps_values = any(getattr(r, "keeps_values", True) for r in self.recorders)
        threads = {getattr(r, "thread", None) for r in self.recorders} - {None}  # (an attached sink has none)
        # the thread they were entered on; None if several (a thread in a copy of a recording's context
        # entered its own record(): the calls it makes are its recorder's only)
        self.thread = threads.pop() if len(threads) == 1 else None

    def elsewhere(self):
        """The recorders of this thread (one, a Fanout, or None); the others told (``RecorderBase.elsewhere``)."""
        me = threading.get_ident()
        here = [r for r in self.recorders if getattr(r, "thread", me) == me]
        for recorder in self.recorders:
            if recorder not in here:
                recorder.elsewhere()
        return type(self)(here) if len(here) > 1 else here[0] if here else None

    live = True  # its recorders' guards decide, each for itself


def _forwarding(name, token_at):
    def forward(self, *args):
        if token_at is None:
            return [getattr(r, name)(*args) for r in self.recorders]
        tokens = args[token_at] or (None,) * len(self.recorders)
        head, tail = args[:token_at], args[token_at + 1:]
        return [getattr(r, name)(*head, token, *tail) for r, token in zip(self.recorders, tokens)]

    forward.__name__ = name
    return forward

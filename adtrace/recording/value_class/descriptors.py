"""The two class-level data descriptors installed while a class is hooked: ``grad`` and ``_backward``.

A data descriptor on the class takes precedence over the instance's ``__dict__``, so every read
and write of ``value.grad`` and ``value._backward`` passes through it, also for values made before
the hooks were installed. Each keeps the value where the class keeps it (the instance ``__dict__``
under the same name, or the class's ``__slots__`` entry), always as the plain object the engine
assigned: once the descriptors are removed, instances hold exactly what they would have held.

``GradDescriptor``, ``BackwardDescriptor`` and ``RecordedLocalBackward`` have a compiled twin
(``_descriptors.c``, ``recording/compiled.py``), used when built: the classes below are the reference
(``PURE``), which the twin calls for every rare case and the tests hold it to.
"""

import functools
import inspect
import sys
import types

from .. import compiled
from .tracked import NOT_HELD, NUMBER_KINDS, TRACKED_NUMBER, UNTRACKED, held, hold, plain, track


class _Missing:
    def __repr__(self):
        return "MISSING"


MISSING = _Missing()  # the previous value of a .grad that was never set


class Storage:
    """Where a value keeps one attribute: its ``__dict__``, or the slot its class declared.
    ``fallback`` is the class-level attribute (if any) a value without its own one reads."""

    def __init__(self, cls, name):
        self.name = name
        attribute = inspect.getattr_static(cls, name, MISSING)
        self.slot = attribute if isinstance(attribute, types.MemberDescriptorType) else None
        self.fallback = MISSING if self.slot is not None else attribute

    def load(self, value):
        if self.slot is not None:
            return self.slot.__get__(value, type(value))
        try:
            return value.__dict__[self.name]
        except KeyError:
            pass
        if self.fallback is MISSING:
            raise AttributeError(f"{type(value).__name__!r} object has no attribute {self.name!r}")
        get = getattr(type(self.fallback), "__get__", None)
        return self.fallback if get is None else get(self.fallback, value, type(value))

    def load_or_missing(self, value):
        try:
            if self.slot is None:  # (the value's own entry: one call on the hot path)
                found = value.__dict__.get(self.name, MISSING)
                if found is not MISSING or self.fallback is MISSING:
                    return found
            return self.load(value)
        except AttributeError:
            return MISSING

    def store(self, value, attribute):
        if self.slot is not None:
            self.slot.__set__(value, attribute)
        else:
            value.__dict__[self.name] = attribute

    def delete(self, value):
        if self.slot is not None:
            self.slot.__delete__(value)
        else:
            try:
                del value.__dict__[self.name]
            except KeyError:
                raise AttributeError(self.name) from None


class GradDescriptor:
    """``value.grad``: tracked numbers inside a recorded ``_backward``; writes inside a recorded
    ``backward()`` told to the hooks (previous value, the write, the last addition)."""

    def __init__(self, hooks, storage):
        self.hooks, self.storage = hooks, storage
        self.local, self.name, self.slot = hooks.local, storage.name, storage.slot  # (read on every access)
        self.active = hooks.active

    def __get__(self, value, owner=None):
        if value is None:
            return self
        # (storage.load written out, as in __set__: the value's own entry; else the class's, or AttributeError)
        grad = value.__dict__.get(self.name, MISSING) if self.slot is None else self.slot.__get__(value)
        if grad is MISSING:
            grad = self.storage.load(value)
        state = self.local.state
        if state.frames and not state.quiet:
            frame = state.frames[-1]
            kind = TRACKED_NUMBER.get(type(grad))
            if kind is not None:  # (track, written out for a number: once per .grad read)
                tracked = kind(grad)
                hold(tracked, grad, value, state)
            else:
                tracked = track(grad, value, state)
            # (hooks.grad_written: a .grad never read cannot be added to; a tracked one read is its owner's)
            if tracked is not grad:
                frame.handed.append(tracked)  # (detached when the local backward returns)
            else:
                if frame.read is None:
                    frame.read = set()
                frame.read.add(id(value))
            return tracked
        return grad

    def __set__(self, value, grad):
        if type(grad) not in UNTRACKED:  # (plain, written out: a sum written is a plain number)
            grad = plain(grad)
        state = self.local.state
        if not state.ends or state.quiet:
            if self.slot is None:  # (storage.store, written out)
                value.__dict__[self.name] = grad
            else:
                self.slot.__set__(value, grad)
            return
        previous = value.__dict__.get(self.name, MISSING) if self.slot is None else MISSING
        if previous is MISSING:  # (the class's, or none; written out above for the value's own entry)
            previous = self.storage.load_or_missing(value)
        addition, state.addition = state.addition, None
        in_place, state.in_place = state.in_place, None
        if self.slot is None:
            value.__dict__[self.name] = grad
        else:
            self.slot.__set__(value, grad)
        if grad is previous and in_place is grad:  # (self.grad += c: the in-place write was told as it happened)
            return
        frames = state.frames
        if frames and addition is not None and addition[0] is grad and addition[3] == "+":
            # (hooks.grad_written, written out for micrograd's grad += c inside a local backward: a tracked number
            # read from this value's .grad, plus a number; the first pair accumulation() tries)
            left, right = addition[1], addition[2]
            kind = type(right)
            if type(left) in NUMBER_KINDS and (kind in UNTRACKED or kind in NUMBER_KINDS):
                if held(left, "_owner") is value and held(left, "_plain", NOT_HELD) is previous:
                    frame = frames[-1]
                    position = frame.position(value)
                    sink = self.active.get()
                    if sink is not None:  # (notify, written out)
                        state.quiet += 1
                        try:
                            sink.grad_written(frame.node, value, position, previous,
                                              right if kind in UNTRACKED else right._plain, grad, True)
                        finally:
                            state.quiet -= 1
                    return
        self.hooks.grad_written(value, previous, grad, addition, state)

    def __delete__(self, value):
        self.storage.delete(value)


class BackwardDescriptor:
    """``value._backward``: the value's own closure (or the class's method, bound), read as a recorded
    wrapper inside a recorded ``backward()`` (that is where ``backward()`` reads it to call it)."""

    def __init__(self, hooks, storage):
        self.hooks, self.storage, self.run = hooks, storage, hooks.run_local_backward
        self.local, self.name, self.slot = hooks.local, storage.name, storage.slot  # (read on every access)

    def __get__(self, value, owner=None):
        if value is None:
            return self
        state = self.local.state
        listening = state.ends and not state.quiet
        try:  # (storage.load's first place, written out)
            closure = value.__dict__[self.name] if self.slot is None else self.slot.__get__(value)
        except (KeyError, AttributeError):
            try:
                closure = self.storage.load(value)
            except AttributeError:  # a leaf without one (``hasattr(v, "_backward")``)
                if listening:
                    self.hooks.no_local_backward(value)
                raise
        if listening:
            if closure is None:  # a leaf's None: backward() has nothing to call
                self.hooks.no_local_backward(value)
                return None
            return RecordedLocalBackward(self.run, value, closure)  # (hooks.recorded_local_backward, written out)
        return closure

    def __set__(self, value, closure):
        if self.slot is None:  # (storage.store, written out: twice per value made)
            value.__dict__[self.name] = closure
        else:
            self.slot.__set__(value, closure)

    def __delete__(self, value):
        self.storage.delete(value)


class RecordedLocalBackward(functools.partial):
    """What ``value._backward`` reads as inside a recorded ``backward()``: a call runs the value's own
    closure through ``ClassHooks.run_local_backward``; ``__wrapped__`` is the closure. (A partial: made and
    called in C, about half the cost of a closure made per visit with its ``__wrapped__`` set.)"""
    __slots__ = ()

    __wrapped__ = property(lambda self: self.args[1])


class EdgesDescriptor:
    """``value.parents`` of the edge style (``(value, local derivative)`` pairs, no closures): read
    by one of ``backward()``'s loops that multiply along them (``Shape.visits``), the visit of ``value``."""

    def __init__(self, hooks, storage):
        self.hooks, self.storage, self.visits = hooks, storage, hooks.shape.visits

    def __get__(self, value, owner=None):
        if value is None:
            return self
        edges = self.storage.load(value)
        state = self.hooks.local.state
        if state.ends and not state.quiet:
            caller = sys._getframe(1)
            if (caller.f_code.co_filename, caller.f_lineno) in self.visits:
                self.hooks.edge_visit(value)
        return edges

    def __set__(self, value, edges):
        self.storage.store(value, edges)

    def __delete__(self, value):
        self.storage.delete(value)


# the reference classes; the compiled twin's, when built, take their names (hooks.py imports them from here)
PURE = {"GradDescriptor": GradDescriptor, "BackwardDescriptor": BackwardDescriptor,
        "RecordedLocalBackward": RecordedLocalBackward}
_twin = compiled.twin("adtrace.recording.value_class._descriptors")
if _twin is not None:
    _hooks = compiled.twin("adtrace.recording.value_class._hooks")  # (its ThreadState's fields read directly)
    _twin.bind(MISSING, NOT_HELD, TRACKED_NUMBER, NUMBER_KINDS, track, plain, GradDescriptor, BackwardDescriptor,
               None if _hooks is None else _hooks.ThreadState, None if _hooks is None else _hooks.Frame)
    if _hooks is not None:
        _hooks.bind_pool(_twin.int_pool)  # (its tracked ints 0, made again: detached without popping their entries)
    GradDescriptor, BackwardDescriptor = _twin.GradDescriptor, _twin.BackwardDescriptor
    RecordedLocalBackward = _twin.RecordedLocalBackward

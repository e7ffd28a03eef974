"""The two class-level data descriptors installed while a class is hooked: ``grad`` and ``_backward``.

A data descriptor on the class takes precedence over the instance's ``__dict__``, so every read
and write of ``value.grad`` and ``value._backward`` passes through it, also for values made before
the hooks were installed. Each keeps the value where the class keeps it (the instance ``__dict__``
under the same name, or the class's ``__slots__`` entry), always as the plain object the engine
assigned: once the descriptors are removed, instances hold exactly what they would have held.
"""

import inspect
import sys
import types

from .tracked import plain, track


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

    def __get__(self, value, owner=None):
        if value is None:
            return self
        grad = self.storage.load(value)
        state = self.hooks.local.state
        if state.frames and not state.quiet:
            frame = state.frames[-1]
            frame.read.add(id(value))  # (hooks.grad_written: a .grad never read cannot be added to)
            tracked = track(grad, value, state)
            if tracked is not grad:
                frame.handed.append(tracked)  # (detached when the local backward returns)
            return tracked
        return grad

    def __set__(self, value, grad):
        grad = plain(grad)
        state = self.hooks.local.state
        if not state.ends or state.quiet:
            self.storage.store(value, grad)
            return
        previous = self.storage.load_or_missing(value)
        addition, state.addition = state.addition, None
        in_place, state.in_place = state.in_place, None
        self.storage.store(value, grad)
        if grad is previous and in_place is grad:  # (self.grad += c: the in-place write was told as it happened)
            return
        self.hooks.grad_written(value, previous, grad, addition)

    def __delete__(self, value):
        self.storage.delete(value)


class BackwardDescriptor:
    """``value._backward``: the value's own closure (or the class's method, bound), read as a recorded
    wrapper inside a recorded ``backward()`` (that is where ``backward()`` reads it to call it)."""

    def __init__(self, hooks, storage):
        self.hooks, self.storage = hooks, storage

    def __get__(self, value, owner=None):
        if value is None:
            return self
        state = self.hooks.local.state
        listening = state.ends and not state.quiet
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
            return self.hooks.recorded_local_backward(value, closure)
        return closure

    def __set__(self, value, closure):
        self.storage.store(value, closure)

    def __delete__(self, value):
        self.storage.delete(value)


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

"""One class's hooks: what its values do, told as ``Callbacks`` to a sink as it happens.

Hook points, each installed on the class itself through the session's ``Patcher`` (an inherited
one is deleted again on undo; one the user replaced or deleted meanwhile stays as they made it),
each where the engine names it (``recording/engines.Engine``): ``__init__`` (the children as the
``Shape`` says they are passed, in argument order: micrograd's ``_children``, as ``_prev`` is a
set), the engine's ``pass_start`` (``backward``: start and end of a pass), its ``grad_write``
and ``local_backward`` (data descriptors, ``descriptors.py``: micrograd's ``grad`` and
``_backward``). The wrappers call the callbacks on whatever ``active`` holds in the calling
context (``contextvars``, set by the session: another thread, or a task made before, runs
unhooked): None (a plain pass-through), one recorder, or a fan-out of several, each behind its
guard. Inside a callback the hooks are quiet: a recorder reads plain values and what it does is
not recorded. The state of a running ``backward()`` is per thread (it never awaits).

Writes into ``.grad`` are seen only inside a hooked ``backward()`` (not in ``__init__``, not a
``zero_grad`` loop, not a ``_backward()`` called by hand outside ``backward()``).
"""

import functools
import inspect
import threading
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Protocol

from ..patching import NOTSET, original_of
from .descriptors import MISSING, BackwardDescriptor, GradDescriptor, Storage
from .tracked import accumulation, plain, trackable


class Callbacks(Protocol):
    """What a hooked class tells, in the order it happens, to a sink (a recorder, or the object given to
    ``attach``). ``node`` arguments are the live values."""

    def node_created(self, node, children: tuple, op: str, data) -> None:
        """``__init__`` returned: ``children`` as passed in ``_children`` (``x*x``: ``(x, x)``;
        a leaf: ``()``), ``op`` the value's ``_op`` (``'+'``, ``'**2'``, ``'tanh'``)."""

    def backward_started(self, end) -> None:
        """``end.backward()`` was called (``end``: the value a pass starts from, autograd's word)."""

    def seeded(self, end, previous, value) -> None:
        """``backward()`` wrote ``end.grad = value`` outside any ``_backward``: the seed."""

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

    def backward_ended(self, end, error) -> None:
        """``end.backward()`` returned, or raised ``error`` (else None)."""


Sink = Callbacks  # the public name: what ``attach(cls, sink)``'s sink implements


class HookError(RuntimeError):
    """The class cannot be hooked now (a subclass or base class of it is hooked)."""


@dataclass(frozen=True)
class Shape:
    """What the hooks need to know about a value class beyond the engine's hook sites: how its
    ``__init__`` is given a value's children."""
    cls: type
    children: str            # the name of __init__'s children parameter
    children_index: object   # its index among the arguments after self, None if keyword-only
    children_default: object


class ClassHooks:
    """The hooks of ``engine`` (``recording/engines.Engine``): at its ``pass_start``, ``local_backward``
    and ``grad_write``, on its ``cls``, configured by its ``shape``."""

    def __init__(self, engine):
        self.engine, self.cls, self.shape = engine, engine.cls, engine.shape
        self.active = ContextVar(f"adtrace_{engine.name}_{self.cls.__qualname__}", default=None)
        self.local = _ThreadState()
        self.children = {}  # id(node) -> (node, children); keeps the nodes alive, so ids stay unique
        self.grad = Storage(*engine.grad_write)

    def install(self, patcher):
        """Put every hook on the class, or none (a failure undoes what was put); ``patcher.undo()``
        restores the class: its ``__dict__`` entries are the very objects they were, instances keep
        plain numbers and their own closures."""
        cls, engine = self.cls, self.engine
        init, backward = original_of(cls.__init__), original_of(inspect.getattr_static(*engine.pass_start))
        hooks = [
            ((cls, "__init__"), self._wrap_init(init), init),
            (engine.pass_start, self._wrap_backward(backward), backward),
            (engine.grad_write, GradDescriptor(self, self.grad), NOTSET),
            (engine.local_backward, BackwardDescriptor(self, Storage(*engine.local_backward)), NOTSET),
        ]
        patcher.on_undo(self.children.clear)
        with patcher.transaction():
            for (owner, name), hook, original in hooks:
                # (a hook of an earlier installation put back by someone's undo: the original goes back)
                restore = original if hasattr(vars(owner).get(name), "__adtrace_hook__") else NOTSET
                patcher.setattr(owner, name, hook, restore=restore, raising=False)

    # ---- wrappers

    def _wrap_init(self, original):
        hooks, name, index, default = self, self.shape.children, self.shape.children_index, self.shape.children_default

        @functools.wraps(original)
        def __init__(node, *args, **kwargs):
            if not hooks.listening():
                return original(node, *args, **kwargs)
            positional = index is not None and len(args) > index
            children = args[index] if positional else kwargs.get(name, default)
            if _is_iterator(children):  # read once: the engine gets the same children as a tuple
                children = tuple(children)
                if positional:
                    args = args[:index] + (children,) + args[index + 1:]
                else:
                    kwargs[name] = children
            original(node, *args, **kwargs)
            hooks.node_created(node, tuple(children))

        __init__.__adtrace_hook__ = "__init__"
        return __init__

    def _wrap_backward(self, original):
        hooks = self

        @functools.wraps(original)
        def backward(end, *args, **kwargs):
            if not hooks.listening():
                return original(end, *args, **kwargs)
            state, error = hooks.local, None
            hooks.notify("backward_started", end)
            state.ends.append(end)
            try:
                return original(end, *args, **kwargs)
            except BaseException as exc:
                error = exc
                raise
            finally:
                state.ends.pop()
                state.addition = None
                hooks.notify("backward_ended", end, error)
                error = None  # no cycle through this frame's traceback

        backward.__adtrace_hook__ = "backward"
        return backward

    def recorded_local_backward(self, node, closure):
        """``node._backward`` as ``backward()`` reads it: the closure, its call told to the sinks."""
        hooks = self

        def recorded(*args, **kwargs):
            state, error = hooks.local, None
            if state.quiet:
                return closure(*args, **kwargs)
            hooks.notify("local_backward_started", node, hooks.grad.load_or_missing(node))
            entry = hooks.children.get(id(node))
            state.frames.append(_Frame(node, entry[1] if entry and entry[0] is node else None))
            state.addition = None
            try:
                return plain(closure(*args, **kwargs))
            except BaseException as exc:
                error = exc
                raise
            finally:
                state.frames.pop()
                state.addition = None
                hooks.notify("local_backward_ended", node, error)
                error = None

        recorded.__wrapped__ = closure
        return recorded

    # ---- what happened, told to the sinks

    def listening(self):
        return self.active.get() is not None and not self.local.quiet

    def node_created(self, node, children):
        self.children[id(node)] = (node, children)
        self.notify("node_created", node, children, getattr(node, "_op", None), getattr(node, "data", None))

    def grad_written(self, target, previous, result, addition):
        state = self.local
        if not state.frames:
            if target is state.ends[-1]:
                self.notify("seeded", target, previous, result)
            else:
                self.notify("grad_written", None, target, None, previous, None, result, None)
            return
        frame = state.frames[-1]
        added = accumulation(addition, target, previous, result)
        if added is not None:
            contribution, accumulated = added[0], True
        elif trackable(previous) or previous is MISSING:  # read tracked: no addition noted, so none made
            contribution, accumulated = result, False
        else:
            contribution, accumulated = None, None
        self.notify("grad_written", frame.node, target, frame.position(target), previous, contribution,
                    result, accumulated)

    def notify(self, callback, *args):
        sink = self.active.get()
        if sink is None:
            return
        state = self.local
        state.quiet += 1
        try:
            getattr(sink, callback)(*args)
        finally:
            state.quiet -= 1


def _is_iterator(children):
    try:
        return iter(children) is children
    except TypeError:
        return False


class _ThreadState(threading.local):
    def __init__(self):
        self.ends = []        # values whose hooked backward() runs, innermost last
        self.frames = []      # a _Frame per running _backward, innermost last
        self.addition = None  # the last addition of a tracked number: (sum, left, right)
        self.quiet = 0        # > 0 while a sink is called


class _Frame:
    """A running ``_backward``: its value and which child positions it has not written yet."""
    __slots__ = ("node", "children", "unwritten")

    def __init__(self, node, children):
        self.node, self.children = node, children
        self.unwritten = list(range(len(children))) if children else []

    def position(self, target):
        for position in self.unwritten:
            if self.children[position] is target:
                self.unwritten.remove(position)
                return position
        return None

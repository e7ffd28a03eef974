"""One class's hooks: installed and restored exactly, and the calls they turn into sink callbacks.

The wrappers call the ``Sink`` callbacks on whatever ``active`` holds in the calling context
(``contextvars``: a thread, an asyncio task): None (a plain pass-through), or one object with the
callbacks (a sink, or one standing for several). That object must not raise: ``attach`` gives it
sinks behind a guard. The state of a running ``backward()`` is per thread (it never awaits).
"""

import functools
import inspect
import threading
from contextvars import ContextVar

from ..patching import NOTSET, Patcher
from .descriptors import MISSING, BackwardDescriptor, GradDescriptor, Storage
from .tracked import accumulation, plain, trackable


class ClassHooks:
    def __init__(self, shape):
        self.cls, self.shape = shape.cls, shape
        self.active = ContextVar(f"adtrace_micrograd_{self.cls.__qualname__}", default=None)
        self.local = _ThreadState()
        self.children = {}  # id(node) -> (node, children); keeps the nodes alive, so ids stay unique
        self.grad = Storage(self.cls, "grad")
        self._patcher = Patcher()

    # ---- installing and restoring

    def install(self):
        """Put every hook on the class, or none (a failure restores what was put)."""
        cls = self.cls
        init, backward = _original(cls.__init__), _original(inspect.getattr_static(cls, "backward"))
        hooks = {
            "__init__": (self._wrap_init(init), init),
            "backward": (self._wrap_backward(backward), backward),
            "grad": (GradDescriptor(self, self.grad), NOTSET),
            "_backward": (BackwardDescriptor(self, Storage(cls, "_backward")), NOTSET),
        }
        with self._patcher.transaction():
            for name, (hook, original) in hooks.items():
                # (a hook of an earlier installation put back by someone's undo: the original goes back)
                restore = original if hasattr(vars(cls).get(name), "__adtrace_hook__") else NOTSET
                self._patcher.setattr(cls, name, hook, restore=restore, raising=False)

    def restore(self):
        """Put back every entry still ours (idempotent); returns the names someone else replaced
        or deleted meanwhile, left as they made them."""
        replaced = self._patcher.undo()
        self.children.clear()
        return replaced

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
        def backward(root, *args, **kwargs):
            if not hooks.listening():
                return original(root, *args, **kwargs)
            state, error = hooks.local, None
            hooks.notify("backward_started", root)
            state.roots.append(root)
            try:
                return original(root, *args, **kwargs)
            except BaseException as exc:
                error = exc
                raise
            finally:
                state.roots.pop()
                state.addition = None
                hooks.notify("backward_ended", root, error)
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
            if target is state.roots[-1]:
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


def _original(function):
    """``function`` with every wrapper of ours around it taken off (one put back after its
    installation was undone calls the original, recording nothing)."""
    while hasattr(function, "__adtrace_hook__"):
        function = function.__wrapped__
    return function


def _is_iterator(children):
    try:
        return iter(children) is children
    except TypeError:
        return False


class _ThreadState(threading.local):
    def __init__(self):
        self.roots = []       # values whose hooked backward() runs, innermost last
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

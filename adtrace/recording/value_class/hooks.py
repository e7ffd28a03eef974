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
from collections.abc import Set as AbstractSet
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Protocol

from .. import compiled
from ..patching import NOTSET, original_of
from . import deferred
from .descriptors import MISSING, BackwardDescriptor, EdgesDescriptor, GradDescriptor, RecordedLocalBackward, Storage
from .tracked import accumulation, detach_all, held, plain

_twin = compiled.twin("adtrace.recording.value_class._hooks")  # (InitHook, LocalBackwardRunner), or None


class Callbacks(Protocol):
    """What a hooked class tells, in the order it happens, to a sink (a recorder, or the object given to
    ``attach``). ``node`` arguments are the live values."""

    def node_created(self, node, children: tuple, op: str, data) -> None:
        """``__init__`` returned: ``children`` as passed in ``_children`` (``x*x``: ``(x, x)``;
        a leaf: ``()``), ``op`` the value's ``_op`` (``'+'``, ``'**2'``, ``'tanh'``). Children given as a
        set are put in argument order where the op's forward decides it (``Shape.order``), else come
        as an ``Unordered`` tuple: the order is lost."""

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
        hooks. ``accumulated``: True for ``grad += c``, ``grad = c + grad`` or ``grad -= c`` of an int,
        float or ndarray ``.grad`` (``result`` is ``previous + c``, ``contribution`` is ``c``, or ``-c``,
        exactly; ``tracked.py``; an ndarray's ``+=`` or ``np.add(grad, c, out=grad)`` in place:
        ``result`` is ``previous``), and for a write into a ``.grad`` holding None or unset
        (``contribution`` is ``result``: nothing there to drop), False for
        an assignment that replaces (``grad = c``, ``contribution`` is ``c``: the ``_backward`` never
        read the target's ``.grad``, so the value written cannot hold it), None when unknown (read,
        then written otherwise: ``grad = grad * 1 + c``, a float32's ``+=``; into the array in place
        without ``.grad =``: ``grad[i] += c``, ``grad[:] = c``, ``np.add.at``, another ufunc's ``out=``;
        a write by ``backward()`` itself): then ``contribution`` is None.
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
    """What the hooks need to know about a value class: how its ``__init__`` is given a value's
    children, and the attributes holding each value's data, gradient, local backward and op, and
    the pass's method (micrograd's names unless the class was declared otherwise)."""
    cls: type
    children: str            # the name of __init__'s children parameter
    children_index: object   # its index among the arguments after self, None if keyword-only
    children_default: object
    data: str = "data"
    grad: str = "grad"
    local_backward: str = "_backward"
    backward: str = "backward"
    op: str = "_op"
    edges: object = None          # the edge style: the attribute holding (value, local derivative) pairs
    visits: frozenset = frozenset()  # (file, line) of backward()'s loops over them: a read there is a visit
    order: object = None  # order(op, data, a, b): a set's two children in argument order, or None (not known)


class ClassHooks:
    """The hooks of ``engine`` (``recording/engines.Engine``): at its ``pass_start``, ``local_backward``
    and ``grad_write``, on its ``cls``, configured by its ``shape``."""

    def __init__(self, engine):
        self.engine, self.cls, self.shape = engine, engine.cls, engine.shape
        self.active = ContextVar(f"adtrace_{engine.name}_{self.cls.__qualname__}", default=None)
        self.local = _PerThread(self.written_in_place)  # .state: this thread's _ThreadState
        self.children = {}  # id(node) -> its children, each node kept alive in made: ids stay unique
        self.made = []  # (a list, not a (node, children) pair per node: no object more per value for the collector)
        self.grad = Storage(*engine.grad_write)
        # its name if values keep .grad only in their own __dict__ (if any), else None: read on every visit
        self.own_grad = self.grad.name if self.grad.slot is None and self.grad.fallback is MISSING else None
        if _twin is not None:  # (run_local_backward compiled: this instance's own, read by BackwardDescriptor)
            self.run_local_backward = _twin.LocalBackwardRunner(
                self.run_local_backward, self.active, self.local, self.children, self.own_grad,
                self.grad.load_or_missing, MISSING, _Frame, plain)

    def install(self, patcher, rewritten=None):
        """Put every hook on the class, or none (a failure undoes what was put); ``patcher.undo()``
        restores the class: its ``__dict__`` entries are the very objects they were, instances keep
        plain numbers and their own closures. ``rewritten``: the class's methods recompiled
        (``rewrite.py``), whose calls write a deferred log (``deferred.py``) instead of the descriptors."""
        cls, engine = self.cls, self.engine
        init, backward = original_of(cls.__init__), original_of(inspect.getattr_static(*engine.pass_start))
        if rewritten is not None:
            hooks = self._deferred_hooks(init, rewritten, patcher)
        else:
            local = EdgesDescriptor if self.shape.edges else BackwardDescriptor
            hooks = [
                ((cls, "__init__"), self._wrap_init(init), init),
                (engine.pass_start, self._wrap_backward(backward), backward),
                (engine.grad_write, GradDescriptor(self, self.grad), NOTSET),
                (engine.local_backward, local(self, Storage(*engine.local_backward)), NOTSET),
            ]
        patcher.on_undo(self.children.clear)
        patcher.on_undo(self.made.clear)
        # (compiled: each C hook keeps the sink's callbacks it read, once per sink: let go with the hooks)
        for hook in (self.run_local_backward, *(hook for _, hook, _ in hooks)):
            forget = getattr(type(hook), "forget", None)
            if forget is not None:
                patcher.on_undo(functools.partial(forget, hook))
        with patcher.transaction():
            for (owner, name), hook, original in hooks:
                # (a hook of an earlier installation put back by someone's undo: the original goes back)
                restore = original if hasattr(vars(owner).get(name), "__adtrace_hook__") else NOTSET
                patcher.setattr(owner, name, hook, restore=restore, raising=False)

    def _deferred_hooks(self, init, rewritten, patcher):
        """The hooks of a recompiled class: its recompiled methods, calling the helpers (``deferred.py``), and
        ``__init__`` and ``backward()`` wrapped to write the log."""
        cls, shape = self.cls, self.shape
        bound, installed, namespace = deferred.helpers(self, rewritten)
        patcher.on_undo(functools.partial(setattr, installed, "local", None))  # (the logs go with their recordings)
        hooks = []
        for name, function in bound.functions.items():
            base = original_of(inspect.getattr_static(cls, name))
            if name == shape.backward:
                function = functools.update_wrapper(namespace["make_backward"](function), base)
                function.__adtrace_hook__ = "backward"
            else:
                function.__wrapped__, function.__adtrace_hook__ = base, name
            hooks.append(((cls, name), function, base if name in vars(cls) else NOTSET))  # (inherited: deleted on undo)
        wrapped = functools.update_wrapper(namespace["make_init"](
            init, shape.children, shape.children_index, shape.children_default, shape.op, shape.data,
            self._ordered, _is_iterator, _unordered), init)
        wrapped.__adtrace_hook__ = "__init__"
        hooks.append(((cls, "__init__"), wrapped, init))
        return hooks

    # ---- wrappers

    def _wrap_init(self, original):
        hooks, name, index, default = self, self.shape.children, self.shape.children_index, self.shape.children_default
        edges, op_name, data_name = self.shape.edges, self.shape.op, self.shape.data

        @functools.wraps(original)
        def __init__(node, *args, **kwargs):
            if hooks.active.get() is None or hooks.local.state.quiet:  # (not listening(): written out)
                return original(node, *args, **kwargs)
            positional = index is not None and len(args) > index
            children = args[index] if positional else kwargs.get(name, default)
            if type(children) is not tuple and _is_iterator(children):  # read once: the engine gets them as a tuple
                children = tuple(children)
                if positional:
                    args = args[:index] + (children,) + args[index + 1:]
                else:
                    kwargs[name] = children
            original(node, *args, **kwargs)
            if edges:
                children = tuple(pair[0] for pair in children)
            if type(children) is not tuple:
                return hooks.node_created(node, tuple(children), _unordered(children))
            # (hooks.node_created, written out for a tuple's children: micrograd's (self, other); once per value made)
            op, data = getattr(node, op_name, ""), getattr(node, data_name, None)
            hooks.children[id(node)] = children
            hooks.made.append(node)
            sink = hooks.active.get()
            if sink is not None:
                state = hooks.local.state
                state.quiet += 1
                try:
                    sink.node_created(node, children, op, data)
                finally:
                    state.quiet -= 1

        __init__.__adtrace_hook__ = "__init__"
        if _twin is None or edges:
            return __init__
        # compiled: children given as a tuple done in C, any other case handed to the __init__ above
        hook = functools.update_wrapper(_twin.InitHook(original, __init__, self.active, self.local, self.children,
                                                       self.made, name, index, default, op_name, data_name), original)
        hook.__adtrace_hook__ = "__init__"
        return hook

    def _wrap_backward(self, original):
        hooks = self

        @functools.wraps(original)
        def backward(end, *args, **kwargs):
            if not hooks.listening():
                return original(end, *args, **kwargs)
            state, error = hooks.local.state, None
            hooks.notify("backward_started", end)
            state.ends.append(end)
            state.bare.append({})
            state.edge_visits.append(None)
            try:
                return original(end, *args, **kwargs)
            except BaseException as exc:
                error = exc
                raise
            finally:
                hooks.edge_visit_ended(error)
                state.ends.pop()
                state.bare.pop()
                state.edge_visits.pop()
                state.addition = state.in_place = None
                hooks.notify("backward_ended", end, error)
                error = None  # no cycle through this frame's traceback

        backward.__adtrace_hook__ = "backward"
        return backward

    def recorded_local_backward(self, node, closure):
        """``node._backward`` as ``backward()`` reads it: the closure, its call told to the sinks."""
        return RecordedLocalBackward(self.run_local_backward, node, closure)

    def run_local_backward(self, node, closure, /, *args, **kwargs):  # (/: a _backward's own node= keyword passes)
        """A call of ``node._backward`` read by ``backward()``: ``closure`` run, told to the sinks."""
        state, error = self.local.state, None
        if state.quiet:
            return closure(*args, **kwargs)
        sink = self.active.get()
        if sink is not None:  # (notify, written out on the hot path: one call per callback)
            try:  # (self.grad.load_or_missing, written out for a value's own entry)
                grad = node.__dict__.get(self.own_grad, MISSING) if self.own_grad else self.grad.load_or_missing(node)
            except AttributeError:  # (no __dict__)
                grad = MISSING
            state.quiet += 1
            try:
                sink.local_backward_started(node, grad)
            finally:
                state.quiet -= 1
        state.frames.append(_Frame(node, self.children.get(id(node))))
        state.addition = state.in_place = None
        try:
            result = closure(*args, **kwargs) if args or kwargs else closure()
            return result if result is None else plain(result)
        except BaseException as exc:
            error = exc
            raise
        finally:
            frame = state.frames.pop()
            if state.frames:  # (a _backward called from another's: what it read, its caller read)
                state.frames[-1].took(frame)
            else:
                detach_all(frame.handed)
            state.addition = state.in_place = None
            sink = self.active.get()
            if sink is not None:  # (notify, written out)
                state.quiet += 1
                try:
                    sink.local_backward_ended(node, error)
                finally:
                    state.quiet -= 1
            error = None

    def no_local_backward(self, node):
        """``backward()`` read ``node._backward`` and found none (a leaf's None, or no attribute): the
        visit of a value with nothing to propagate, told once per pass as micrograd's no-op closure's is."""
        state = self.local.state
        if state.frames or id(node) in state.bare[-1]:
            return
        state.bare[-1][id(node)] = node
        self.notify("local_backward_started", node, self.grad.load_or_missing(node))
        self.notify("local_backward_ended", node, None)

    def edge_visit(self, node):
        """The edge style: ``backward()``'s loop read ``node``'s pairs to multiply along them: the visit of
        ``node`` begins (the one before ends); its writes into ``.grad`` until the next are its own."""
        state = self.local.state
        if state.frames and state.frames[-1] is not state.edge_visits[-1]:
            return  # (read inside a local backward of another kind)
        self.edge_visit_ended(None)
        self.notify("local_backward_started", node, self.grad.load_or_missing(node))
        frame = _Frame(node, self.children.get(id(node)))
        state.frames.append(frame)
        state.edge_visits[-1], state.addition, state.in_place = frame, None, None

    def edge_visit_ended(self, error):
        state = self.local.state
        frame = state.edge_visits[-1] if state.edge_visits else None
        if frame is None or not state.frames or state.frames[-1] is not frame:
            return
        state.frames.pop()
        _hand_back(state, frame)
        state.edge_visits[-1], state.addition, state.in_place = None, None, None
        self.notify("local_backward_ended", frame.node, error)

    # ---- what happened, told to the sinks

    def listening(self):
        return self.active.get() is not None and not self.local.state.quiet

    def node_created(self, node, children, unordered=False):
        """``unordered``: the children came as a set, whose order is not the arguments'."""
        op, data = getattr(node, self.shape.op, ""), getattr(node, self.shape.data, None)  # (no _op: '')
        if unordered:
            self.local.state.quiet += 1  # (the op's forward on the children's data: nothing of it recorded)
            try:
                children = self._ordered(op, data, children)
            finally:
                self.local.state.quiet -= 1
        self.children[id(node)] = tuple(children)
        self.made.append(node)
        sink = self.active.get()
        if sink is not None:  # (notify, written out)
            state = self.local.state
            state.quiet += 1
            try:
                sink.node_created(node, children, op, data)
            finally:
                state.quiet -= 1

    def _ordered(self, op, data, children):
        """A set's children in argument order where the op's forward decides it (a tuple), else in the
        set's order as an ``Unordered`` tuple: the argument order is lost."""
        if len(children) < 2:
            return children
        if len(children) == 2 and self.shape.order is not None:
            first = getattr(children[0], self.shape.data, None)
            ordered = self.shape.order(op, data, first, getattr(children[1], self.shape.data, None))
            if ordered is not None:
                return children if ordered[0] is first else children[::-1]
        return Unordered(children)

    def written_in_place(self, target, array, addition):
        """A tracked array of ``target.grad`` was written into in place (a ufunc's ``out=``, ``+=``,
        ``np.add.at``, an item or slice assigned: ``tracked.py``): a write into ``target.grad`` if
        it still holds ``array`` (``result`` is ``previous``)."""
        state = self.local.state
        if not state.ends or state.quiet or not state.frames or self.grad.load_or_missing(target) is not array:
            return
        state.in_place = array
        self.grad_written(target, array, array, addition, state)

    def grad_written(self, target, previous, result, addition, state):
        """``target.grad`` written (``state``: this thread's, which the caller has read)."""
        if not state.frames:
            if target is state.ends[-1]:
                self.notify("seeded", target, previous, result)
            else:
                self.notify("grad_written", None, target, None, previous, None, result, None)
            return
        frame = state.frames[-1]
        added = None if addition is None or addition[0] is not result else \
            accumulation(addition, target, previous, result)  # (its first test, written out: a write not a sum)
        if added is not None:
            contribution, accumulated = added[0], True
        elif previous is None or previous is MISSING:  # nothing there to drop: the value written is what it adds
            contribution, accumulated = result, True
        elif not frame.has_read(target):  # never read here: the write drops it
            contribution, accumulated = result, False
        else:  # read, and written otherwise than by adding to it (grad = grad * 1 + c, an in-place *=)
            contribution, accumulated = None, None
        position = frame.position(target)
        sink = self.active.get()
        if sink is not None:  # (notify, written out)
            state.quiet += 1
            try:
                sink.grad_written(frame.node, target, position, previous, contribution, result, accumulated)
            finally:
                state.quiet -= 1

    def notify(self, callback, *args):
        sink = self.active.get()
        if sink is None:
            return
        state = self.local.state
        state.quiet += 1
        try:
            getattr(sink, callback)(*args)
        finally:
            state.quiet -= 1


class Unordered(tuple):
    """Children whose argument order is lost (given as a set, and the op's forward does not decide
    it): a tuple in the set's order that says so."""


def _unordered(children):
    """A set, or any other unordered collection (cheap for micrograd's tuple and a list)."""
    kind = type(children)
    return kind is not tuple and kind is not list and isinstance(children, AbstractSet)


def _is_iterator(children):
    if type(children) is tuple or type(children) is list:  # (micrograd's (self, other): no iterator made)
        return False
    try:
        return iter(children) is children
    except TypeError:
        return False


def _hand_back(state, frame):
    """A local backward returned: the tracked values it was handed go to its caller, or are detached."""
    if state.frames:
        state.frames[-1].handed += frame.handed
    else:
        detach_all(frame.handed)


class _PerThread(threading.local):
    """Each thread's own ``_ThreadState``, made in it when it first runs the hooks. The state is a plain
    object: an attribute of a ``threading.local`` subclass costs ~4x a plain one's to read (no specialized
    lookup), and the hooks read the state dozens of times per value."""

    def __init__(self, written):
        self.state = (_ThreadState if _twin is None else _twin.ThreadState)(written)  # (compiled: the same fields)


class _ThreadState:
    """A thread's state of the hooks (the reference: ``_hooks.ThreadState`` is its compiled twin, whose fields the
    compiled hooks and descriptors read directly; ``ends``, ``bare``, ``edge_visits`` and ``frames`` are never
    replaced, ``quiet`` is an int)."""

    def __init__(self, written):
        self.written = written  # told a write into a tracked array (tracked.py)
        self.in_place = None  # the array whose in-place write was last told (its .grad store is the same write)
        self.ends = []        # values whose hooked backward() runs, innermost last
        self.bare = []        # per running backward(): id -> value found without a local backward
        self.edge_visits = []  # per running backward(): the _Frame of the edge style's visit open, else None
        self.frames = []      # a _Frame per running _backward, innermost last
        self.addition = None  # the last addition of a tracked number: (sum, left, right, sign)
        self.quiet = 0        # > 0 while a sink is called


class _Frame:
    """A running ``_backward``: its value and which child positions it has not written yet (``unwritten``: an
    int whose bit i is set while position i is unwritten: no list per visit, a small int cached by Python)."""
    __slots__ = ("node", "children", "unwritten", "read", "handed")

    def __init__(self, node, children):
        self.node, self.children = node, children
        self.unwritten = (1 << len(children)) - 1 if children else 0
        self.read = None  # a set of the id of each value whose .grad it read untracked (not an int, float or
        # ndarray), made at the first such read (rare: no set per visit)
        self.handed = []  # the tracked values its reads returned (each read of its owner's .grad)

    def has_read(self, value):
        """Whether it read ``value.grad`` (rare: asked of a write that neither adds to it nor finds it empty)."""
        return (self.read is not None and id(value) in self.read) or \
            any(held(tracked, "_owner") is value for tracked in self.handed)

    def position(self, target):
        """The first unwritten position of ``target`` among the children, now written; None if none."""
        unwritten, at = self.unwritten, 0
        while unwritten >> at:
            if unwritten >> at & 1 and self.children[at] is target:
                self.unwritten = unwritten & ~(1 << at)
                return at
            at += 1
        return None

    def took(self, frame):
        """``frame``, a ``_backward`` this one called, returned: what it read and was handed, this one did."""
        if frame.read is not None:
            if self.read is None:
                self.read = set()
            self.read |= frame.read
        self.handed += frame.handed


PythonFrame = _Frame  # the reference
if _twin is not None:  # compiled: the same class, its fields a C struct (_hooks.Frame) that _hooks.c and _descriptors.c
    # read and write directly (no attribute lookup per visit and per write); its __init__ and methods the reference's
    _Frame = type("_Frame", (_twin.Frame,), {
        "__slots__": (), "__module__": __name__, "__qualname__": "_Frame", "__doc__": _Frame.__doc__,
        **{name: vars(_Frame)[name] for name in ("__init__", "has_read", "position", "took")}})

"""Tracked numbers and arrays: what reading ``.grad`` gives inside a recorded ``_backward``.

A closure's ``self.grad += c`` reads ``self.grad``, adds ``c`` and stores the sum. The store alone
shows the previous value and the result, not ``c`` (``result - previous`` rounds). So while a
recorded ``_backward`` runs, reading the ``.grad`` of an ``int`` or ``float`` returns a tracked copy
of that number: its ``+`` notes the addition (the sum and both operands) on the thread's state and
returns the plain sum, and its ``-`` (``grad - c``, ``grad -= c``) notes the subtraction, whose
contribution is ``-c`` (exact: ``p - c`` is ``p + (-c)`` in IEEE arithmetic). Every operator,
comparison and numpy ufunc of a tracked number is computed on the plain operands by the same
operator, so the result is bit for bit and type for type what the engine computes without recording
(numpy's promotion sees a plain Python number, a "weak" scalar).

A ``numpy.float64`` (a ``float``: data taken from numpy arrays) is tracked by ``TrackedFloat64``, a
subclass of ``np.float64`` (``isinstance`` of ``np.floating``, its own methods: ``.conjugate()``,
``.dtype``), its operators those of a tracked number. An exact ``ndarray`` is read as a
``TrackedArray`` view of it, whose ufuncs do the same on the plain arrays (``grad += c`` updates the
array itself in place, as unrecorded) and whose every method and property is the plain array's: what
is derived from it (``.T``, ``.repeat(2)``, ``.real``, a slice) is a plain ndarray. Other ``.grad``
values (other numpy scalars, ``Fraction``, ``bool``, an ndarray subclass) are returned as they are.
What cannot be made the same: a tracked value is ``isinstance`` of int, float, float64 or ndarray but
``type(g)`` is its tracked class (``type(g) is np.ndarray`` is False), and ``np.asanyarray(g)`` (which
passes any ndarray subclass through) is ``g`` itself; ``g.resize`` to a new size is refused as numpy
refuses it for an array a view refers to, even with ``refcheck=False`` (moved, the view would read freed
memory), while setting ``g.shape``, ``.dtype`` or ``.strides`` sets the plain array's and the view's. It
unwraps itself when stored into ``.grad`` or pickled, and when its ``_backward`` returns it is detached
(``detach``: no owner, no state): one the closure kept elsewhere keeps no graph alive and notes nothing.
An accumulation is seen when the value written is ``grad + c``, ``c + grad`` or ``grad - c``
(``+=``, ``-=``, ``np.add(grad, c, out=grad)`` included); written another way after reading ``.grad``
(``grad = sum([grad, c])``, ``grad = grad * 1 + c``, ``grad = c - grad``, a float32's ``+=``) it is
not known (``hooks.py``: only a ``.grad`` the ``_backward`` never read is known to be replaced). A
write into a tracked array without ``.grad =`` (a ufunc's ``out=``, ``np.add.at``, an item or slice
assigned, ``.fill``, ``np.copyto``) is told to the state's ``written`` as it happens: a write into the owner's
``.grad``, not known unless it is one of those additions. A write through a view derived from it
(``grad.T[...] = c``, ``grad[0][...] = c``) is not seen.
"""

import operator
import types
import warnings

import numpy as np

from .. import compiled


class Tracked:
    """The number ``owner.grad`` held when it was read (``plain``); ``state`` gets the additions. Its own
    attributes ``_plain``, ``_owner``, ``_state`` are slots (``TrackedFloat``: no ``__dict__`` made per read,
    one object less for the collector) or ``__dict__`` entries (an int's subclass cannot have slots); ``held``
    reads either, ``hold`` sets them."""
    __slots__ = ()

    def __add__(self, other):
        if type(other) in UNTRACKED:
            result = operator.add(self._plain, other)
        else:  # (plain, written out for a tracked number: micrograd's grad += out.grad)
            result = operator.add(self._plain, other._plain if type(other) in NUMBER_KINDS else plain(other))
        state = held(self, "_state")
        if state is None:  # (detached: the other operand may note it)
            return _note(self, other, result)
        if not state.quiet:  # (_note, written out: this number is the first operand, with a state)
            state.addition = (result, self, other, "+")
        return result

    def __radd__(self, other):
        return _note(other, self, operator.add(plain(other), self._plain))

    def __sub__(self, other):
        return _note(self, other, operator.sub(self._plain, plain(other)), SUBTRACTED)

    def __rsub__(self, other):  # c - grad: not an accumulation
        return operator.sub(plain(other), self._plain)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        kwargs = _plain_all(kwargs)  # (out=(g,): numpy refuses the plain number; given g, it would call this again)
        result = getattr(ufunc, method)(*map(plain, inputs), **kwargs)  # (np.float32(c) ** g too: as numpy's scalar **)
        if method == "__call__" and len(inputs) == 2 and not kwargs:  # an ndarray or numpy scalar and this number
            if ufunc.__name__ == "add":
                _note(*inputs, result)
            elif ufunc.__name__ == "subtract" and inputs[0] is self:
                _note(*inputs, result, SUBTRACTED)
        return result

    def __array_function__(self, func, types, args, kwargs):  # (np.stack([g, h]): the plain numbers in the list)
        return func(*_plain_all(args), **_plain_all(kwargs))

    def __hash__(self):
        return hash(self._plain)

    def __repr__(self):
        return repr(self._plain)

    def __str__(self):
        return str(self._plain)

    real = property(lambda self: self._plain.real)
    imag = property(lambda self: self._plain.imag)

    def __getattr__(self, name):
        if name == "_plain":  # a number made by type(g)(0): untracked
            return self._kind(self)
        raise AttributeError(name)

    def __setattr__(self, name, value):  # (g.shape = 3, g.foo = 1: the plain number's AttributeError)
        setattr(self._plain, name, value)

    def __delattr__(self, name):
        delattr(self._plain, name)

    def __copy__(self):
        return self._plain

    def __deepcopy__(self, memo):
        return self._plain

    def __reduce__(self):
        return _identity, (self._plain,)


def _binary(function):  # (plain(other) written out for a plain number: a closure's other.data * out.grad)
    def forward(self, other):
        return function(self._plain, other if type(other) in UNTRACKED else plain(other))

    def reflected(self, other):
        return function(other if type(other) in UNTRACKED else plain(other), self._plain)

    return forward, reflected


def _comparison(function):
    return lambda self, other: function(self._plain, plain(other))


def _pow(self, other, modulo=None):
    return pow(self._plain, plain(other)) if modulo is None else pow(self._plain, plain(other), modulo)


def _rpow(self, other, modulo=None):
    return pow(plain(other), self._plain) if modulo is None else pow(plain(other), self._plain, modulo)


for _name, _function in [("mul", operator.mul), ("truediv", operator.truediv),
                         ("floordiv", operator.floordiv), ("mod", operator.mod), ("divmod", divmod),
                         ("matmul", operator.matmul), ("lshift", operator.lshift),
                         ("rshift", operator.rshift), ("and", operator.and_), ("or", operator.or_),
                         ("xor", operator.xor)]:
    _forward, _reflected = _binary(_function)
    setattr(Tracked, f"__{_name}__", _forward)
    setattr(Tracked, f"__r{_name}__", _reflected)
for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    setattr(Tracked, f"__{_name}__", _comparison(getattr(operator, _name)))
for _name in ("neg", "pos", "abs", "round", "trunc", "floor", "ceil"):  # (a float64's give float64s)
    setattr(Tracked, f"__{_name}__", lambda self, *args, _name=_name: getattr(self._plain, f"__{_name}__")(*args))
Tracked.__pow__, Tracked.__rpow__ = _pow, _rpow


class TrackedInt(Tracked, int):
    pass  # (its attributes in its __dict__)


class TrackedFloat(Tracked, float):
    __slots__ = ("_plain", "_owner", "_state")


_SLOTS = {name: getattr(TrackedFloat, name) for name in TrackedFloat.__slots__}  # (member descriptors)


class TrackedArray(np.ndarray):
    """A view of the ndarray ``owner.grad`` held (``plain``): every ufunc (``+``, ``+=``, ``@``) and
    numpy function is computed on the plain arrays and returns what they return; ``+`` and ``-`` are
    noted as a tracked number's. Every ndarray method and property is the plain array's (generated
    below), so what it gives (``.T``, ``.repeat(2)``, ``.real``, a slice) is a plain ndarray. A write
    into it (a ufunc's ``out=``, ``np.add.at``, ``g[i] = c``, ``.fill``) is a write into the owner's
    ``.grad``, told to the state's ``written`` (``hooks.py``)."""

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        if out is not None:
            kwargs["out"] = tuple(map(plain, out))
        result = getattr(ufunc, method)(*map(plain, inputs), **kwargs)
        noted = method == "__call__" and len(inputs) == 2 and (out is None or len(out) == 1) \
            and (ufunc is np.add or ufunc is np.subtract)
        if noted:  # (np.add(g, c, out=g) and g += c: the sum is the out array)
            _note(*inputs, result, SUBTRACTED if ufunc is np.subtract else "+")
        for array in out or ((inputs[0],) if method == "at" else ()):
            _written(array, accumulated=noted)
        return result

    def __array_function__(self, func, types, args, kwargs):
        result = func(*_plain_all(args), **_plain_all(kwargs))
        if func in _WRITING_FUNCTIONS and args:  # (np.copyto(grad, c): a write into its first argument)
            _written(args[0])
        return result

    def __array_wrap__(self, array, context=None, return_scalar=False):
        array = np.asarray(array)
        return array[()] if return_scalar else array

    def __getitem__(self, key):
        return plain(self)[key]

    def __setitem__(self, key, value):
        plain(self)[key] = plain(value)
        _written(self)

    def __reduce__(self):
        return plain(self).__reduce__()

    def __repr__(self):
        return repr(plain(self))

    def __setattr__(self, name, value):  # (a property, .shape: the plain array's; g.foo = 1: its AttributeError)
        if isinstance(getattr(type(self), name, None), property):
            object.__setattr__(self, name, value)
        else:
            setattr(plain(self), name, value)

    def __delattr__(self, name):
        delattr(plain(self), name)

    def resize(self, *new_shape, refcheck=True):
        """The plain array's, and the view's own shape follows; a new size (which moves the memory) is
        refused by numpy as for any array another refers to (this view), whatever ``refcheck`` says: moved,
        the view (what ``np.asarray(g)``, ``memoryview(g)`` read) would hold freed memory."""
        plain(self).resize(*new_shape, refcheck=True)
        np.ndarray.resize(self, *new_shape, refcheck=False)  # (the same size: its memory is not moved)
        _written(self)


def _of_plain(name):
    return lambda self, *args, **kwargs: getattr(plain(self), name)(*args, **kwargs)


def _writing(name):
    def method(self, *args, **kwargs):
        result = getattr(plain(self), name)(*args, **kwargs)
        _written(self)
        return result
    return method


def _property_of_plain(name):
    def set_plain(self, value):
        setattr(plain(self), name, plain(value))
        if name in _LAYOUT:  # (the view's own, which numpy's C code reads: np.asarray(g), memoryview(g), follows)
            with warnings.catch_warnings():  # (numpy's deprecation of setting .strides: told once, by the plain)
                warnings.simplefilter("ignore")
                getattr(np.ndarray, name).__set__(self, plain(value))
    return property(lambda self: getattr(plain(self), name), set_plain)


_LAYOUT = {"shape", "dtype", "strides", "data"}  # (numpy 1.x: setting .data frees the plain's memory)


_WRITING_FUNCTIONS = {np.copyto, np.put, np.place, np.putmask, np.fill_diagonal, np.put_along_axis}
_IN_PLACE = {"fill", "put", "sort", "partition", "setfield", "itemset"}  # (methods that write into it)
for _name, _attribute in vars(np.ndarray).items():
    if _name.startswith("__") or _name in vars(TrackedArray):
        continue
    if isinstance(_attribute, types.GetSetDescriptorType):
        setattr(TrackedArray, _name, _property_of_plain(_name))
    elif callable(_attribute):
        setattr(TrackedArray, _name, (_writing if _name in _IN_PLACE else _of_plain)(_name))
for _name in ("__copy__", "__deepcopy__", "__iter__", "__round__", "__array__"):  # (an ndarray of its own class)
    if hasattr(np.ndarray, _name):  # (numpy's ndarray has no __round__: round(g) raises its TypeError)
        setattr(TrackedArray, _name, _of_plain(_name))

# A float64 is tracked by a subclass of np.float64 (isinstance of np.floating, its methods its own), the
# tracked number's methods in its own namespace: a mixin base before np.float64 crashes numpy's scalar methods.
TrackedFloat64 = type("TrackedFloat64", (np.float64,), {
    **{name: value for name, value in vars(Tracked).items()
       if name not in ("__dict__", "__weakref__", "__doc__", "__slots__")},  # (its attributes in its __dict__)
    "__module__": __name__, "__qualname__": "TrackedFloat64", "_kind": np.float64})
TrackedInt._kind, TrackedFloat._kind = int, float
_NUMBERS = (Tracked, TrackedFloat64)
_ALL = (*_NUMBERS, TrackedArray)  # every tracked kind
NUMBER_KINDS = frozenset({TrackedInt, TrackedFloat, TrackedFloat64})  # (exact types: plain(g) is g._plain)
TRACKED_NUMBER = {int: TrackedInt, float: TrackedFloat, np.float64: TrackedFloat64}  # (by the exact type)
UNTRACKED = frozenset({int, float, type(None)})  # (``plain`` of these is themselves: callers test it first)

# compiled (``_tracked.c``): TrackedFloat's and TrackedInt's +, * and reflected * (a float64's stay these)
_twin = compiled.twin("adtrace.recording.value_class._tracked")
_hooks = compiled.twin("adtrace.recording.value_class._hooks")  # (its ThreadState's fields read directly)
if _twin is not None:
    _twin.install((TrackedFloat, TrackedInt), NUMBER_KINDS, "+", Tracked.__add__, Tracked.__mul__, Tracked.__rmul__,
                  None if _hooks is None else _hooks.ThreadState)
if _hooks is not None:
    _hooks.bind_tracked(TrackedFloat)  # (its slots unset directly when its local backward returns)


def track(value, owner, state):
    """``value`` read from ``owner.grad``: tracked if it is an exact int, float, float64 or ndarray, else itself."""
    kind = TRACKED_NUMBER.get(type(value))
    if kind is not None:
        number = kind(value)
    elif type(value) is np.ndarray:
        number = value.view(TrackedArray)
    else:
        return value
    hold(number, value, owner, state)
    return number


def hold(number, value, owner, state):
    """A tracked value's own attributes set (``_plain``, ``_owner``, ``_state``): its slots, else its ``__dict__``
    entries (set directly: ``number.x = ...`` would set the plain value's, which refuses)."""
    if type(number) is TrackedFloat:
        _SLOTS["_plain"].__set__(number, value)
        _SLOTS["_owner"].__set__(number, owner)
        _SLOTS["_state"].__set__(number, state)
    else:
        attributes = vars(number)
        attributes["_plain"], attributes["_owner"], attributes["_state"] = value, owner, state


def held(value, name, default=None):
    """A tracked value's own attribute ``name`` (its slot or ``__dict__`` entry), ``default`` if unset (not the
    plain value's: no ``__getattr__``)."""
    try:
        return object.__getattribute__(value, name)
    except AttributeError:
        return default


def detach(value):
    """A tracked value's local backward has returned: it forgets its owner and the state (it keeps no
    graph alive, notes nothing, and is its plain value in all but its type)."""
    detach_all((value,))


def detach_all(values):
    """``detach`` each of ``values`` (one call per local backward, not one per value)."""
    for value in values:
        if type(value) is TrackedFloat:  # (its slots unset, as the entries of a __dict__ popped)
            for name in ("_owner", "_state"):
                if held(value, name, NOT_HELD) is not NOT_HELD:
                    _SLOTS[name].__delete__(value)
        else:
            attributes = vars(value)
            attributes.pop("_owner", None)
            attributes.pop("_state", None)


def plain(value):
    if type(value) in UNTRACKED:  # (most values a pass reads and writes: no isinstance)
        return value
    if isinstance(value, _NUMBERS):
        return value._plain
    if isinstance(value, TrackedArray):  # (np.asanyarray(g) is g; a view made by np.ndarray.view has no _plain)
        held = value.__dict__.get("_plain")
        return np.ndarray.view(value, np.ndarray) if held is None else held
    return value


def _plain_all(value):
    if type(value) in (list, tuple):
        return type(value)(map(_plain_all, value))
    if type(value) is dict:
        return {key: _plain_all(item) for key, item in value.items()}
    return plain(value)


def _state_of(value):
    if isinstance(value, _ALL):
        return held(value, "_state")
    return None


def _written(array, accumulated=False):
    """``array`` (a tracked array, or another operand) was written into in place: if it is a tracked
    ``.grad``, its state is told (with the addition noted if ``accumulated`` may hold, else none)."""
    state = _state_of(array)
    if state is None or not isinstance(array, TrackedArray) or state.quiet:
        return
    addition, state.addition = state.addition, None
    written = getattr(state, "written", None)
    if written is not None:
        written(array._owner, plain(array), addition if accumulated else None)


def accumulation(addition, target, previous, result):
    """If ``result`` is the last addition's sum ``previous + c`` (or difference ``previous - c``),
    ``previous`` read from ``target.grad``: ``(c,)`` (``(-c,)``; ``(None,)`` where ``-c`` is not
    exact: numpy integers wrap, or ``c`` shares the memory the sum was written into: ``grad += grad``);
    else None (the write replaced the value: an assignment)."""
    if addition is None or addition[0] is not result:
        return None
    _, left, right, sign = addition
    pairs = ((left, right),) if sign is SUBTRACTED else ((left, right), (right, left))
    for mine, other in pairs:
        if isinstance(mine, _ALL) and held(mine, "_owner") is target \
                and held(mine, "_plain", NOT_HELD) is previous:  # (plain(mine) is previous, written out)
            other = other if type(other) in UNTRACKED else plain(other)
            if result is previous and isinstance(other, np.ndarray) and np.may_share_memory(other, result):
                return (None,)  # (in place: c is now what was written, not what was added)
            return (other,) if sign is not SUBTRACTED else (_negative(other),)
    return None


NOT_HELD = object()  # (a tracked value without its plain one: made by type(g)(0), or np.ndarray.view)
SUBTRACTED = "-"  # the sign of a noted difference ``grad - c``; an addition's is "+"


def _negative(value):
    if getattr(getattr(value, "dtype", None), "kind", "f") in "biu":  # -int8(-128) wraps: not the contribution
        return None
    return -value


def _note(left, right, result, sign="+"):
    for operand in (left, right):
        state = held(operand, "_state") if isinstance(operand, _ALL) else None  # (_state_of, written out)
        if state is not None:
            if not state.quiet:
                state.addition = (result, left, right, sign)
            break
    return result


def _identity(value):
    return value

"""Tracked numbers compute what plain numbers compute (value and type), and note their additions."""

import copy
import operator
import pickle
import subprocess
import sys
import textwrap
from fractions import Fraction

import numpy as np
import pytest

import compiled_twins
from adtrace.recording.value_class.tracked import Tracked, TrackedFloat, accumulation, detach, held, plain, track


class State:
    quiet = 0
    addition = None


class Owner:
    pass


def exact(value):
    if isinstance(value, np.ndarray):
        return ("ndarray", value.dtype.str, value.tobytes())
    return (type(value), repr(value))


def outcome(function, *operands):
    try:
        with np.errstate(all="ignore"):
            return exact(function(*operands))
    except Exception as exc:
        return type(exc)


NUMBERS = [0.1, -3.5, 0.0, -0.0, 3, 0, -7, 2**53 + 1, float("inf"), np.float64(0.1), np.float64(-0.0),
           np.float64(-3.5), np.float64("inf")]
OTHERS = [2, 0.1, True, 1e308, 2**53 + 1, Fraction(1, 3), 1j, np.float16(0.1), np.float32(0.1), np.float64(0.1),
          np.int8(3), np.int64(3), np.uint8(200), np.array([0.1, 2.0], np.float32), np.array([1, 2], np.int8),
          np.array(0.3, np.float32)]
OPERATORS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv, operator.mod,
             operator.pow, divmod, operator.eq, operator.ne, operator.lt, operator.ge, operator.and_,
             operator.lshift]


def _huge(exponent):
    return isinstance(exponent, (int, np.integer)) and abs(int(exponent)) > 64


@pytest.mark.parametrize("number", NUMBERS, ids=repr)
def test_arithmetic_equals_plain_arithmetic_bit_and_type(number):
    differ = []
    for other in OTHERS:
        for function in OPERATORS:
            for operands, tracked in [((number, other), (track(number, Owner(), State()), other)),
                                      ((other, number), (other, track(number, Owner(), State())))]:
                if function in (operator.pow, operator.lshift) and _huge(operands[1]):
                    continue  # 2 ** (2**53 + 1) would not finish
                if outcome(function, *operands) != outcome(function, *tracked):
                    differ.append((function.__name__, operands))
    assert differ == []


@pytest.mark.parametrize("function", [np.tanh, np.exp, lambda g: np.clip(g, -1, 1), lambda g: np.where(True, g, 0),
                                      lambda g: np.maximum(np.float32(0.5), g), abs, round, float, int, hash, str,
                                      lambda g: -g, lambda g: f"{g:.3f}", lambda g: np.asarray(g), repr,
                                      lambda g: round(g, 1), lambda g: +g,
                                      lambda g: g.item() if hasattr(g, "dtype") else 0,
                                      lambda g: getattr(g, "dtype", None)],
                         ids=["tanh", "exp", "clip", "where", "maximum", "abs", "round", "float", "int", "hash",
                              "str", "neg", "format", "asarray", "repr", "round1", "pos", "item", "dtype"])
def test_functions_of_a_tracked_number_equal_plain(function):
    for number in (0.7, 3, np.float64(0.7)):
        assert outcome(function, track(number, Owner(), State())) == outcome(function, number)


def test_only_exact_int_float_float64_and_ndarray_are_tracked():
    for value in (True, np.float32(1.0), np.int64(1), np.ma.masked_array([1.0]), Fraction(1, 2), None):
        assert track(value, Owner(), State()) is value
    for value in (np.float64(1.5), 2**70):
        assert plain(track(value, Owner(), State())) is value
    array = np.array([1.0])
    assert plain(track(array, Owner(), State())) is array
    number = track(1.5, Owner(), State())
    assert isinstance(number, (Tracked, float)) and plain(number) == 1.5 and type(plain(number)) is float


def test_an_addition_is_noted_with_its_operands():
    state, owner = State(), Owner()
    previous, contribution = 1e16, 1e-16
    grad = track(previous, owner, state)
    result = grad + contribution
    assert type(result) is float and result == previous + contribution
    assert state.addition[0] is result
    assert accumulation(state.addition, owner, previous, result) == (contribution,)
    assert accumulation(state.addition, Owner(), previous, result) is None    # another value's grad
    assert accumulation(state.addition, owner, previous, 1e16) is None        # not the sum that was made
    assert accumulation(state.addition, owner, 2.0, result) is None           # not from what .grad held


def test_reflected_and_numpy_additions_are_noted():
    state, owner = State(), Owner()
    contribution = np.float32(0.25)
    result = contribution + track(0.0, owner, state)
    assert exact(result) == exact(contribution + 0.0)
    assert accumulation(state.addition, owner, 0.0, result) is not None
    array = np.array([1.0, 2.0])
    result = array + track(0.5, owner, state)
    assert accumulation(state.addition, owner, 0.5, result)[0] is array


def test_no_note_while_quiet_and_pickling_gives_the_plain_number():
    state = State()
    state.quiet = 1
    number = track(2.5, Owner(), state)
    number + 1.0
    assert state.addition is None
    copy = pickle.loads(pickle.dumps(number))
    assert type(copy) is float and copy == 2.5


def test_a_subtraction_is_noted_with_the_negated_contribution():
    """``grad - c`` (``grad -= c``) adds ``-c``: ``p - c`` is ``p + (-c)`` bit for bit, so ``-c`` is exact."""
    state, owner = State(), Owner()
    for previous, contribution in [(1e16, 1e-16), (0.0, 0.0), (-0.0, 0.0), (3, 5), (0.5, np.float32(0.25)),
                                   (0.5, np.array([1.0, -2.0]))]:
        result = track(previous, owner, state) - contribution
        assert exact(result) == exact(previous - contribution)
        (added,) = accumulation(state.addition, owner, previous, result)
        assert exact(added) == exact(-contribution) and exact(previous + added) == exact(result)
    array = np.array([1.0, 2.0])
    result = np.subtract(track(0.5, owner, state), array)  # numpy's path: the tracked number on the left
    assert exact(accumulation(state.addition, owner, 0.5, result)[0]) == exact(-array)


def test_what_is_subtracted_from_is_not_an_accumulation():
    """``c - grad`` keeps the previous value with the wrong sign: no accumulation, by Python's or numpy's path."""
    state, owner = State(), Owner()
    for result in (2.0 - track(0.5, owner, state), np.float32(2.0) - track(0.5, owner, state),
                   np.array([2.0]) - track(0.5, owner, state)):
        assert accumulation(state.addition, owner, 0.5, result) is None


def test_a_negated_numpy_integer_that_wraps_is_no_contribution():
    """``grad - int8(-128)`` adds 128; ``-int8(-128)`` wraps to -128: the write adds, its contribution not known."""
    state, owner = State(), Owner()
    result = track(0.5, owner, state) - np.int8(-128)
    assert result == 128.5 and accumulation(state.addition, owner, 0.5, result) == (None,)


ARRAY_FUNCTIONS = {
    "add": lambda g: g + np.float32(0.1), "radd": lambda g: 0.1 + g, "sub": lambda g: g - 1, "rsub": lambda g: 1 - g,
    "mul": lambda g: g * np.array([[2.0], [3.0]]), "matmul": lambda g: g @ g.T, "pow": lambda g: g ** 2,
    "neg": lambda g: -g, "sum": lambda g: g.sum(), "sum_axis": lambda g: g.sum(axis=0, keepdims=True),
    "np_sum": lambda g: np.sum(g, axis=1), "mean": lambda g: g.mean(), "max": lambda g: g.max(),
    "T": lambda g: g.T, "reshape": lambda g: g.reshape(-1), "copy": lambda g: g.copy(),
    "astype": lambda g: g.astype(int),
    "index": lambda g: g[0], "item": lambda g: g[0, 1], "slice": lambda g: g[:, 1:], "iter": lambda g: list(g),
    "dot": lambda g: g.dot(g.T), "np_dot": lambda g: np.dot(g, g.T), "outer": lambda g: np.outer(g, g),
    "where": lambda g: np.where(g > 0, g, 0.0), "ones_like": lambda g: np.ones_like(g), "tanh": np.tanh,
    "broadcast": lambda g: g + np.zeros((3, 1, 3)), "concatenate": lambda g: np.concatenate([g, g]),
    "compare": lambda g: g == g, "asarray": np.asarray, "tolist": lambda g: g.tolist(), "repr": repr, "str": str,
    "pickle": lambda g: pickle.loads(pickle.dumps(g)), "clip": lambda g: g.clip(-1, 1), "round": lambda g: g.round(1),
}


def deep(value):
    """What a result is, exactly: its type, and an array's dtype, shape and bytes."""
    if isinstance(value, list):
        return [deep(v) for v in value]
    if isinstance(value, np.ndarray):
        return (type(value), value.dtype.str, value.shape, value.tobytes())
    return (type(value), repr(value))


@pytest.mark.parametrize("name", sorted(ARRAY_FUNCTIONS))
def test_what_is_computed_from_a_tracked_array_equals_plain(name):
    function = ARRAY_FUNCTIONS[name]
    array = np.array([[0.1, -2.0, 3.0], [4.0, 0.5, -0.25]])
    assert deep(function(track(array, Owner(), State()))) == deep(function(array))


def test_additions_to_a_tracked_array_are_noted_in_place_or_not():
    state, owner = State(), Owner()
    array, contribution = np.array([1.0, 2.0]), np.array([0.1, 0.2])
    state.written = lambda *write: writes.append(write)
    writes, grad = [], track(array, owner, state)
    grad += contribution
    assert grad is array and array.tolist() == [1.1, 2.2]  # in place: the array itself, as without tracking
    [(target, written, addition)] = writes  # told as it happens (``g += c`` of a local name assigns no .grad)
    assert target is owner and written is array and accumulation(addition, owner, array, array) == (contribution,)
    del state.written
    for write, added in [(lambda g: g + contribution, contribution), (lambda g: contribution + g, contribution),
                         (lambda g: g - contribution, -contribution),
                         (lambda g: np.add(g, contribution), contribution)]:
        result = write(track(array, owner, state))
        assert type(result) is np.ndarray
        assert exact(accumulation(state.addition, owner, array, result)[0]) == exact(added)
    result = contribution - track(array, owner, state)
    assert accumulation(state.addition, owner, array, result) is None


# every array a tracked array's methods and properties give is a plain ndarray (issue 26 review)
PLAIN_RESULTS = {
    "swapaxes": lambda g: g.swapaxes(0, 1), "diagonal": lambda g: g.diagonal(), "repeat": lambda g: g.repeat(2),
    "real": lambda g: g.real, "imag": lambda g: g.imag, "conj": lambda g: g.conj(),
    "argsort": lambda g: g.argsort(), "take": lambda g: g.take([0, 1]),
    "compress": lambda g: g.compress([True, False], axis=0), "cumsum": lambda g: g.cumsum(),
    "clip": lambda g: g.clip(0), "nonzero": lambda g: g.nonzero()[0], "squeeze": lambda g: g[None].squeeze(),
    "view": lambda g: g.view(np.int64), "newaxis": lambda g: g[None], "flat": lambda g: g.flat[:2],
    "abs": abs, "neg": lambda g: -g, "iter": lambda g: next(iter(g)), "copy": lambda g: copy.deepcopy(g),
}


if hasattr(np.ndarray, "mT"):  # (numpy 2)
    PLAIN_RESULTS["mT"] = lambda g: g.mT


@pytest.mark.parametrize("name", sorted(PLAIN_RESULTS))
def test_an_array_derived_from_a_tracked_array_is_plain(name):
    array = np.array([[0.1, -2.0, 3.0], [4.0, 0.5, -0.25]])
    result = PLAIN_RESULTS[name](track(array, Owner(), State()))
    assert deep(result) == deep(PLAIN_RESULTS[name](array)) and type(result) is np.ndarray


def test_a_tracked_array_reads_as_its_plain_array():
    """Flags, base and data are the plain array's (the view's own would say it does not own its data);
    only its type and ``np.asanyarray`` (it passes an ndarray subclass through) tell it apart."""
    array = np.array([1.0, 2.0])
    grad = track(array, Owner(), State())
    assert grad.base is None and grad.flags.owndata and grad.ctypes.data == array.ctypes.data
    assert np.asanyarray(grad) is grad and type(grad) is not np.ndarray  # (what cannot be made the same)


def test_a_tracked_float64_is_a_numpy_float64():
    """isinstance of np.float64, np.floating and np.generic; its methods give float64s; ``type(g)(0)``
    (a new number of its class) is a working number, untracked."""
    grad = track(np.float64(-1.25), Owner(), State())
    assert isinstance(grad, np.float64) and isinstance(grad, np.floating) and isinstance(grad, np.generic)
    assert isinstance(grad, float) and np.isscalar(grad)
    for function in (lambda g: g.conjugate(), lambda g: g.real, lambda g: copy.copy(g), lambda g: g.astype(float),
                     lambda g: g.item(), lambda g: round(g, 2), lambda g: g.as_integer_ratio()):
        assert exact(function(grad)) == exact(function(np.float64(-1.25)))
    for value in (np.float64(-1.25), -1.25, 3):
        made = type(track(value, Owner(), State()))(0)
        assert repr(made) == repr(type(value)(0)) and exact(made + 1.0) == exact(type(value)(0) + 1.0)


def test_a_detached_value_is_no_longer_tracked():
    """After its local backward a tracked value holds neither its owner nor the state: it keeps no
    graph alive and notes nothing."""
    for value in (0.5, 3, np.float64(0.5), np.array([1.0, 2.0])):
        state = State()
        grad = track(value, Owner(), state)
        detach(grad)
        assert held(grad, "_owner", "unset") == held(grad, "_state", "unset") == "unset"
        result = grad + 1
        assert state.addition is None and exact(result) == exact(value + 1)


@pytest.mark.parametrize("write, accumulates", [
    (lambda g, c: np.add(g, c, out=g), True), (lambda g, c: np.add(c, g, out=g), True),
    (lambda g, c: np.subtract(g, c, out=g), True), (lambda g, c: np.subtract(c, g, out=g), False),
    (lambda g, c: np.multiply(g, c, out=g), False), (lambda g, c: np.add(c, c, out=g), False),
    (lambda g, c: g.__setitem__(slice(None), c), False), (lambda g, c: np.add.at(g, [0, 0], c[0]), False),
    (lambda g, c: g.__setitem__(0, g[0] + c[0]), False), (lambda g, c: g.fill(0.0), False),
    (lambda g, c: np.copyto(g, c), False), (lambda g, c: np.put(g, [1], c[0]), False),
], ids=["add", "radd", "sub", "rsub", "mul", "other", "slice", "add_at", "item", "fill", "copyto", "put"])
def test_a_write_into_a_tracked_array_is_told_an_addition_only_when_it_adds(write, accumulates):
    """The out array of a ufunc, ``np.add.at``, an item or a slice assigned: a write into ``.grad``,
    told once; an accumulation only where the out array is ``grad + c`` (or ``c + grad``, ``grad - c``)."""
    state, owner, array, contribution = State(), Owner(), np.array([1.0, 2.0]), np.array([0.5, 0.25])
    expected = array.copy()
    write(expected, contribution)
    writes = []
    state.written = lambda *told: writes.append(told)
    write(track(array, owner, state), contribution)
    [(target, written, addition)] = writes
    assert target is owner and written is array and exact(array) == exact(expected)
    assert (accumulation(addition, owner, array, array) is not None) is accumulates


def test_an_in_place_addition_of_its_own_memory_adds_an_unknown_contribution():
    """``grad += grad`` (or a view of it): once written, ``c`` holds the sum, not what was added."""
    for write in (lambda g: g.__iadd__(g), lambda g: np.add(g, g[::-1], out=g)):
        state, owner, array = State(), Owner(), np.array([1.0, 2.0])
        writes = []
        state.written = lambda *told: writes.append(told)
        write(track(array, owner, state))
        [(_, written, addition)] = writes
        assert accumulation(addition, owner, array, array) == (None,)


CHILD = """
import numpy as np
from adtrace.recording.value_class.tracked import held, track
class State:
    quiet = 0
    addition = None
class Owner:
    pass
"""


def in_child(code):
    """The lines ``code`` prints, run in a new interpreter: a crash there (a segfault) fails the test, not pytest."""
    child = subprocess.run([sys.executable, "-c", CHILD + textwrap.dedent(code)], capture_output=True, text=True,
                           timeout=300)
    assert child.returncode == 0, child.stderr[-3000:]
    return child.stdout.splitlines()


@pytest.mark.parametrize("change, refused", [
    ("g.resize((2 * N,), refcheck=False)", True), ("g.resize((2 * N,))", False), ("g.resize((N // 2, 2))", False),
    ("g.resize(N // 2, 2, refcheck=False)", False), ("g.shape = (2, -1)", False), ("g.dtype = np.int32", False),
    ("g.shape = (N // 2, 2); g.strides = (8, 16)", False)])
def test_a_tracked_array_changed_in_shape_or_size_is_read_as_its_plain_array(change, refused):
    """After ``resize``, ``.shape =``, ``.dtype =`` what numpy's C code reads of the view (``np.asarray(g)``,
    ``memoryview(g)``, ``np.array([g])``) is the plain array, as changed without tracking; a resize that
    would move its memory (a new size) is refused, as numpy refuses it for an array another refers to."""
    lines = in_child(f"""
        import warnings
        warnings.simplefilter("ignore")
        N = 4_000_000  # (big: its memory, once freed, is given back to the system, and a read of it crashes)
        for g in (np.ones(N), track(np.ones(N), Owner(), State())):
            plain = held(g, "_plain") if type(g) is not np.ndarray else g
            try:
                {change}
                print("changed")
            except ValueError as exc:
                print("refused", str(exc).splitlines()[0])
            for seen in (np.asarray(g), np.array([g])[0], np.asarray(memoryview(g))):
                print(seen.shape, seen.dtype, seen.strides, seen.tobytes() == plain.tobytes())
            print(np.asarray(g).ctypes.data == plain.ctypes.data, g.shape, g.dtype, g.strides)
        """)
    unrecorded, recorded = lines[:len(lines) // 2], lines[len(lines) // 2:]
    assert all(line.endswith("True") for line in lines if line.startswith("("))
    if refused:  # (as it was: (N,) float64)
        assert unrecorded[0] == "changed" and recorded[1:] == [line.replace("(8000000,)", "(4000000,)")
                                                               for line in unrecorded[1:]]
        assert recorded[0].startswith("refused cannot resize an array that references or is referenced")
    else:
        assert recorded == unrecorded


def outcomes_in_child(expressions, values):
    """Where an expression of ``expressions`` of ``g`` gives (type and repr, or the exception's type) another
    outcome tracked than plain, for each of ``values`` (the source of a tuple), computed in a new interpreter."""
    lines = in_child(f"""
        import warnings
        warnings.simplefilter("ignore")
        def outcome(expression, g):
            try:
                with np.errstate(all="ignore"):
                    result = eval(expression)
            except Exception as exc:
                return type(exc).__name__
            if isinstance(result, np.ndarray):
                return (type(result).__name__, result.dtype.str, result.shape, result.tobytes())
            return (type(result).__name__, repr(result))
        for value in {values}:
            for expression in {expressions!r}:
                unrecorded, recorded = outcome(expression, value), outcome(expression, track(value, Owner(), State()))
                print(unrecorded == recorded, repr(value), expression, unrecorded, recorded)
        """)
    assert lines
    return [line for line in lines if not line.startswith("True ")]


@pytest.mark.parametrize("expression", ["np.add(g, 1, out=g)", "np.add(1, g, out=(g,))", "np.negative(g, out=g)",
                                        "np.divmod(g, 2, out=(g, g))", "np.add(g, 1, out=np.empty(()))"])
def test_a_ufunc_with_a_tracked_number_as_its_out_does_what_plain_does(expression):
    """A tracked number given as a ufunc's ``out``: the ufunc gets the plain one (which numpy refuses: not
    an array), not the tracked one again (that recursed until the stack overflowed: a segfault on 3.10)."""
    assert outcomes_in_child([expression], "(1.5, 3, np.float64(-2.25))") == []


@pytest.mark.parametrize("expression", ["np.stack([g, g])", "np.hstack([g, g])", "np.vstack((g, g))",
                                        "np.column_stack([g, g])", "np.block([g, g])", "np.block([[g], [g]])",
                                        "np.stack([np.float64(1), g])", "np.concatenate([[g], [g]])",
                                        "np.clip(g, a_min=[g], a_max=None)"])
def test_a_numpy_function_of_a_list_of_tracked_numbers_equals_plain(expression):
    """A tracked number in a list or tuple given to a numpy function: the function gets the plain numbers
    (given the tracked ones, numpy's dispatch called it again until the stack overflowed)."""
    assert outcomes_in_child([expression], "(1.5, 3, np.float64(-2.25))") == []


@pytest.mark.parametrize("number", [3, -2, 0.5, 0.1, -1.5, np.float64(1.5), np.float64(0.1)], ids=repr)
def test_np_power_of_a_tracked_number_equals_plain(number):
    """``np.power(g, c)`` and ``np.power(c, g)`` are numpy's ufunc as plain (``np.power(3, -1)`` raises,
    ``np.power(3, 100)`` wraps), not Python's ``pow``; ``**`` stays Python's (or a numpy scalar's)."""
    differ = []
    for other in [1, -1, 100, 2.5, 0.5, True, 1j, np.int8(3), np.int16(-3), np.int64(-2), np.uint8(200),
                  np.float16(0.1), np.float32(0.1), np.float64(2.5), np.longdouble(0.1), np.complex64(1 + 2j),
                  np.array([2, 3]), np.array(0.5, np.float32)]:
        for function in (np.power, operator.pow, lambda g, c: np.power(g, c, dtype=np.float64)):
            for operands, tracked in [((number, other), (track(number, Owner(), State()), other)),
                                      ((other, number), (other, track(number, Owner(), State())))]:
                if outcome(function, *operands) != outcome(function, *tracked):
                    differ.append((function, operands, outcome(function, *operands), outcome(function, *tracked)))
    assert differ == []


@pytest.mark.parametrize("function", [round, lambda g: round(g, 1), np.round, lambda g: g.round(1)],
                         ids=["round", "round1", "np_round", "method"])
def test_rounding_a_tracked_array_does_what_rounding_its_plain_array_does(function):
    """``round(g)`` raises numpy's ``TypeError`` as plain (an ndarray has no ``__round__``)."""
    for array in (np.array([0.25, -1.5]), np.array(2.5)):
        assert outcome(function, track(array, Owner(), State())) == outcome(function, array)


def raised(function):
    try:
        function()
    except Exception as exc:
        return type(exc), str(exc)
    return None


@pytest.mark.parametrize("value", [3, 1.5, np.float64(1.5), np.array([1.0, 2.0])], ids=repr)
def test_setting_or_deleting_an_attribute_of_a_tracked_value_does_what_plain_does(value):
    """``g.foo = 1``, ``g.shape = 3``, ``g.real = 1``, ``del g.foo``: the plain value's AttributeError, same
    message (a tracked number has a ``__dict__`` of its own, which took them); its own attributes still work."""
    for name in ("foo", "shape", "real", "_plain", "_owner"):
        for change in (lambda v: setattr(v, name, (2,) if name == "shape" else 1), lambda v: delattr(v, name)):
            tracked = track(value, Owner(), State())
            assert raised(lambda: change(tracked)) == raised(lambda: change(copy.copy(value))), (name, change)
    tracked = track(value, Owner(), State())
    detach(tracked)
    assert plain(tracked) is value and exact(tracked + 1) == exact(value + 1)


# ---- the compiled twin (_tracked.c): TrackedFloat's and TrackedInt's +, * and reflected *, held to tracked.py's

class FloatOfMine(float):
    pass


TWIN_OPERANDS = [2, 0.1, -0.0, True, None, 2**70, float("nan"), FloatOfMine(1.5), Fraction(1, 3), 1j,
                 np.float32(0.1), np.float64(0.25), np.int8(3), np.array([0.5, 2.0])]


def _tracked_pair(number, detached=False, held=True, quiet=0):
    """Two tracked copies of ``number`` with states alike (one for the C method, one for the Python one)."""
    made = []
    for _ in range(2):
        state = State()
        state.quiet = quiet
        value = track(number, Owner(), state)
        if detached:
            detach(value)
        if not held:
            if type(value) is TrackedFloat:  # (as a number made by type(g)(0): its _plain from __getattr__)
                TrackedFloat._plain.__delete__(value)
            else:
                del vars(value)["_plain"]
        made.append((value, state))
    return made


def _addition_shape(addition, *operands):
    """The noted addition with each operand named by its place (``self``/``other``), the sum as its exact value."""
    if addition is None:
        return None
    result, left, right, sign = addition
    name = {id(operand): place for place, operand in zip(("self", "other"), operands)}
    return exact(result), name.get(id(left), exact(left)), name.get(id(right), exact(right)), sign


@compiled_twins.needs("tracked")
@pytest.mark.parametrize("number", [0.1, -3.5, 7, 0, 2**53 + 1], ids=repr)
@pytest.mark.parametrize("case", ["common", "detached", "no plain held", "quiet", "a tracked operand"])
def test_the_compiled_operators_do_what_the_python_ones_do(number, case):
    from adtrace.recording.value_class.tracked import TrackedFloat, TrackedInt
    kind = TrackedFloat if type(number) is float else TrackedInt
    for name in ("__add__", "__mul__", "__rmul__"):
        assert type(vars(kind)[name]).__name__ == "method_descriptor"  # the C method, in the class's own namespace
        reference = getattr(Tracked, name)  # the Python method it mirrors
        for other in TWIN_OPERANDS + ["a tracked operand"] * (case == "a tracked operand"):
            (mine, my_state), (theirs, their_state) = _tracked_pair(
                number, detached=case == "detached", held=case != "no plain held", quiet=int(case == "quiet"))
            if isinstance(other, str):
                other = (track(2.5, Owner(), State()), track(2.5, Owner(), State()))
            pair = other if type(other) is tuple else (other, other)
            compiled_result = outcome(getattr(kind, name), mine, pair[0])
            python_result = outcome(reference, theirs, pair[1])
            assert compiled_result == python_result, (name, other)
            assert _addition_shape(my_state.addition, mine, pair[0]) == \
                _addition_shape(their_state.addition, theirs, pair[1]), (name, other)
            if case == "common" and name == "__add__" and type(other) in (int, float):  # (the common case notes)
                assert my_state.addition is not None and my_state.addition[1] is mine

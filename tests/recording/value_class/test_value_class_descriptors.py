"""The data descriptors of a hooked value class (``recording/value_class/descriptors.py``): the
attribute kept where the class keeps it (``__slots__`` or ``__dict__``), always as a plain number,
and a ``.grad`` never set read as ``MISSING``."""

from adtrace.recording.micrograd import MISSING, attach
from restored import assert_restored
from value_classes import EventLog, MiniValue, SlotValue

from test_value_class_hooks import exact


def test_slots_class_is_recorded_in_its_slots():
    before = dict(vars(SlotValue))
    log = EventLog()
    with attach(SlotValue, log):
        x = SlotValue(3.0)
        y = x * x
        y.backward()
    assert_restored(SlotValue, before)
    assert log.of("node_created") == [(x, (), "", 3.0), (y, (x, x), "*", 9.0)]
    assert [w[3:] for w in log.of("grad_written")] == [(0, 3.0, 3.0, True), (3.0, 3.0, 6.0, True)]
    assert exact(x.grad) == exact(6.0)


def test_a_closure_assigning_out_grad_itself_stores_the_plain_number():
    class Identity(MiniValue):
        def identity(self):
            out = Identity(self.data, (self,), 'id')

            def _backward():
                self.grad = out.grad
            out._backward = _backward
            return out

    log = EventLog()
    with attach(Identity, log):
        x = Identity(3.0)
        x.identity().backward()
    assert type(vars(x)["grad"]) is float and x.grad == 1.0
    (written,) = log.of("grad_written")
    assert written[2:] == (0, 0.0, 1.0, 1.0, False) and type(written[4]) is float


def test_missing_previous_grad():
    class Late(MiniValue):
        def __init__(self, data, _children=(), _op=''):
            super().__init__(data, _children, _op)
            if _children:
                del self.grad  # a value that gets its grad only in backward

    log = EventLog()
    with attach(Late, log):
        x = Late(3.0)
        y = x * Late(2.0)
        y.backward()
    assert log.of("seeded") == [(y, MISSING, 1.0)]
    assert repr(log.of("seeded")[0][1]) == "MISSING"  # what a sink that prints its calls shows


def test_local_backward_read_inside_backward_unwraps_to_the_values_own_closure():
    """What ``backward()`` reads as ``v._backward`` is a recorded wrapper: called, it runs the value's own
    closure (told to the sink); ``inspect.unwrap`` gives that closure; outside, the closure itself."""
    import inspect

    seen = []

    class Peeking(MiniValue):
        def backward(self):
            for v in reversed(self.topological_order()):
                seen.append((v, v._backward))
            self.grad = 1.0
            for v, wrapper in seen:
                wrapper()

    log = EventLog()
    with attach(Peeking, log):
        x = Peeking(3.0)
        y = x * x
        closure = vars(y)["_backward"]
        y.backward()
        assert y._backward is closure  # (read outside backward(): the closure itself)
    wrappers = {v: wrapper for v, wrapper in seen}
    assert wrappers[y] is not closure and inspect.unwrap(wrappers[y]) is closure
    assert [call[0] for call in log.of("local_backward_started")] == [y, x]
    assert x.grad == 6.0 and vars(y)["_backward"] is closure


def test_a_local_backward_called_with_its_own_keywords_gets_them():
    """The recorded wrapper passes every argument through, keywords named ``node`` or ``closure`` too."""
    got = []

    class Keywords(MiniValue):
        def __mul__(self, other):
            out = Keywords(self.data * other.data, (self, other), '*')

            def _backward(node=None, closure=None):
                got.append((node, closure))
                self.grad += other.data * out.grad
                other.grad += self.data * out.grad
            out._backward = _backward
            return out

        def backward(self):
            topo = self.topological_order()
            self.grad = 1.0
            for v in reversed(topo):
                v._backward(node=v, closure="c") if v._prev else v._backward()

    log = EventLog()
    with attach(Keywords, log):
        x = Keywords(3.0)
        y = x * x
        y.backward()
    assert got == [(y, "c")] and x.grad == 6.0
    assert [call[0] for call in log.of("local_backward_started")] == [y, x]


# ---- the compiled twin (_descriptors.c): the same events as the pure-Python reference (descriptors.PURE)

import contextlib  # noqa: E402
import random  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import adtrace  # noqa: E402
import learner_arrays  # noqa: E402
import learner_in_place  # noqa: E402
import learner_shapes  # noqa: E402
import learner_writes  # noqa: E402
import value_classes  # noqa: E402
from adtrace.recording.micrograd.engine import declare  # noqa: E402
from adtrace.recording.value_class import descriptors, hooks  # noqa: E402
from adtrace.report.export import events_json  # noqa: E402

TWIN = descriptors.GradDescriptor is not descriptors.PURE["GradDescriptor"]  # built and in use


@contextlib.contextmanager
def pure_python():
    """The pure-Python descriptors put in the compiled twin's place (hooks.py made with them from then on)."""
    with pytest.MonkeyPatch.context() as patch:
        for name, reference in descriptors.PURE.items():
            patch.setattr(descriptors, name, reference)
            patch.setattr(hooks, name, reference)
        yield


def _stable_hash(patch, cls, name):
    """Sets of values iterate by hash: the data's, not the id's (two recordings visit in the same order)."""
    def __hash__(self):
        data = getattr(self, name)
        return hash(data.tobytes()) if isinstance(data, np.ndarray) else hash(data)
    patch.setattr(cls, "__hash__", __hash__)


def _zoo():
    """Every learner's value class of the zoo: (class, its backward() method's name)."""
    classes = []
    for module in (value_classes, learner_shapes, learner_writes, learner_arrays, learner_in_place):
        for name, cls in vars(module).items():
            if isinstance(cls, type) and cls.__module__ == module.__name__ and name != "EventLog":
                classes.append(cls)
    return classes


def _expression(cls, a, b, c):
    ops = set(dir(cls))
    out = a * b if "__mul__" in ops else a - b
    if "__add__" in ops:
        out = out + c
        out = out + out * a
    if "__sub__" in ops:
        out = b - (out - c)
    if "__truediv__" in ops:
        out = out / c
    if "tanh" in ops:
        out = out.tanh()
    if "__pow__" in ops:
        out = out ** 2
    return out


def _record_zoo(cls, capture):
    """The events of one expression of ``cls``'s values, back-propagated twice (not zeroed), as JSON."""
    array = any(word in cls.__name__ for word in ("Array", "Tensor"))
    leaves = [np.array([0.5 + i, -1.25 * i, 2.0]) if array else 0.5 + i * 0.75 for i in range(3)]
    back = "backpropagate" if "Scalar" in cls.__name__ else "backward"
    try:
        with adtrace.record(engine=cls, capture=capture, sites=capture == "full") as recording:
            out = _expression(cls, *map(cls, leaves))
            getattr(out, back)()
            getattr(out, back)()
    except Exception as error:  # (a class the expression does not fit: it must raise the same both ways)
        return repr(error)
    return events_json(recording)


def _record_micrograd(capture):
    """Two steps of micrograd's own nn.MLP(2, [4, 4, 1]) on 5 points, recorded: the events as JSON."""
    from micrograd import nn
    rng = random.Random(0)
    xs = [[rng.uniform(-1, 1), rng.uniform(-1, 1)] for _ in range(5)]
    random.seed(1)
    model = nn.MLP(2, [4, 4, 1])
    events = []
    for _ in range(2):
        with adtrace.record(engine="micrograd", capture=capture) as recording:
            model.zero_grad()
            loss = sum((model(x) - (1.0 if x[0] * x[1] > 0 else -1.0)) ** 2 for x in xs)
            loss.backward()
        events.append(events_json(recording))
        for p in model.parameters():
            p.data -= 0.05 * p.grad
    return events


@pytest.mark.skipif(not TWIN, reason="the compiled twin _descriptors is not built (or ADTRACE_PURE_PYTHON=1)")
@pytest.mark.parametrize("capture", ["structure", "auto", "full"])
def test_the_compiled_twin_records_the_zoo_and_micrograd_as_the_pure_python_does(capture, monkeypatch):
    import micrograd.engine
    declare(learner_shapes.Scalar, **learner_shapes.SCALAR_NAMES)
    declare(learner_shapes.BuggyScalar, **learner_shapes.SCALAR_NAMES)
    classes = _zoo()
    _stable_hash(monkeypatch, micrograd.engine.Value, "data")
    for cls in classes:
        _stable_hash(monkeypatch, cls, "value" if "Scalar" in cls.__name__ else "data")
    compiled = [_record_zoo(cls, capture) for cls in classes], _record_micrograd(capture)
    with pure_python():
        reference = [_record_zoo(cls, capture) for cls in classes], _record_micrograd(capture)
    assert sum(not events.startswith("Exception") for events in reference[0]) > 20  # (recorded, not raised)
    for cls, mine, theirs in zip(classes, compiled[0], reference[0]):
        assert mine == theirs, cls
    assert compiled[1] == reference[1]


@pytest.mark.skipif(not TWIN, reason="the compiled twin _descriptors is not built (or ADTRACE_PURE_PYTHON=1)")
def test_the_compiled_twin_is_what_hooks_install_and_a_wrapper_unwraps_to_the_closure():
    import inspect
    seen = []

    class Peeking(MiniValue):
        def backward(self):
            seen.extend(v._backward for v in reversed(self.topological_order()))
            MiniValue.backward(self)

    with attach(Peeking, EventLog()):
        assert type(vars(Peeking)["grad"]) is descriptors.GradDescriptor
        assert type(vars(Peeking)["_backward"]) is descriptors.BackwardDescriptor
        x = Peeking(3.0)
        y = x * x
        y.backward()
    assert type(seen[0]) is descriptors.RecordedLocalBackward and inspect.unwrap(seen[0]) is vars(y)["_backward"]


@pytest.mark.skipif(not TWIN, reason="the compiled twin is not built or not in use")
def test_a_compiled_descriptor_made_without_its_init_is_refused_not_a_crash():
    """Its fields are set by ``__init__``: one made by ``__new__`` alone (or whose ``__init__`` failed) raises
    TypeError when used, where reading its unset fields would crash the interpreter."""
    class Plain:
        pass

    for kind in (descriptors.GradDescriptor, descriptors.BackwardDescriptor):
        bare = kind.__new__(kind)
        with pytest.raises(TypeError, match="not initialised"):
            bare.__get__(Plain(), Plain)
        with pytest.raises(TypeError, match="not initialised"):
            bare.__set__(Plain(), 1.0)
        assert bare.__get__(None, Plain) is bare  # (read on the class: itself, as the Python's)

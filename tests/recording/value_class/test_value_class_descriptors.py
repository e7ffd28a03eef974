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

import pytest  # noqa: E402

import compiled_twins  # noqa: E402
import zoo_recordings  # noqa: E402
from adtrace.recording.value_class import descriptors  # noqa: E402


@compiled_twins.needs("descriptors")
@pytest.mark.parametrize("capture", ["structure", "auto", "full"])
def test_the_compiled_twin_records_the_zoo_and_micrograd_as_the_pure_python_does(capture, monkeypatch):
    classes = zoo_recordings.prepared(monkeypatch)
    compiled, reference = compiled_twins.both_ways(lambda: zoo_recordings.recorded(classes, capture), "descriptors")
    zoo_recordings.assert_recorded_alike(classes, compiled, reference)


@compiled_twins.needs("descriptors")
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


@compiled_twins.needs("descriptors")
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

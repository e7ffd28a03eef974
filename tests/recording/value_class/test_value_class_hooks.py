"""Hooks on micrograd's Value and on learners' classes of its shape: events, restore, bit-identical results."""

import contextlib
import contextvars
import copy
import gc
import random
import threading
import types
import weakref

import numpy as np
import compiled_twins
import pytest
import zoo_recordings
from micrograd import nn
from micrograd.engine import Value as MicroValue

from adtrace.recording.micrograd import attach, check_shape
from adtrace.recording.patching import Patcher
from adtrace.recording.value_class import hooks as hooks_module
from adtrace.recording.value_class.hooks import ClassHooks
from learner_in_place import InPlaceTensor, LazyTensor, SliceBugTensor
from learner_writes import AssignArray, AssignValue, SignedArray, SignedValue
from restored import assert_restored
from value_classes import ArrayValue, BuggyValue, ChainedValue, EventLog, MiniValue, SlotValue, Value, ZeroingValue

CLASSES = [MicroValue, Value, BuggyValue, MiniValue, SlotValue, ArrayValue]


def exact(value):
    """A value as (type, exact text): equal only if bit for bit and type for type equal."""
    if isinstance(value, np.ndarray):
        return ("ndarray", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, tuple):
        return tuple(map(exact, value))
    if isinstance(value, float) and type(value) is float:
        return ("float", value.hex())
    return (type(value).__name__, repr(value))


def run_unhooked(build):
    """The graph ``build()`` makes, its ``backward()`` run unhooked, its gradients then put back:
    ``(root, its nodes, each node's exact (data, grad) after that run)``."""
    root = build()
    nodes = graph(root)
    initial = [copy.copy(v.grad) for v in nodes]
    root.backward()
    results = [(exact(v.data), exact(v.grad)) for v in nodes]
    for v, grad in zip(nodes, initial):
        v.grad = grad
    return root, nodes, results


def graph(root):
    """Every value reachable from root (through _prev), each once."""
    seen, stack = {}, [root]
    while stack:
        v = stack.pop()
        if id(v) not in seen:
            seen[id(v)] = v
            stack.extend(v._prev)
    return list(seen.values())


# ---- what is recorded

ARGUMENTS = ([0.5, -1.0, 2.0], [1.5, 0.25, -0.75])


def in_place_graph(cls, arguments=ARGUMENTS):
    x, y = map(cls, arguments)
    z = x * y + x
    return (z[np.array([0, 1, 1])] * z[np.array([2, 0, 0])]).sum()

def test_x_times_x_in_micrograd():
    log = EventLog()
    with attach(MicroValue, log):
        x = MicroValue(3.0)
        y = x * x
        y.backward()
    assert log.kinds() == ["node_created", "node_created", "backward_started", "seeded",
                           "local_backward_started", "grad_written", "grad_written", "local_backward_ended",
                           "local_backward_started", "local_backward_ended", "backward_ended"]
    assert log.of("node_created") == [(x, (), "", 3.0), (y, (x, x), "*", 9.0)]
    assert y._prev == {x}
    assert log.of("backward_started") == [(y,)]
    assert [exact(e[1:]) for e in log.of("seeded")] == [exact((0, 1))]  # micrograd seeds the int 1
    assert log.of("local_backward_started") == [(y, 1), (x, 6.0)]
    assert [(e[0], e[1], e[2]) for e in log.of("grad_written")] == [(y, x, 0), (y, x, 1)]
    assert [exact(e[3:6]) + (e[6],) for e in log.of("grad_written")] == [
        exact((0, 3.0, 3.0)) + (True,), exact((3.0, 3.0, 6.0)) + (True,)]
    assert log.of("local_backward_ended") == [(y, None), (x, None)]
    assert log.of("backward_ended") == [(y, None)]
    assert exact(x.grad) == exact(6.0)


@pytest.mark.parametrize("cls, writes, grad", [
    (Value, [(0.0, 1.0, 1.0, True), (1.0, 1.0, 2.0, True)], 2.0),
    (BuggyValue, [(0.0, 1.0, 1.0, False), (1.0, 1.0, 1.0, False)], 1.0),  # the second write replaces 1 by 1
])
def test_a_plus_a_accumulates_or_replaces(cls, writes, grad):
    log = EventLog()
    with attach(cls, log):
        a = cls(3.0)
        b = a + a
        b.backward()
    written = log.of("grad_written")
    assert [(w[0], w[1], w[2]) for w in written] == [(b, a, 0), (b, a, 1)]
    assert [exact(w[3:6]) + (w[6],) for w in written] == [exact(w[:3]) + (w[3],) for w in writes]
    assert a.grad == grad


def test_op_strings_as_the_class_writes_them():
    log = EventLog()
    with attach(MicroValue, log):
        a = MicroValue(2.0)
        ((a + 1) * a ** 2).relu()
    assert [op for _, _, op, _ in log.of("node_created")] == ["", "", "+", "**2", "*", "ReLU"]
    log = EventLog()
    with attach(Value, log):
        x = Value(0.5)
        x.tanh().exp()
    assert [op for _, _, op, _ in log.of("node_created")] == ["", "tanh", "exp"]


def test_children_in_argument_order_with_duplicates():
    log = EventLog()
    with attach(MicroValue, log):
        a, b = MicroValue(1.0), MicroValue(2.0)
        ab, ba, aa = a + b, b + a, a * a
        by_keyword = MicroValue(0.0, _op="k", _children=(b, a))
        from_generator = MicroValue(0.0, (v for v in (a, b, a)), "g")
    children = {id(node): kids for node, kids, _, _ in log.of("node_created")}
    assert children[id(ab)] == (a, b) and children[id(ba)] == (b, a) and children[id(aa)] == (a, a)
    assert children[id(by_keyword)] == (b, a)
    assert children[id(from_generator)] == (a, b, a) and from_generator._prev == {a, b}


def test_a_constant_operand_is_a_leaf_created_first():
    log = EventLog()
    with attach(MicroValue, log):
        a = MicroValue(2.0)
        b = a + 5
    (leaf, _, _, _), (constant, no_children, op, data), (node, kids, _, _) = log.of("node_created")
    assert (leaf, no_children, op, data, node) == (a, (), "", 5, b) and kids == (a, constant)


def test_visit_order_is_the_order_backward_calls_the_closures():
    random.seed(1)
    model = nn.MLP(3, [4, 4, 1])
    log, ran = EventLog(), []
    with attach(MicroValue, log):
        out = model([MicroValue(1.0), MicroValue(-2.0), MicroValue(0.5)])
        nodes = graph(out)
        for v in nodes:  # outside backward() the closure reads as itself
            closure = v._backward
            v._backward = lambda v=v, closure=closure: (ran.append(v), closure())[1]
        out.backward()
    visited = [node for node, _ in log.of("local_backward_started")]
    assert visited == ran
    assert len(visited) == len(nodes) == len({id(v) for v in visited})  # leaves included
    place = {id(v): i for i, v in enumerate(visited)}
    for node, children, _, _ in log.of("node_created"):  # a value after every value that consumed it
        assert all(place[id(child)] > place[id(node)] for child in children)


def test_contributions_are_exact_not_result_minus_previous():
    log = EventLog()
    with attach(MicroValue, log):
        a = MicroValue(1.0)
        s = a * 1e-16 + 1e16
        c = a * s
        c.backward()
    into_a = [(previous, contribution, result) for _, target, _, previous, contribution, result, _
              in log.of("grad_written") if target is a]
    assert into_a == [(0, 1e16, 1e16), (1e16, 1e-16, 1e16)]
    assert into_a[1][2] - into_a[1][0] == 0.0  # what a subtraction would have recorded


def test_values_made_before_the_hooks():
    x = MicroValue(3.0)
    y = x * x
    log = EventLog()
    with attach(MicroValue, log):
        y.backward()
    assert log.of("node_created") == []
    assert log.of("local_backward_started") == [(y, 1), (x, 6.0)]
    assert [(w[0], w[1], w[2], w[6]) for w in log.of("grad_written")] == [(y, x, None, True)] * 2


def test_a_zeroing_backward_writes_without_a_writer():
    log = EventLog()
    with attach(ZeroingValue, log):
        x = ZeroingValue(2.0)
        y = x * ZeroingValue(3.0)
        x.grad = 7.0  # outside backward(): not recorded
        y.backward()
    unattributed = [w for w in log.of("grad_written") if w[0] is None]
    assert sorted(w[1].data for w in unattributed) == [2.0, 3.0]
    assert all(w[2] is None and w[4] is None and w[5] == 0.0 and w[6] is None for w in unattributed)
    assert [w[3] for w in unattributed if w[1] is x] == [7.0]
    assert log.of("seeded") == [(y, 0.0, 0.0), (y, 0.0, 1.0)]  # each write of the root's grad by backward()


# ---- grads that are not int or float

def test_numpy_arrays_accumulated_in_place_add_their_exact_contribution():
    log = EventLog()
    with attach(ArrayValue, log):
        x = ArrayValue([1.0, 2.0])
        y = x * x
        y.backward()
    assert np.array_equal(x.grad, [2.0, 4.0]) and type(x.grad) is np.ndarray
    written = log.of("grad_written")
    assert [(w[2], w[4].tolist(), type(w[4]), w[6]) for w in written] == [(0, [1.0, 2.0], np.ndarray, True),
                                                                         (1, [1.0, 2.0], np.ndarray, True)]
    assert all(w[3] is w[5] is x.grad for w in written)  # updated in place: previous is the result


def test_numpy_float32_data_first_write_exact_then_unknown():
    """The first write adds to the float 0.0 (tracked: its contribution is known); the second adds to
    the numpy scalar it made (untracked). The values are the engine's own, whatever numpy's promotion
    (numpy 2 keeps float32 * 1.0 a float32, numpy 1.x makes it a float64)."""
    unrecorded = Value(np.float32(0.1))
    (unrecorded * unrecorded).backward()
    contribution = np.float32(0.1) * 1.0  # other.data * out.grad, the seed 1.0
    log = EventLog()
    with attach(Value, log):
        x = Value(np.float32(0.1))
        y = x * x
        y.backward()
    first, second = log.of("grad_written")
    assert exact(first[3:6]) == exact((0.0, contribution, 0.0 + contribution)) and first[6] is True
    if type(contribution) is np.float32:  # (numpy 2: an untracked float32, read, then added to: not known)
        assert second[4] is None and second[6] is None
    else:  # (numpy 1.x: a float64, tracked as a float: the addition is known)
        assert exact(second[4]) == exact(contribution) and second[6] is True
    assert exact(second[5]) == exact(unrecorded.grad)
    assert exact(x.grad) == exact(unrecorded.grad) and type(x.grad) is type(contribution)


# ---- each way of writing an accumulation (tests/learner_writes.py)

def signed_writes(cls, x):
    """``(0.1 - (x*x - x)) + x``: every form of write once, ``x`` read back at the end."""
    log = EventLog()
    with attach(cls, log):
        x = cls(x)
        y = (0.1 - (x * x - x)) + x
        y.backward()
    return x, [(w[0]._op, w[2], w[4], w[6]) for w in log.of("grad_written")]


def test_every_form_of_accumulation_on_numbers_adds_its_signed_contribution():
    """``grad += c``, ``grad = c + grad``, ``grad -= c``, ``grad = grad + c``, ``grad = grad - c``:
    all accumulations; a subtraction's contribution is ``-c``, what the op's derivative -1 gives."""
    x, writes = signed_writes(SignedValue, 3.0)
    assert writes == [("+", 0, 1.0, True), ("+", 1, 1.0, True),     # self.grad +=, other.grad = out.grad + other.grad
                      ("-", 0, 1.0, True), ("-", 1, -1.0, True),    # __rsub__: grad = grad + c, grad = grad - c
                      ("-", 0, -1.0, True), ("-", 1, 1.0, True),    # __sub__: self.grad += c, other.grad -= c
                      ("*", 0, -3.0, True), ("*", 1, -3.0, True)]
    assert x.grad == 1 - (2 * 3.0 - 1)


def test_the_assignment_bug_on_numbers_replaces():
    log = EventLog()
    with attach(AssignValue, log):
        x = AssignValue(3.0)
        y = x * x - x
        y.backward()
    assert [(w[0]._op, w[2], w[3], w[4], w[6]) for w in log.of("grad_written")] == [
        ("-", 0, 0.0, 1.0, False), ("-", 1, 0.0, -1.0, False), ("*", 0, -1.0, 3.0, False), ("*", 1, 3.0, 3.0, False)]


def test_every_form_of_accumulation_on_arrays_adds_its_signed_contribution():
    """An ndarray ``.grad`` read inside a ``_backward`` is a view whose ufuncs note ``+`` and ``-`` as
    a tracked number's: in place (``+=``, ``-=``: the same array) or a new one (``grad = grad + c``)."""
    x, writes = signed_writes(SignedArray, [3.0, 2.0])
    assert [(op, position, added.tolist(), accumulated) for op, position, added, accumulated in writes] == [
        ("+", 0, [1.0, 1.0], True), ("+", 1, [1.0, 1.0], True),
        ("-", 0, [1.0, 1.0], True), ("-", 1, [-1.0, -1.0], True),
        ("-", 0, [-1.0, -1.0], True), ("-", 1, [1.0, 1.0], True),
        ("*", 0, [-3.0, -2.0], True), ("*", 1, [-3.0, -2.0], True)]
    assert np.array_equal(x.grad, [1 - (2 * 3.0 - 1), 1 - (2 * 2.0 - 1)]) and type(x.grad) is np.ndarray


def test_an_array_the_closure_never_read_is_replaced():
    """``other.grad = self.data * out.grad`` makes a new array without reading ``other.grad``: the
    previous value is dropped, whatever it held (the ``=`` bug: ``x*x`` keeps only the second product)."""
    log = EventLog()
    with attach(AssignArray, log):
        x = AssignArray([3.0, 2.0])
        y = x * x - x
        y.backward()
    writes = log.of("grad_written")
    assert [(w[0]._op, w[2], w[6]) for w in writes] == [("-", 0, False), ("-", 1, False), ("*", 0, False),
                                                        ("*", 1, False)]
    assert all(w[4] is w[5] for w in writes)  # the contribution is the array written
    assert np.array_equal(writes[-1][3], [3.0, 2.0]) and np.array_equal(x.grad, [3.0, 2.0])


def test_numpy_scalar_grads_float64_tracked_float32_replaced_unread_not_known_when_read():
    """A float64 ``.grad`` (data from numpy arrays) is tracked as a float: every form adds. A float32
    one is not tracked: the ``=`` bug's write into a ``.grad`` it never read replaces; ``grad += c``
    after reading one is not known."""
    from learner_writes import UNTRACKED

    x, writes = signed_writes(SignedValue, np.float64(3.0))
    assert [accumulated for *_, accumulated in writes] == [True] * 8 and type(x.grad) is np.float64
    log = EventLog()
    with attach(AssignValue, log):
        x = AssignValue(UNTRACKED(3.0))  # (float32 under numpy 2; numpy 1.x would make it a float64)
        (x * x - x).backward()
    last = log.of("grad_written")[-1]
    assert type(last[3]) is UNTRACKED and (last[4], last[6]) == (last[5], False)
    x, writes = signed_writes(SignedValue, UNTRACKED(3.0))
    assert [accumulated for *_, accumulated in writes][-1] is None and type(x.grad) is UNTRACKED


def test_a_read_inside_a_nested_backward_counts_for_its_caller():
    """A ``_backward`` that calls a helper closure reading ``.grad`` before it writes a new array
    otherwise than by adding to it: what the helper read, the caller read (not known, never replaced)."""

    class Helped(SignedArray):
        def __mul__(self, other):
            out = Helped(self.data * other.data, (self, other), '*')
            reads = Helped([0.0])
            reads._backward = lambda: (self.grad, other.grad)

            def _backward():
                previous = reads._backward()
                self.grad = previous[0] * 1.0 + other.data * out.grad  # (no addition to the array read)
                other.grad = previous[1] * 1.0 + self.data * out.grad
            out._backward = _backward
            return out

    log = EventLog()
    with attach(Helped, log):
        x, w = Helped([3.0]), Helped([2.0])
        (x * w).backward()
    assert [(w[2], w[6]) for w in log.of("grad_written")] == [(0, None), (1, None)]


# ---- bit-identical results

def micrograd_mlp(kind=float):
    random.seed(0)
    model = nn.MLP(2, [8, 8, 1])
    xs = [list(map(kind, x)) for x in [[2.0, 3.0], [3.0, -1.0], [0.5, 1.0], [1.0, -1.5]]]
    ys = [1.0, -1.0, -1.0, 1.0]
    scores = [model(list(map(MicroValue, x))) for x in xs]
    loss = sum((1 + -y * s).relu() for y, s in zip(ys, scores)) * (1.0 / len(ys))
    return loss + 1e-4 * sum(p * p for p in model.parameters())


def video_neuron(x1=2.0, x2=0.0):
    x1, x2 = Value(x1), Value(x2)
    w1, w2, b = Value(-3.0), Value(1.0), Value(6.8813735870195432)
    n = x1 * w1 + x2 * w2 + b
    e = (2 * n).exp()
    o = (e - 1) / (e + 1)
    return o + n.tanh() ** 3 - x1 / 7


CASES = {
    "micrograd_mlp": (MicroValue, micrograd_mlp),
    "micrograd_mlp_float64": (MicroValue, lambda: micrograd_mlp(np.float64)),  # (the demo's data: numpy rows)
    "video_neuron": (Value, video_neuron),
    "video_neuron_float32": (Value, lambda: video_neuron(np.float32(2.0), np.float32(0.25))),
    "buggy": (BuggyValue, lambda: (lambda a: a + a + a * a)(BuggyValue(3.0))),
    "mini": (MiniValue, lambda: (lambda a: a * a + a)(MiniValue(3.0))),
    "slots": (SlotValue, lambda: (lambda x: (x * x + x) * x)(SlotValue(1.5))),
    "arrays": (ArrayValue, lambda: (lambda x: (x * x) * x)(ArrayValue([0.3, -1.0]))),
    "signed": (SignedValue, lambda: (lambda x: (0.1 - (x * x - x)) + x)(SignedValue(0.7))),
    "signed_arrays": (SignedArray, lambda: (lambda x: (0.1 - (x * x - x)) + x)(SignedArray([0.7, -0.3]))),
    "assigned_arrays": (AssignArray, lambda: (lambda x: x * x - x)(AssignArray([0.7, -0.3]))),
    "in_place": (InPlaceTensor, lambda: in_place_graph(InPlaceTensor)),
    "slice_bug": (SliceBugTensor, lambda: (lambda x, y: (x * y + x).sum())(*map(SliceBugTensor, ARGUMENTS))),
    "lazy": (LazyTensor, lambda: (lambda x, y: (x * y + x).sum())(*map(LazyTensor, ARGUMENTS))),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_results_bit_identical_with_and_without_hooks(name):
    """One graph, backward() without and with hooks: micrograd's visit order follows the iteration
    order of the _prev sets (by id), so two graphs may sum in different orders; one graph does not."""
    cls, build = CASES[name]
    root, nodes, plain = run_unhooked(build)
    with attach(cls, EventLog()) as attachment:
        root.backward()
        rebuilt = build()
    assert attachment.failure is None and len(plain) > 2
    assert [(exact(v.data), exact(v.grad)) for v in nodes] == plain
    assert sorted(exact(v.data) for v in graph(rebuilt)) == sorted(data for data, _ in plain)


# ---- restoring the class

class Midway(RuntimeError):
    pass


def _raise_midway(cls):
    x = cls(2.0) if cls is not ArrayValue else cls([2.0])
    y = x * x
    z = y * x
    closure = vars(y)["_backward"] if hasattr(y, "__dict__") else None

    def failing():
        (closure or (lambda: None))()
        raise Midway("midway")
    y._backward = failing
    z.backward()


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
@pytest.mark.parametrize("ending", ["normal", "ValueError", "KeyboardInterrupt", "backward raises"])
def test_leaving_restores_the_class_and_instances(cls, ending):
    before = dict(vars(cls))
    made = []
    raising = pytest.raises((ValueError, KeyboardInterrupt, RuntimeError))
    with raising if ending != "normal" else contextlib.nullcontext():
        with attach(cls, EventLog()):
            x = cls(3.0) if cls is not ArrayValue else cls([3.0])
            y = x * x
            made += [x, y, y._backward]
            y.backward()
            if ending == "backward raises":
                _raise_midway(cls)
            elif ending != "normal":
                raise {"ValueError": ValueError, "KeyboardInterrupt": KeyboardInterrupt}[ending]()
    assert_restored(cls, before)
    x, y, closure = made
    assert y._backward is closure
    assert type(x.grad) in (int, float, np.ndarray) and type(x.data) in (float, np.ndarray)
    if hasattr(x, "__dict__"):
        assert type(vars(x)["grad"]) in (int, float, np.ndarray) and vars(y)["_backward"] is closure


def test_backward_raising_midway_is_told_and_the_next_pass_is_clean():
    log = EventLog()
    with attach(Value, log):
        with pytest.raises(RuntimeError):
            _raise_midway(Value)
        ended = log.of("backward_ended")
        assert len(ended) == 1 and isinstance(ended[0][1], RuntimeError)
        assert [type(e).__name__ for _, e in log.of("local_backward_ended")] == ["NoneType", "Midway"]
        log.events.clear()
        x = Value(3.0)
        (x * x).backward()
        assert [w[6] for w in log.of("grad_written")] == [True, True] and x.grad == 6.0


def test_an_exception_through_the_hooks_is_freed_without_the_cyclic_collector():
    log = EventLog()
    gc.disable()
    try:
        with attach(Value, log):
            try:
                _raise_midway(Value)
            except RuntimeError as exc:
                freed = weakref.ref(exc)
        log.events.clear()
        assert freed() is None
    finally:
        gc.enable()


def test_installing_is_all_or_nothing():
    class Refusing(type):
        def __setattr__(cls, name, value):
            if name == "_backward":
                raise TypeError("_backward is read-only here")
            super().__setattr__(name, value)

    class Guarded(MiniValue, metaclass=Refusing):
        pass

    before = dict(vars(Guarded))
    with pytest.raises(TypeError, match="read-only"):
        attach(Guarded, EventLog())
    assert_restored(Guarded, before)
    x = Guarded(3.0)
    y = x * x
    y.backward()
    assert x.grad == 6.0


# ---- several sinks, threads, failing sinks

def test_another_thread_runs_unhooked():
    log, results = EventLog(), {}

    def other():
        x = Value(3.0)
        y = x * x
        closure = y._backward

        def spy():
            results["read inside _backward"] = type(y.grad)
            closure()
        y._backward = spy
        y.backward()
        results["grad"], results["stored"] = x.grad, type(vars(x)["grad"])

    with attach(Value, log):
        thread = threading.Thread(target=other)
        thread.start()
        thread.join()
    assert log.events == []
    assert results == {"read inside _backward": float, "grad": 6.0, "stored": float}


def test_events_follow_the_context_not_only_the_thread():
    def square_backward():
        x = Value(3.0)
        (x * x).backward()
        return x.grad

    before_attach = contextvars.copy_context()
    log = EventLog()
    with attach(Value, log):
        assert before_attach.run(square_backward) == 6.0 and log.events == []
        assert contextvars.copy_context().run(square_backward) == 6.0
    assert len(log.of("grad_written")) == 2


def test_a_failing_sink_is_dropped_and_the_engine_runs_on():
    class Failing(EventLog):
        def grad_written(self, *arguments):
            raise ValueError("sink bug")

    failing, good = Failing(), EventLog()
    with attach(MicroValue, failing) as broken, attach(MicroValue, good) as fine:
        x = MicroValue(3.0)
        (x * x).backward()
    assert isinstance(broken.failure, ValueError) and fine.failure is None
    assert "backward_ended" not in failing.kinds() and "backward_ended" in good.kinds()
    assert x.grad == 6.0


def test_sinks_read_plain_values_and_are_not_recorded():
    class Curious(EventLog):
        def grad_written(self, node, target, *rest):
            self.events.append(("read", type(target.grad), type(node.grad)))
            MicroValue(1.0) * MicroValue(2.0)  # made by the sink: not recorded

    sink = Curious()
    with attach(MicroValue, sink):
        x = MicroValue(3.0)
        (x * x).backward()
    assert [e for e in sink.events if e[0] == "read"] == [("read", float, int), ("read", float, int)]
    assert len(sink.of("node_created")) == 2


def test_a_backward_run_inside_another_before_its_seed_is_seeded_too():
    """A class whose backward() first runs the pass of other values (a regularizer's graph, say):
    the inner pass's `grad = 1` is its seed, not a write into a value of the outer pass."""
    class Chained(ChainedValue):  # (its own class: attach hooks it for this test alone)
        pass

    log = EventLog()
    with attach(Chained, log):
        c = Chained(5.0)
        d = c * c
        b = Chained(2.0) * Chained(3.0)
        b.first = (d,)
        b.backward()
    assert log.of("seeded") == [(d, 0.0, 1.0), (b, 0.0, 1.0)]
    assert not [w for w in log.of("grad_written") if w[0] is None]  # no write outside a _backward
    assert c.grad == 10.0


def test_the_hooks_are_installed_where_the_engine_names_its_sites():
    """``ClassHooks`` reads the engine's ``pass_start``, ``local_backward`` and ``grad_write``: an
    engine whose pass starts at ``backprop`` records ``backprop()`` and leaves ``backward()`` alone."""

    class Backprop(MiniValue):
        def backprop(self):  # the same pass under another name
            return MiniValue.backward(self)

    engine = types.SimpleNamespace(name="test", cls=Backprop, shape=check_shape(Backprop),
                                   pass_start=(Backprop, "backprop"), local_backward=(Backprop, "_backward"),
                                   grad_write=(Backprop, "grad"))
    hooks, patcher, log = ClassHooks(engine), Patcher(), EventLog()
    original = vars(Backprop)["backprop"]
    hooks.install(patcher)
    token = hooks.active.set(log)
    try:
        assert vars(Backprop)["backprop"] is not original and "backward" not in vars(Backprop)
        x = Backprop(3.0)
        (x * x).backward()
        assert "backward_started" not in log.kinds() and x.grad == 6.0
        x.grad = 0.0
        (x * x).backprop()
        assert log.kinds().count("backward_started") == 1 and len(log.of("grad_written")) == 2 and x.grad == 6.0
    finally:
        hooks.active.reset(token)
        patcher.undo()
    assert vars(Backprop)["backprop"] is original and "grad" not in vars(Backprop)


# ---- writes that assign no .grad, a .grad that starts as None, what a local backward hands out

def test_every_in_place_write_is_told_once_an_accumulation_only_where_it_adds():
    """``np.add(grad, c, out=grad)`` and ``np.add(c, grad, out=grad)`` add; ``grad[...] += c`` and
    ``np.add.at(grad, idx, c)`` write into ``.grad`` (in place, no ``.grad =``): not known; ``grad += c``
    adds, told once though ``backward()`` then stores the same array into ``.grad``."""
    log = EventLog()
    with attach(InPlaceTensor, log):
        in_place_graph(InPlaceTensor).backward()
    writes = [(w[0]._op, w[2], w[6]) for w in log.of("grad_written")]
    assert writes == [("sum", 0, True), ("*", 0, None), ("*", 1, None), ("getitem", 0, None), ("getitem", 0, None),
                      ("+", 0, True), ("+", 1, True), ("*", 0, None), ("*", 1, None)]
    for w in log.of("grad_written"):
        assert w[3] is w[5] and (w[4] is None) is (w[6] is None)  # in place: previous is the result


def test_the_assignment_through_a_slice_is_seen_not_known():
    """``self.grad[:] = out.grad`` drops what was there: a write, not known (never an addition)."""
    log = EventLog()
    with attach(SliceBugTensor, log):
        x, y = map(SliceBugTensor, ARGUMENTS)
        (x * y + x).sum().backward()
    assert [(w[0]._op, w[2], w[6]) for w in log.of("grad_written")] == [
        ("sum", 0, True), ("+", 0, None), ("+", 1, None), ("*", 0, True), ("*", 1, True)]


def test_a_write_into_a_grad_holding_none_is_an_accumulation():
    """``if self.grad is None: self.grad = g.copy() else: self.grad = self.grad + g``: the first write
    adds the value written to nothing, the next adds ``g``; every write an accumulation."""
    log = EventLog()
    with attach(LazyTensor, log):
        x, y = map(LazyTensor, ARGUMENTS)
        (x * y + x).sum().backward()
    writes = log.of("grad_written")
    assert [(w[0]._op, w[2], w[6]) for w in writes] == [("sum", 0, True), ("+", 0, True), ("+", 1, True),
                                                        ("*", 0, True), ("*", 1, True)]
    assert [w[3] is None for w in writes] == [True, True, True, False, True]  # x.grad: by + first, then by *
    assert all(w[4] is w[5] for w in writes if w[3] is None) and np.array_equal(x.grad, np.array(ARGUMENTS[1]) + 1)


def test_what_a_local_backward_read_and_kept_is_detached():
    """``out.seen = out.grad`` keeps a tracked array: once the local backward returns it holds neither
    its owner nor the thread's state (no graph kept alive), and what is computed from it is plain."""
    with attach(LazyTensor, EventLog()):
        x = LazyTensor([1.0, 2.0])
        y = x.sum()
        y.backward()
    assert np.array_equal(y.seen, 1.0) and not {"_owner", "_state"} & set(vars(y.seen))
    assert exact(y.seen + 1) == exact(np.ones(()) + 1) and type(y.seen.repeat(2)) is np.ndarray


# ---- the compiled twin (_hooks.c: InitHook, LocalBackwardRunner), held to this module's Python

hooks_path = compiled_twins.fixture("hooks")  # each test with the compiled hooks (when built) and the Python ones


def test_the_compiled_hooks_are_the_ones_installed(hooks_path):
    with attach(MicroValue, EventLog()):
        init = vars(MicroValue)["__init__"]
        x = MicroValue(2.0)
        (x * x).backward()
    compiled = hooks_path == "compiled"
    assert (type(init).__name__ == "InitHook") is compiled
    assert init.__wrapped__ is vars(MicroValue)["__init__"] and init.__adtrace_hook__ == "__init__"
    assert init.__name__ == "__init__" and init.__qualname__ == "Value.__init__"


def test_a_thread_state_has_the_reference_fields(hooks_path):
    """The compiled ``ThreadState`` (its fields read directly by the compiled hooks, descriptors and tracked
    numbers) has ``_ThreadState``'s attributes, made the same, and a ``quiet`` stepped as an int."""
    state, reference = hooks_module._PerThread(print).state, hooks_module._ThreadState(print)
    assert (type(state).__name__ == "ThreadState") is (hooks_path == "compiled")
    assert {name: getattr(state, name) for name in vars(reference)} == vars(reference)
    assert state.frames is not reference.frames and state.ends is not state.frames
    state.quiet += 2
    state.quiet -= 1
    state.addition = (1.0, 2, 3, "+")
    assert (state.quiet, state.addition) == (1, (1.0, 2, 3, "+")) and type(state.quiet) is int


def test_a_frame_has_the_reference_fields_and_methods():
    """The compiled ``_Frame`` (its fields a C struct read directly by the compiled hooks and descriptors) is made,
    read and written as the reference, a field deleted reads as a slot's (AttributeError)."""
    a, b = MicroValue(1.0), MicroValue(2.0)
    frames = [cls(b, (a, b, a)) for cls in (hooks_module._Frame, hooks_module.PythonFrame)]
    assert hooks_module._Frame is hooks_module.PythonFrame or hooks_module._Frame.__base__.__name__ == "Frame"
    for frame in frames:
        assert (frame.node, frame.children, frame.unwritten, frame.read, frame.handed) == (b, (a, b, a), 7, None, [])
        assert (frame.position(a), frame.position(a), frame.position(a), frame.position(b)) == (0, 2, None, 1)
        frame.handed.append(a)
        assert frame.has_read(b) is False and not hasattr(frame, "__dict__")
        del frame.read
        with pytest.raises(AttributeError):
            frame.read


def test_a_number_a_local_backward_kept_or_whose_attributes_it_kept_is_detached(hooks_path):
    """A tracked number only its local backward's frame holds is freed with the frame (compiled: not detached first,
    nothing can see it); one the closure kept, or whose ``__dict__`` it kept, is detached as the reference does."""
    kept = []
    with attach(MicroValue, EventLog()):
        x = MicroValue(2.0)
        y = x * x
        closure = vars(y)["_backward"]

        def _backward():
            kept.extend([y.grad, vars(y.grad)])
            y.grad * 1  # (read and dropped)
            closure()
        y._backward = _backward
        y.backward()
    number, attributes = kept
    assert number == 1 and vars(number) == {"_plain": 1} and attributes == {"_plain": 1} and x.grad == 4.0


def test_a_frame_someone_kept_during_its_visit_keeps_no_value_once_the_hooks_are_undone(hooks_path):
    """A visit's frame held elsewhere when the visit returns (a debugger keeping the running frame) is not emptied
    (compiled: the pool of frames made again keeps it): once the holder lets go and the hooks are undone, nothing
    keeps the user's values alive."""
    held = []

    def run():
        a, b = Value(2.0), Value(3.0)
        c = a * b
        d = c * a
        closure = c._backward

        def _backward():
            held.append(vars(Value)["grad"].local.state.frames[-1])  # the running visit's frame
            closure()
        c._backward = _backward
        with attach(Value, EventLog()):
            d.backward()
        return [weakref.ref(v) for v in (a, b, c, d)]

    refs = run()
    assert held[0].node is not None  # (not emptied while held)
    held.clear()
    gc.collect()
    assert [r() for r in refs] == [None] * 4


def test_a_tracked_zero_in_a_frame_someone_kept_is_detached_as_the_reference_does(hooks_path):
    """micrograd's ``grad = 0`` read in a local backward whose frame someone kept: its attributes after the visit are
    the reference's (compiled: a pooled TrackedInt 0 is detached by popping, not set to None, when it can be seen)."""
    held = []
    z, a, b = MicroValue(1.0), MicroValue(2.0), MicroValue(3.0)
    c = a * b
    d = c * a
    closure = c._backward

    def _backward():
        held.append(vars(MicroValue)["grad"].local.state.frames[-1])
        z.grad  # (a 0 read and dropped)
        closure()
    c._backward = _backward
    with attach(MicroValue, EventLog()):
        d.backward()
    zeros = [t for t in held[0].handed if type(t).__name__ == "TrackedInt"]
    assert zeros and all(vars(t) == {"_plain": 0} for t in zeros)


@compiled_twins.needs("hooks")
@pytest.mark.parametrize("capture", ["structure", "auto", "full"])
def test_the_zoo_and_micrograd_record_the_same_events_compiled_and_in_pure_python(capture, monkeypatch):
    classes = zoo_recordings.prepared(monkeypatch)
    compiled, pure = compiled_twins.both_ways(lambda: zoo_recordings.recorded(classes, capture), "hooks")
    zoo_recordings.assert_recorded_alike(classes, compiled, pure)


def test_an_error_of_the_closure_is_raised_as_it_was_and_the_visit_ends(hooks_path):
    """A ``_backward`` that raises: the same exception (its traceback through the closure) out of ``backward()``,
    the visit ended with it, the hooks listening again after."""
    log = EventLog()
    with attach(MicroValue, log):
        x = MicroValue(2.0)
        y = x * x
        failure = ZeroDivisionError("in the closure")

        def _backward():
            raise failure
        y._backward = _backward
        with pytest.raises(ZeroDivisionError) as raised:
            y.backward()
        z = x + x
        z.backward()
    assert raised.value is failure and raised.value.__context__ is None
    assert raised.traceback[-1].name == "_backward"
    assert ("local_backward_ended", y, failure) in log.events
    assert log.kinds()[-4:] == ["local_backward_started", "grad_written", "grad_written", "local_backward_ended"] \
        or log.of("node_created")[-1][0] is z
    assert [e[1] for e in log.events if e[0] == "node_created"] == [x, y, z]


def test_children_given_by_keyword_by_default_or_as_a_set_are_the_pure_pythons(hooks_path):
    """micrograd's ``_children`` by position, by keyword, left to its default; learners' sets ordered by the op."""
    from learner_shapes import SetChildrenValue
    log = EventLog()
    with attach(MicroValue, log):
        a, b = MicroValue(1.0), MicroValue(2.0, _children=())
        c = MicroValue(3.0, (a, b), "+")
        d = MicroValue(4.0, _children=(c, a), _op="*")
        e = MicroValue(5.0, iter((d,)), "tanh")  # an iterator: read once, the engine given a tuple
    assert [n[1] for n in log.of("node_created")] == [(), (), (a, b), (c, a), (d,)]
    assert e._prev == {d}
    log = EventLog()
    with attach(SetChildrenValue, log):
        x, y = SetChildrenValue(2.0), SetChildrenValue(3.0)
        z = x - y
    assert log.of("node_created")[-1][:2] == (z, (x, y))


def test_what_a_sink_makes_is_not_recorded_and_nested_recordings_each_get_theirs(hooks_path):
    import adtrace

    class Maker(EventLog):
        def node_created(self, node, children, op, data):
            MicroValue(0.0) + MicroValue(1.0)  # quiet: not recorded
            self.events.append(("node_created", node, children, op, data))

    log = Maker()
    with attach(MicroValue, log):
        x = MicroValue(2.0)
        (x * x).backward()
    assert [e[3] for e in log.events if e[0] == "node_created"] == ["", "*"]
    with adtrace.record(engine="micrograd") as outer:
        x = MicroValue(2.0)
        with adtrace.record(engine="micrograd") as inner:
            y = x * x
            y.backward()
    assert len(outer.events) > len(inner.events) > 0


def test_another_thread_and_a_context_made_before_run_unhooked_both_ways(hooks_path):
    log, made = EventLog(), []
    with attach(MicroValue, log):
        worker = threading.Thread(target=lambda: made.append(MicroValue(1.0) * MicroValue(2.0)))
        worker.start()
        worker.join()
        contextvars.copy_context().run(lambda: made.append(MicroValue(3.0)))
    assert len(made) == 2 and [n[0] for n in log.of("node_created")] == [made[1]]


def test_a_sink_put_in_place_of_another_gets_every_callback_from_then_on(hooks_path):
    """The compiled hooks read a sink's callbacks once per sink (``_state.h``'s ``SinkCache``): another sink put in
    the same hooks' place (a nested recording's fan-out, then the outer recorder again) gets them all from then on,
    the one before none."""
    engine = types.SimpleNamespace(name="test", cls=MicroValue, shape=check_shape(MicroValue),
                                   pass_start=(MicroValue, "backward"), local_backward=(MicroValue, "_backward"),
                                   grad_write=(MicroValue, "grad"))
    hooks, patcher, first, second = ClassHooks(engine), Patcher(), EventLog(), EventLog()
    hooks.install(patcher)
    told = []
    try:
        for sink in (first, second, first):
            token, before = hooks.active.set(sink), len(sink.events)
            try:
                x = MicroValue(3.0)
                (x * x).backward()
            finally:
                hooks.active.reset(token)
            told.append(sink.kinds()[before:])
    finally:
        patcher.undo()
    one_pass = ["node_created", "node_created", "backward_started", "seeded", "local_backward_started",
                "grad_written", "grad_written", "local_backward_ended", "local_backward_started",
                "local_backward_ended", "backward_ended"]
    assert told == [one_pass] * 3 and len(first.events) == 2 * len(second.events)


def test_no_reference_is_kept_by_the_hooks_after_a_recording(hooks_path):
    import adtrace
    gc.collect()
    before = len(gc.get_objects())
    for _ in range(200):
        with adtrace.record(engine="micrograd"):
            x = MicroValue(2.0)
            (x * x + x).backward()
    x = None
    gc.collect()
    assert len(gc.get_objects()) - before < 100


def test_a_thread_started_inside_a_recorded_local_backward_runs_with_its_own_state_both_ways(hooks_path):
    """The compiled descriptors and hooks keep the thread's state from their last read (by the thread state's
    id): a thread that runs a pass while the main thread is inside a recorded ``_backward`` reads plain
    numbers and is not told (its state is its own, not the main thread's, whose frames are open)."""
    def program(worker_runs):
        log, seen = EventLog(), []

        def worker():
            a = MicroValue(3.0)
            b = a * a
            b.backward()
            seen.append((type(a.grad), a.grad))

        with attach(MicroValue, log):
            x = MicroValue(2.0)
            y = x * x
            closure = y._backward

            def local_backward():
                if worker_runs:
                    thread = threading.Thread(target=worker)
                    thread.start()
                    thread.join()
                closure()

            y._backward = local_backward
            y.backward()
        return [(event[0], *map(repr, event[1:])) for event in log.events], seen

    alone, _ = program(False)
    events, seen = program(True)
    assert seen == [(float, 6.0)] and events == alone and len(alone) > 4


def test_a_threads_state_and_its_frames_and_ends_lists_are_never_replaced(hooks_path):
    """The compiled hooks keep a thread's ``_ThreadState`` from their last read in that thread (``_hooks.c``) and the
    compiled descriptors keep its ``.frames`` and ``.ends`` lists with it (``_descriptors.c``): hooks.py makes one
    state per thread and only appends to and pops from its two lists. A state or list rebound would leave the C
    reading the old one (a pass's writes into ``.grad`` not told). At every callback of passes nested in a
    ``_backward``, of another thread's pass run meanwhile (in a copy of the context: recorded, in its own state)
    and of a pass after: each thread's one state and its two lists, the same objects, holding what the hooks'
    Python put there (the innermost open frame the written value's, the innermost end the running pass's)."""
    seen = []  # (thread, callback, its arguments, the state, its frames and ends lists as they were then)

    class Watching(EventLog):
        def __getattr__(self, callback):
            told = super().__getattr__(callback)

            def watched(*arguments):
                state = vars(MicroValue)["grad"].hooks.local.state
                seen.append((threading.get_ident(), callback, arguments, state, state.frames, state.ends,
                             list(state.frames), list(state.ends)))
                told(*arguments)
            return watched

    def worker():
        a = MicroValue(3.0)
        (a * a + a).backward()

    log = Watching()
    with attach(MicroValue, log):
        x = MicroValue(2.0)
        y = x * x + x
        closure, ran = y._backward, []

        def local_backward():
            if not ran:  # (the first pass's visit only)
                ran.append(y)
                z = x * 3.0
                z.backward()  # a pass inside a _backward: its frames and ends on top of the open ones
                context = contextvars.copy_context()
                thread = threading.Thread(target=context.run, args=(worker,))
                thread.start()
                thread.join()
            closure()

        y._backward = local_backward
        y.backward()
        (x * y).backward()
    threads = {row[0] for row in seen}
    assert len(threads) == 2 and threading.get_ident() in threads
    for thread in threads:
        rows = [row for row in seen if row[0] == thread]
        assert len({(id(row[3]), id(row[4]), id(row[5])) for row in rows}) == 1, "a state or list replaced"
        ends = []  # the passes running, as the callbacks tell them
        for _, callback, arguments, _, _, _, frames, state_ends in rows:
            if callback == "backward_started":
                assert state_ends == ends  # (told before its end is pushed)
                ends.append(arguments[0])
            elif callback == "backward_ended":
                assert ends.pop() is arguments[0] and state_ends == ends  # (told after its end is popped)
            else:
                assert [id(end) for end in state_ends] == [id(end) for end in ends], callback
            if callback == "grad_written" and frames:
                assert frames[-1].node is arguments[0]
    assert seen[0][3] is not [row for row in seen if row[0] != seen[0][0]][0][3]  # (each thread its own state)
    assert sum(row[1] == "backward_started" for row in seen) == 4  # (y's, z's inside it, the thread's, x * y's)
    assert sum(row[1] == "grad_written" and row[0] != seen[0][0] for row in seen) == 4  # (the thread's pass told)
    assert sum(row[1] == "grad_written" and len(row[7]) == 2 for row in seen) >= 2  # (z's pass, inside y's visit)

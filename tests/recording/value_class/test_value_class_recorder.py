"""record(engine="micrograd") and record(engine=MyValue): the events, labels, seeds and writes of the
engine's real run; results bit-identical; the class restored exactly; the session's guarantees."""

import asyncio
import contextlib
import contextvars
import inspect
import os
import sys
import threading
import warnings

import numpy as np
import pytest
from autograd import grad
from micrograd.engine import Value as MicroValue

import adtrace
from adtrace.recording import registry
from adtrace.recording.micrograd import engine as micrograd_engine, hooked_classes
from adtrace.recording.fanout import callbacks_of
from adtrace.recording.recorder import RecorderWarning
from adtrace.recording.value_class.hooks import Callbacks
from adtrace.recording.value_class.recorder import PythonRecorder, Recorder
import compiled_twins
import learner_writes
from children import fork_while
from restored import assert_restored
from value_classes import ArrayValue, BuggyValue, SlotValue, Value, ZeroingValue

from test_value_class_hooks import CASES, exact, run_unhooked


def recorded(cls, f, *args, **options):
    with adtrace.record(engine=cls, **options) as rec:
        out = f(*map(MicroValue if cls == "micrograd" else cls, args))
        out.backward()
    return rec


def kinds(rec):
    return [e.kind for e in rec.events]


# ---- what is recorded

def test_x_times_x_in_micrograd_as_autograd_events():
    rec = recorded("micrograd", lambda x: x * x, 3.0)
    assert rec.engine == "micrograd" and rec.code.name == "Value.backward"
    assert kinds(rec) == ["node", "node", "backward_start", "toposort", "vjp", "add_outgrads", "add_outgrads",
                          "toposort", "vjp", "backward_end"]
    leaf, mul = rec.of_kind("node")
    assert (leaf.label, leaf.primitive, leaf.parents, leaf.value) == ("v0_leaf", "", (), 3.0)
    assert (mul.label, mul.primitive, mul.argnums, mul.parents, mul.value) == ("v1_mul", "*", (0, 1),
                                                                                ("v0_leaf", "v0_leaf"), 9.0)
    (start,) = rec.of_kind("backward_start")
    assert (start.end, exact(start.seed), start.query) == ("v1_mul", exact(1), 1)  # micrograd seeds the int 1
    assert rec.visit_order(1) == ["v1_mul", "v0_leaf"]
    vjp = rec.of_kind("vjp")
    assert [(e.node, e.outgrad, e.ingrads) for e in vjp] == [("v1_mul", 1, (3.0, 3.0)), ("v0_leaf", 6.0, ())]
    adds = rec.of_kind("add_outgrads")
    assert [(a.node, a.position, a.parent, a.argnum) for a in adds] == [("v1_mul", 0, "v0_leaf", 0),
                                                                        ("v1_mul", 1, "v0_leaf", 1)]
    assert [(a.previous, a.contribution, a.result, a.replaced) for a in adds] == [
        ((0, False), 3.0, (3.0, False), False), ((3.0, False), 3.0, (6.0, False), False)]
    assert {(e.mode, e.level) for e in rec.events} == {("rev", 0)}
    assert [e.query for e in rec.events] == [None, None] + [1] * 8


def test_statements_are_the_engines_own():
    rec = recorded("micrograd", lambda x: x * x, 3.0)
    statements = [rec.statement(e) for e in rec.events if e.query]
    assert statements == ["self.grad = 1", "for v in reversed(topo):", "v._backward()", "v._backward()",
                          "v._backward()", "for v in reversed(topo):", "v._backward()", "def backward(self):"]
    rows = rec.snapshots(1)
    assert [r.outgrads for r in rows][-1] == {"v1_mul": 1, "v0_leaf": 6.0}
    assert [r.outgrads.get("v0_leaf") for r in rows] == [None, None, None, 3.0, 6.0, 6.0, 6.0, 6.0]


def test_labels_name_symbolic_ops_and_keep_the_op_as_written():
    def f(a):
        return ((a + 1) * a ** 2).relu() / a - a

    rec = recorded("micrograd", f, 2.0)
    nodes = rec.of_kind("node")
    assert [e.label for e in nodes] == ["v0_leaf", "v1_leaf", "v2_add", "v3_pow2", "v4_mul", "v5_ReLU",
                                        "v6_pow_neg1", "v7_mul", "v8_leaf", "v9_mul", "v10_add"]
    assert [e.primitive for e in nodes] == ["", "", "+", "**2", "*", "ReLU", "**-1", "*", "", "*", "+"]
    rec = recorded(Value, lambda x: x.tanh().exp(), 0.5)
    assert [e.label for e in rec.of_kind("node")] == ["v0_leaf", "v1_tanh", "v2_exp"]


@pytest.mark.parametrize("cls, replaced, grad", [(Value, [False, False], 2.0), (BuggyValue, [True, True], 1.0)])
def test_an_assignment_is_recorded_as_replacing(cls, replaced, grad):
    rec = recorded(cls, lambda a: a + a, 3.0)
    adds = rec.of_kind("add_outgrads")
    assert [a.replaced for a in adds] == replaced
    assert [(a.previous[0], a.contribution, a.result[0]) for a in adds] == [(0.0, 1.0, 1.0), (1.0, 1.0, grad)]
    assert rec.snapshots(1)[-1].outgrads["v0_leaf"] == grad


@pytest.mark.parametrize("cls, x, replaced", [
    ("SignedValue", 3.0, [False] * 8), ("SignedArray", [3.0], [False] * 8),  # every form adds
    ("AssignValue", 3.0, [True] * 4), ("AssignArray", [3.0], [True] * 4),    # the = bug in every op
    ("SignedValue", np.float64(3.0), [False] * 8),  # a float64 .grad is tracked as a float is
    ("SignedValue", learner_writes.UNTRACKED(3.0), [False] * 7 + [None]),  # x.grad a float32 (untracked), read
])
def test_each_write_recorded_as_it_is(cls, x, replaced):
    """``(0.1 - (x*x - x)) + x`` (``x*x - x`` for the Assign classes): each write's ``replaced``, and
    its contribution the ``.grad`` difference it made (``-c`` for ``grad -= c``), None when not known."""
    import learner_writes

    engine = getattr(learner_writes, cls)
    f = (lambda a: a * a - a) if cls.startswith("Assign") else (lambda a: (0.1 - (a * a - a)) + a)
    rec = recorded(engine, f, x)
    adds = [a for a in rec.of_kind("add_outgrads") if a.node is not None]
    assert [a.replaced for a in adds] == replaced
    for a in adds:
        if a.replaced is None:
            assert a.contribution is None
        elif a.replaced:
            assert np.array_equal(a.contribution, a.result[0])
        elif a.previous[0] is not None:  # (an array's first write in place: the recorder kept no copy before it)
            assert np.array_equal(np.add(a.previous[0], a.contribution), a.result[0])


def test_sites_name_the_users_line_not_the_engines_method():
    def f(a):
        b = a * 2.0
        return b - a  # __sub__ -> __neg__ -> __mul__, then __add__

    rec = recorded("micrograd", f, 3.0, sites=True)
    line = f.__code__.co_firstlineno
    here = "tests/recording/value_class/test_value_class_recorder.py:"
    assert [e.site for e in rec.of_kind("node")][1:] == [here + str(line + 1)] * 2 + [here + str(line + 2)] * 3


def test_a_zeroing_backward_records_its_writes_around_the_seed():
    with adtrace.record(engine=ZeroingValue) as rec:
        x = ZeroingValue(2.0)
        y = x * ZeroingValue(3.0)
        x.grad = 7.0
        y.backward()
    events = rec.query_events(1)
    zeroing = [e for e in events[:4] if e.kind == "add_outgrads"]
    assert [e.kind for e in events][:4] == ["add_outgrads"] * 3 + ["backward_start"]
    assert sorted((e.parent, e.previous[0], e.result[0]) for e in zeroing) == [
        ("v0_leaf", 7.0, 0.0), ("v1_leaf", 0.0, 0.0), ("v2_mul", 0.0, 0.0)]
    assert all(e.node is None and e.replaced is None for e in zeroing)
    assert rec.statement(zeroing[0]) == "v.grad = 0.0" and events[3].seed == 1.0


def test_values_made_before_the_recording():
    x = MicroValue(3.0)
    y = x * x
    with adtrace.record(engine="micrograd") as rec:
        y.backward()
    assert rec.visit_order(1) == ["u0_unrecorded", "u1_unrecorded"]
    assert [e.ingrads for e in rec.of_kind("vjp")] == [(3.0, 3.0), ()]  # in write order: children unknown
    assert [(a.node, a.position, a.parent) for a in rec.of_kind("add_outgrads")] == [
        ("u0_unrecorded", None, "u1_unrecorded")] * 2


def test_arrays_updated_in_place_keep_their_history():
    rec = recorded(ArrayValue, lambda x: (x * x) * x, [1.0, 2.0])
    into_x = [a for a in rec.of_kind("add_outgrads") if a.parent == "v0_leaf"]
    assert [a.result[1] for a in into_x] == [True, True, True]  # written in place
    assert [a.result[0].tolist() for a in into_x] == [[1.0, 4.0], [2.0, 8.0], [3.0, 12.0]]
    assert [None if a.previous[0] is None else a.previous[0].tolist() for a in into_x] == [
        None, [1.0, 4.0], [2.0, 8.0]]  # the first: the zeros micrograd made, mutated before it was seen
    assert [a.contribution.tolist() for a in into_x] == [[1.0, 4.0]] * 3  # exactly what each += added


@pytest.mark.parametrize("capture, kept", [("structure", None), ("auto", "summary"), ("full", "array")])
def test_capture_levels(capture, kept):
    rec = recorded(ArrayValue, lambda x: x * x, list(range(100)), capture=capture)
    value = rec.of_kind("node")[1].value
    if kept is None:
        assert value is None and rec.of_kind("add_outgrads")[0].result[0] is None
    elif kept == "summary":
        assert value.shape == (100,) and value.max == 99.0 ** 2
    else:
        assert np.array_equal(value, np.arange(100.0) ** 2)


# ---- bit-identical results, restoring the class

@pytest.mark.parametrize("name", sorted(CASES))
def test_results_bit_identical_with_and_without_recording(name):
    cls, build = CASES[name]
    root, nodes, plain = run_unhooked(build)
    with adtrace.record(engine=cls) as rec:
        root.backward()
    assert rec.failure is None and len(rec.of_kind("toposort")) == len(nodes)
    assert [(exact(v.data), exact(v.grad)) for v in nodes] == plain


class Midway(RuntimeError):
    pass


@pytest.mark.parametrize("cls", [MicroValue, Value, BuggyValue, SlotValue], ids=lambda c: c.__name__)
@pytest.mark.parametrize("ending", ["normal", "ValueError", "KeyboardInterrupt", "backward raises"])
def test_leaving_restores_the_class(cls, ending):
    before = dict(vars(cls))
    raised = {"normal": None, "ValueError": ValueError, "KeyboardInterrupt": KeyboardInterrupt,
              "backward raises": Midway}[ending]
    with pytest.raises(raised) if raised else contextlib.nullcontext():
        with adtrace.record(engine=cls) as rec:
            x = cls(3.0)
            y = x * x
            if ending == "backward raises":
                def failing():
                    raise Midway("midway")
                x._backward = failing
            y.backward()
            if raised in (ValueError, KeyboardInterrupt):
                raise raised()
    assert_restored(cls, before)
    if ending == "backward raises":
        assert rec.of_kind("backward_end")[0].error == "Midway" and rec.visit_order(1)[-1] == "v0_leaf"
    x = cls(2.0)
    (x * x).backward()
    assert x.grad == 4.0 and type(x.grad) is float


def test_recordings_left_out_of_order_restore_the_class():
    before = dict(vars(Value))
    outer, inner = adtrace.record(engine=Value), adtrace.record(engine=Value)
    outer.__enter__()
    inner.__enter__()
    with pytest.raises(adtrace.RecordingOrderError):
        outer.__exit__(None, None, None)
    assert_restored(Value, before)


# ---- several recordings, engines and threads

def test_nested_recordings_of_one_class_each_get_every_event_once():
    before = dict(vars(Value))
    with adtrace.record(engine=Value) as outer:
        with adtrace.record(engine=Value) as inner:
            a = Value(3.0)
            (a + a).backward()
            assert hooked_classes() == (Value,)
        b = Value(1.0)
        (b * b).backward()
    assert_restored(Value, before)
    assert kinds(inner) == kinds(outer)[:len(kinds(inner))] and len(inner.queries) == 1 == len(outer.queries) - 1
    assert [e.label for e in outer.of_kind("node")] == ["v0_leaf", "v1_add", "v2_leaf", "v3_mul"]


def test_micrograd_and_autograd_recorded_side_by_side():
    with adtrace.record() as auto, adtrace.record(engine="micrograd") as micro:
        grad(lambda x: x * x)(3.0)
        x = MicroValue(3.0)
        (x * x).backward()
    assert auto.engine == "autograd" and auto.code is None and len(auto.of_kind("add_outgrads")) == 2
    assert [e.label for e in micro.of_kind("node")] == ["v0_leaf", "v1_mul"] and not micro.of_kind("root")
    assert [a.result for a in auto.of_kind("add_outgrads")] == [(3.0, False), (6.0, True)]
    assert [a.result for a in micro.of_kind("add_outgrads")] == [(3.0, False), (6.0, False)]


def test_another_thread_runs_unrecorded():
    results = {}

    def other():
        x = Value(3.0)
        (x * x).backward()
        results["grad"] = vars(x)["grad"]

    with adtrace.record(engine=Value) as rec:
        thread = threading.Thread(target=other)
        thread.start()
        thread.join()
    assert rec.events == [] and results == {"grad": 6.0}


def test_a_thread_in_a_copy_of_the_recording_context_is_left_out_and_said_once():
    """Two threads running in copies of the block's context (``contextvars.copy_context().run``, as
    ``asyncio.to_thread`` does) shared its recorder and mixed their passes into each other's: they are
    not recorded (one ``RecorderWarning``), the entering thread's passes are exactly its own, and a
    ``record()`` entered in such a thread records that thread."""
    results, inner = {}, {}

    def work(x, rounds, own=False):
        with adtrace.record(engine=Value) if own else contextlib.nullcontext() as rec:
            for _ in range(rounds):
                value = Value(x)
                (value * value + value).backward()
        results[x], inner[x] = vars(value)["grad"], rec

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with adtrace.record(engine=Value) as rec:
            threads = [threading.Thread(target=contextvars.copy_context().run, args=(work, x, 300, x == 5.0))
                       for x in (2.0, 5.0)]
            for thread in threads:
                thread.start()
            work(3.0, 50)
            for thread in threads:
                thread.join()
    told = [w for w in caught if issubclass(w.category, RecorderWarning)]
    assert len(told) == 1 and "not recorded" in str(told[0].message)
    assert results == {2.0: 5.0, 5.0: 11.0, 3.0: 7.0}
    assert len(rec.queries) == 50 and {e.value for e in rec.of_kind("node")} == {3.0, 9.0, 12.0}
    assert len(inner[5.0].queries) == 300 and {e.value for e in inner[5.0].of_kind("node")} == {5.0, 25.0, 30.0}
    for pass_events in ([e for e in r.events if e.query == q] for r in (rec, inner[5.0]) for q in r.queries):
        assert [e.kind for e in pass_events] == ["backward_start", "toposort", "vjp", "add_outgrads", "add_outgrads",
                                                 "toposort", "vjp", "add_outgrads", "add_outgrads", "toposort", "vjp",
                                                 "backward_end"]


def test_asyncio_tasks_each_record_only_what_they_run():
    async def task(x, rounds):
        with adtrace.record(engine=Value) as rec:
            for _ in range(rounds):
                value = Value(x)
                (value * value).backward()
                await asyncio.sleep(0)  # the other task runs here, inside this one's block
        return rec

    async def both():
        return await asyncio.gather(task(3.0, 5), task(1.0, 7))

    before = dict(vars(Value))
    threes, ones = asyncio.run(both())
    assert_restored(Value, before)
    assert len(threes.queries) == 5 and {e.value for e in threes.of_kind("node")} == {3.0, 9.0}
    assert len(ones.queries) == 7 and {e.value for e in ones.of_kind("node")} == {1.0}


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")  # (3.12+: on purpose)
def test_fork_while_another_thread_records():
    """The child holds no other thread's recording: the class restored, and it records itself."""
    recorded(Value, lambda x: x * x, 3.0)  # (the engine's modules imported before any fork: a fork in the middle
    # of a first import leaves the import's lock held in the child, which then hangs; run alone, this test did)
    before = dict(vars(Value))

    def keep_recording():
        with adtrace.record(engine=Value):
            x = Value(3.0)
            (x * x).backward()

    def in_child():
        restored = dict(vars(Value)) == before and hooked_classes() == ()
        return restored and len(recorded(Value, lambda x: x * x, 3.0).of_kind("add_outgrads")) == 2

    statuses = fork_while(keep_recording, in_child)
    assert statuses == [0] * 20
    assert_restored(Value, before)


def test_the_recorders_events_are_written_inline():
    """Its hot path calls no packer: each write(...) is compiled as the packer's own statements."""
    methods = [inspect.unwrap(function) for name, function in vars(PythonRecorder).items()
               if inspect.isfunction(function) and "write(" in inspect.getsource(function)]
    assert len(methods) >= 6 and all("write" not in method.__code__.co_names for method in methods)


def test_a_failing_recorder_warns_and_the_engine_runs_on(monkeypatch):
    def broken(self, *args):
        raise ZeroDivisionError("recorder bug")

    monkeypatch.setattr(Recorder, "_start", broken)  # (a helper, called when the pass's first visit starts)
    with pytest.warns(adtrace.RecorderWarning, match="recorder bug"):
        with adtrace.record(engine=Value) as rec:
            x = Value(3.0)
            (x * x).backward()
        rec.events  # (said by the time the recording is read: its calls may be told then, value_class/deferred.py)
    assert x.grad == 6.0 and "ZeroDivisionError" in rec.failure
    assert kinds(rec) == ["node", "node"]  # what it recorded before it failed


@pytest.mark.parametrize("callback", callbacks_of(Callbacks))
def test_each_callback_that_fails_stops_the_recorder_and_the_engine_runs_on(monkeypatch, callback):
    """Each callback is guarded (the hot ones write their guard out): an internal error in it warns,
    the recording keeps what it had, the engine's results are its own. (The Python methods: the compiled
    twin's own errors, test_value_class_recorder_twin.py.)"""
    from adtrace.recording.value_class import recorder as module

    class Broken:
        def get_ident(self):  # (every callback asks for the thread first)
            if sys._getframe(1).f_code.co_name == callback:
                raise ZeroDivisionError("recorder bug")
            return threading.get_ident()

    monkeypatch.setattr(module, "threading", Broken())
    with pytest.warns(adtrace.RecorderWarning, match="recorder bug"), compiled_twins.pure_python("recorder"):
        with adtrace.record(engine=Value) as rec:
            x = Value(3.0)
            (x * x + x).backward()
        rec.events  # (said by the time the recording is read)
    assert x.grad == 7.0 and "ZeroDivisionError" in rec.failure


def test_warnings_as_errors_do_not_break_a_clean_recording():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rec = recorded(SlotValue, lambda x: x * x + x, 1.5)
    assert rec.snapshots(1)[-1].outgrads["v0_leaf"] == 4.0


def test_a_users_patch_of_the_class_inside_a_recording_is_kept_and_said():
    before = dict(vars(MicroValue))

    def backward(self):
        return before["backward"](self)

    try:
        with pytest.warns(adtrace.PatchConflictWarning, match="Value.backward"):
            with adtrace.record(engine="micrograd"):
                MicroValue.backward = backward
        assert vars(MicroValue)["backward"] is backward
        assert vars(MicroValue)["__init__"] is before["__init__"] and "grad" not in vars(MicroValue)
    finally:
        MicroValue.backward = before["backward"]
    assert dict(vars(MicroValue)) == before


def test_deleting_a_hook_inside_a_recording_restores_the_rest(monkeypatch):
    monkeypatch.setattr(micrograd_engine, "REWRITE", False)  # (the descriptors: a hook point the class has none of)
    before = dict(vars(MicroValue))
    with adtrace.record(engine="micrograd"):
        x = MicroValue(3.0)
        del MicroValue.grad  # adtrace's descriptor: the class had none of its own
        (x * x).backward()
    assert dict(vars(MicroValue)) == before and all(vars(MicroValue)[k] is v for k, v in before.items())
    assert registry.active_recordings() == 0 and x.grad == 6.0


def test_a_patch_undone_after_the_recording_leaves_the_class_as_it_was_after_the_next_one():
    """``mock.patch.object(Value, "backward", ...)`` started inside the block and stopped after it
    puts back the recording's own (stale) hook: the next recording records once, not twice, and
    ends with the class's own ``backward`` and ``__init__`` again."""
    from unittest import mock

    own = {name: vars(Value)[name] for name in ("__init__", "backward")}
    for name in own:
        with pytest.warns(adtrace.PatchConflictWarning, match=f"Value.{name}"):
            with adtrace.record(engine=Value):
                patch = mock.patch.object(Value, name, lambda self, *args: None)
                patch.start()
        patch.stop()  # puts back the hook it found
        with adtrace.record(engine=Value) as rec:
            a = Value(3.0)
            (a * a).backward()
        assert a.grad == 6.0 and len(rec.of_kind("node")) == 2 and len(rec.of_kind("backward_start")) == 1
        assert {n: vars(Value)[n] for n in own} == own, name
    assert registry.active_recordings() == 0


def test_each_visit_of_the_pass_is_numbered_in_order():
    """``for v in reversed(topo)``: the k-th node visited is at position k (the call sequence's
    "position k"), as autograd's toposort events are."""
    from micrograd.engine import Value as MicroValue

    with adtrace.record(engine=MicroValue) as rec:
        a = MicroValue(2.0)
        (a * a + a).backward()
    visits = [e for e in rec.events if e.kind == "toposort"]
    assert [e.position for e in visits] == [0, 1, 2]


def test_a_node_made_inside_a_pass_run_within_another_belongs_to_the_inner_pass():
    """A class whose backward() first runs another graph's pass, and a ``_backward`` that makes a
    value (a learner computing with the class itself): the value is made during the inner pass."""
    from value_classes import ChainedValue

    class Chained(ChainedValue):
        def __mul__(self, other):
            out = super().__mul__(other)
            rule = out._backward

            def _backward():
                type(self)(0.0)  # a scratch value, made while this rule runs
                rule()
            out._backward = _backward
            return out

    with adtrace.record(engine=Chained) as rec:
        c = Chained(5.0)
        d = c * c
        b = Chained(2.0) + Chained(3.0)
        b.first = (d,)
        b.backward()
    d_label = next(e.label for e in rec.of_kind("node") if e.primitive == "*")
    ends = {q: rec.query_events(q)[0].end for q in rec.queries}
    inner = next(q for q, end in ends.items() if end == d_label)
    outer = next(q for q in ends if q != inner)
    assert outer < inner  # b's pass began first (its number), d's ran inside it
    made = [e for e in rec.of_kind("node") if e.query is not None]
    assert [e.query for e in made] == [inner]
    assert c.grad == 10.0

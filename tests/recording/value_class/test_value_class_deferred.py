"""deferred.py: a recompiled class's calls logged as they happen and told to the recorder when the recording is
read: the same events as the descriptors', at every capture level, nested, read mid-recording, from another
thread; nothing told before a read; the class as it was after the block, read or not. Each test runs with the
compiled helpers (``_deferred.c``, when built) and with the template's (the reference)."""

import threading
import warnings

import pytest
from micrograd.engine import Value as MicroValue

import adtrace
import compiled_twins
import zoo_recordings
from adtrace.recording.micrograd import engine as micrograd_engine
from adtrace.recording.value_class.rewrite import HELPERS, instrument
from adtrace.report.export import events_json
from restored import assert_restored

way = compiled_twins.fixture("deferred")  # each test compiled (when built) and in pure Python
pytestmark = pytest.mark.usefixtures("way")


@pytest.fixture
def descriptors(monkeypatch):
    """Within it, every class is recorded through the descriptors (the reference)."""
    def use(flag):
        monkeypatch.setattr(micrograd_engine, "REWRITE", not flag)
    return use


def both_ways(descriptors, record):
    descriptors(True)
    reference = record()
    descriptors(False)
    return record(), reference


@pytest.mark.parametrize("capture", ["structure", "auto", "full"])
def test_the_zoo_and_micrograd_are_recorded_as_the_descriptors_record_them(capture, monkeypatch, descriptors):
    """Every learner's class (those recompiled and those not) and two steps of micrograd's MLP: the same events
    (``full`` keeps call sites: told at each call; the others when read)."""
    classes = zoo_recordings.prepared(monkeypatch)
    mine, reference = both_ways(descriptors, lambda: zoo_recordings.recorded(classes, capture))
    zoo_recordings.assert_recorded_alike(classes, mine, reference)
    deferred = [cls for cls in classes if instrument(micrograd_engine.engine_for(cls).shape) is not None]
    assert len(deferred) == 9 and instrument(micrograd_engine.engine_for(MicroValue).shape) is not None


@pytest.mark.parametrize("capture", ["structure", "auto", "full"])
def test_the_compiled_helpers_record_the_zoo_and_micrograd_as_the_template_does(capture, monkeypatch, way):
    if way != "compiled":
        pytest.skip("compares the compiled helpers with the template's")
    classes = zoo_recordings.prepared(monkeypatch)
    mine, reference = compiled_twins.both_ways(lambda: zoo_recordings.recorded(classes, capture), "deferred")
    zoo_recordings.assert_recorded_alike(classes, mine, reference)


def test_an_error_in_a_recompiled_closure_is_recorded_and_raised_as_the_descriptors_do(descriptors):
    """``b.grad += c.grad`` failing inside ``c``'s closure (``"x" + 1``): the error is the engine's, raised from the
    user's line, and the visit it ended is recorded with it."""
    def record():
        with adtrace.record(engine="micrograd") as recording:
            a = MicroValue(2.0)
            b = a.relu()
            c = b + 1.0
            b.grad = "x"
            with pytest.raises(TypeError) as raised:
                c.backward()
        assert raised.value.__context__ is None
        assert any(str(entry.path).endswith("engine.py") for entry in raised.traceback)  # (micrograd's line in it)
        return events_json(recording), str(raised.value), b.grad, a.grad

    mine, reference = both_ways(descriptors, record)
    assert mine == reference and mine[2:] == ("x", 0)
    assert "TypeError" in mine[0] and "str" in mine[1]


def test_an_error_while_a_failed_visit_is_logged_has_the_closure_s_error_as_its_context(monkeypatch):
    """The visit's ``finally:`` runs with the closure's error being handled: an error raised there (here the log's
    flush, made eager) is chained to it by Python, as the template's ``finally:`` is."""
    from adtrace.recording.value_class import deferred

    switch, flush = deferred.Log.switch, deferred.Log.flush

    def eager_switch(log, sink):
        switch(log, sink)
        log.eager = True

    def failing_flush(log):
        if log.items[-3:-2] == [deferred.LEFT] and log.items[-1] is not None:  # (the failed visit's record)
            try:
                raise KeyError("inner")
            except KeyError:
                raise RuntimeError("while logging")
        flush(log)

    monkeypatch.setattr(deferred.Log, "switch", eager_switch)
    monkeypatch.setattr(deferred.Log, "flush", failing_flush)
    with adtrace.record(engine="micrograd"):
        b = MicroValue(2.0).relu()
        c = b + 1.0
        b.grad = "x"  # (c's closure: b.grad += c.grad, "x" + 1)
        with pytest.raises(RuntimeError, match="while logging") as raised:
            c.backward()
    chain = []
    error = raised.value
    while error is not None:
        chain.append(type(error).__name__)
        error = error.__context__
    assert chain == ["RuntimeError", "KeyError", "TypeError"]


def run(x=3.0):
    a = MicroValue(x)
    b = a * a + a
    (b.relu() ** 2).backward()
    return a


def test_nothing_is_told_before_a_read_and_the_class_is_restored_read_or_not():
    before = dict(vars(MicroValue))
    module = __import__("micrograd.engine", fromlist=["Value"])
    with adtrace.record(engine="micrograd") as recording:
        a = run()
        assert len(recording._log) == 0  # (logged, not told)
    assert_restored(MicroValue, before)
    assert not any(hasattr(module, name) for name in HELPERS)
    assert a.grad == 2 * 12.0 * 7.0
    kinds = [e.kind for e in recording.events]
    assert kinds.count("node") == 5 and kinds.count("add_outgrads") == 6 and kinds[-1] == "backward_end"
    assert recording.events == recording.events  # (told once)


def test_read_mid_recording_then_on_is_what_the_descriptors_record(descriptors):
    def record():
        with adtrace.record(engine="micrograd") as recording:
            run(2.0)
            first = events_json(recording)
            run(5.0)
        return first, events_json(recording)

    mine, reference = both_ways(descriptors, record)
    assert mine == reference and mine[0] != mine[1]


def test_nested_recordings_each_get_their_own_as_with_the_descriptors(descriptors):
    def record():
        with adtrace.record(engine="micrograd", capture="full") as outer:
            run(2.0)
            with adtrace.record(engine="micrograd", capture="structure") as inner:
                run(3.0)
            run(4.0)
        return events_json(inner), events_json(outer)

    mine, reference = both_ways(descriptors, record)
    assert mine == reference


def test_a_read_from_another_thread_tells_the_recording_thread_s_calls(descriptors):
    def record():
        with adtrace.record(engine="micrograd") as recording:
            run(2.0)
        read = []
        thread = threading.Thread(target=lambda: read.append(events_json(recording)))
        thread.start()
        thread.join()
        return read[0]

    mine, reference = both_ways(descriptors, record)
    assert mine == reference


def test_a_failure_is_said_when_read_and_an_error_if_warnings_are_errors(monkeypatch):
    from adtrace.recording.value_class.recorder import Recorder

    def broken(self, *args):
        raise ZeroDivisionError("recorder bug")

    monkeypatch.setattr(Recorder, "_start", broken)
    with adtrace.record(engine="micrograd") as recording:
        a = run()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(adtrace.RecorderWarning, match="recorder bug"):
            recording.events
    assert a.grad == 168.0 and "ZeroDivisionError" in recording.failure
    assert [e.kind for e in recording.events] == ["node"] * 5  # (what it recorded before it failed)


def test_values_made_while_recording_work_after_it_and_keep_no_log():
    """A value made inside the block has closures of the recompiled methods: after the block they run as the
    originals would, unrecorded; the recording, once dropped, takes every value it kept with it."""
    import gc
    import weakref

    with adtrace.record(engine="micrograd") as recording:
        x = MicroValue(3.0)
        y = x * x + x
    y.backward()
    assert x.grad == 7.0 and [e.kind for e in recording.events].count("backward_start") == 0
    kept = weakref.ref(x)
    del x, y, recording
    gc.collect()
    assert kept() is None


def test_two_classes_of_one_module_recorded_at_once_each_record_their_own(descriptors):
    """The helpers are each installation's own (free variables of the recompiled code, not module globals)."""
    import value_classes

    def record():
        with adtrace.record(engine=value_classes.MiniValue) as outer:
            x = value_classes.MiniValue(3.0)
            with adtrace.record(engine=value_classes.SlotValue) as inner:
                s = value_classes.SlotValue(2.0)
                (s * s).backward()
            (x * x + x).backward()
        return events_json(outer), events_json(inner), x.grad, s.grad

    mine, reference = both_ways(descriptors, record)
    assert mine == reference and mine[2:] == (7.0, 4.0)


def test_a_wrapped_closure_is_recorded_once(descriptors):
    """A ``_backward`` replaced by a wrapper of the recompiled closure (code adtrace did not read): its writes are
    the recompiled closure's, recorded once."""
    import value_classes

    def record():
        with adtrace.record(engine=value_classes.MiniValue) as recording:
            x = value_classes.MiniValue(3.0)
            y = x * x
            inner = y._backward
            y._backward = lambda: inner()
            y.backward()
        return events_json(recording), x.grad

    mine, reference = both_ways(descriptors, record)
    assert mine == reference and mine[1] == 6.0

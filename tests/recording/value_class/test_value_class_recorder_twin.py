"""The compiled twin of recorder.py (``_recorder.c``: ``Core``, the hot path of node_created, grad_written,
local_backward_started and local_backward_ended): the same events as the pure-Python ``PythonRecorder``, each
rare case handed back to it, an internal error stopping the recorder as the Python's does."""

import contextlib
import sys
import threading

import pytest

import adtrace
import compiled_twins
import value_classes
import zoo_recordings
from adtrace.recording import eventlog
from adtrace.recording.micrograd import engine
from adtrace.recording.value_class import recorder
from adtrace.report.export import events_json

pytestmark = compiled_twins.needs("recorder")
HOT = ("node_created", "local_backward_started", "grad_written", "local_backward_ended")


@contextlib.contextmanager
def python_calls(counts):
    """Counts the calls of the Python callbacks (``PythonRecorder``'s) into ``counts``: the twin's hand-backs."""
    codes = {getattr(recorder.PythonRecorder, name).__code__: name for name in HOT}

    def profile(frame, event, arg):
        if event == "call" and frame.f_code in codes:
            counts[codes[frame.f_code]] = counts.get(codes[frame.f_code], 0) + 1

    sys.setprofile(profile)
    try:
        yield counts
    finally:
        sys.setprofile(None)


def both_ways(record):
    """``record()``'s result with the twin, then with the pure-Python recorder."""
    return compiled_twins.both_ways(record, "recorder")


def made_recorders(monkeypatch):
    """Each recorder made from then on, in a list."""
    made = []

    def make(*args, **kwargs):
        made.append(recorder.Recorder(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(engine, "Recorder", make)
    return made


def test_the_twin_is_the_recorder_made_and_its_state_the_python_methods_own(monkeypatch):
    """Core's slots are the attributes the Python methods read and write: the count of the values the twin
    labelled and of those the Python did (an op's first value) is one count."""
    made = made_recorders(monkeypatch)
    with adtrace.record(engine=value_classes.Value) as recording:
        x = value_classes.Value(3.0)
        y = x * x * x
        y.backward()
    assert [e.label for e in recording.of_kind("node")] == ["v0_leaf", "v1_mul", "v2_mul"]  # (told by then)
    assert len(made) == 1 and isinstance(made[0], recorder._twin.Core)
    assert made[0]._count == 3 and made[0].live is False and made[0]._labels == {}  # (released)


@pytest.mark.parametrize("capture", ["structure", "auto", "full"])
def test_the_twin_records_the_zoo_and_micrograd_as_the_pure_python_does(capture, monkeypatch):
    classes = zoo_recordings.prepared(monkeypatch)
    mine, reference = both_ways(lambda: zoo_recordings.recorded(classes, capture))
    zoo_recordings.assert_recorded_alike(classes, mine, reference)


def test_labels_made_by_the_twin_are_the_python_labels_for_any_op_text_and_count():
    """The twin writes ``f"v{count}_{name}"`` and ``f"{a},{b}"`` itself: the same text as the Python for counts of 1 to
    3 digits, whatever the op's characters (a label's name is reduced to ASCII letters and digits)."""
    from micrograd.engine import Value

    def record():
        with adtrace.record(engine="micrograd") as recording:
            x = Value(2.0)
            for i in range(120):
                op = ("tanh", "é", "√", "\U0001d453")[i % 4]
                x = Value(x.data, (x, Value(1.0)), op)
        return [(e.label, e.parents) for e in recording.of_kind("node")]

    mine, reference = both_ways(record)
    assert mine == reference and mine[-1] == ("v240_op", ("v238_op", "v239_leaf"))
    assert mine[2] == ("v2_tanh", ("v0_leaf", "v1_leaf"))


def test_the_common_case_stays_in_c_and_the_rare_ones_are_handed_back():
    """micrograd's values: each callback's Python method runs only for a case the twin hands back (a pass's first
    visit, an op's first value), not once per value; a value's site kept (capture full) is read there."""
    Value = value_classes.Value

    def record(capture):
        with adtrace.record(engine=Value, capture=capture, sites=capture == "full") as recording:
            xs = [Value(float(i)) for i in range(30)]
            out = xs[0]
            for x in xs[1:]:
                out = out * x + x
            out.backward()
        recording.events  # (told by then: value_class/deferred.py)

    with python_calls({}) as auto:
        record("auto")
    with python_calls({}) as full:
        record("full")
    assert auto == {"node_created": 3, "local_backward_started": 1}  # (each op's first value; the pass's first visit)
    assert full == {"node_created": 88, "local_backward_started": 1}  # (every value: its site read there)


def test_values_made_before_the_recording_are_labelled_by_the_python_as_without_the_twin(monkeypatch):
    Value = value_classes.Value
    zoo_recordings.stable_hash(monkeypatch, Value, "data")  # (its children a set: visited in the same order both ways)

    def record():
        a, b = Value(1.5), Value(-2.0)  # (unrecorded: a pass meets them)
        c = a * b
        with adtrace.record(engine=Value) as recording:
            out = c * a + b
            out.backward()
        return events_json(recording)

    mine, reference = both_ways(record)
    assert mine == reference and "u0_unrecorded" in mine


def test_nested_recordings_fan_out_as_without_the_twin(monkeypatch):
    Value = value_classes.Value
    zoo_recordings.stable_hash(monkeypatch, Value, "data")

    def record():
        with adtrace.record(engine=Value) as outer:
            x = Value(3.0)
            with adtrace.record(engine=Value) as inner:
                y = x * x + x
                y.backward()
            (y * x).backward()
        return events_json(outer), events_json(inner)

    mine, reference = both_ways(record)
    assert mine == reference and "add_outgrads" in mine[1]


def test_another_threads_calls_are_left_out_as_without_the_twin(monkeypatch):
    import contextvars
    Value = value_classes.Value
    zoo_recordings.stable_hash(monkeypatch, Value, "data")

    def record():
        with pytest.warns(adtrace.RecorderWarning, match="copy of the context"):
            with adtrace.record(engine=Value) as recording:
                x = Value(2.0)
                context = contextvars.copy_context()
                thread = threading.Thread(target=context.run, args=(lambda: (x * x).backward(),))
                thread.start()
                thread.join()
                (x + x).backward()
        return events_json(recording)

    mine, reference = both_ways(record)
    assert mine == reference and "backward_start" in mine


@pytest.mark.parametrize("callback", ["local_backward_started", "grad_written", "local_backward_ended"])
def test_an_internal_error_in_the_twin_stops_the_recorder_and_the_engine_runs_on(monkeypatch, callback):
    """A head the twin looks up that fails (eventlog.HEADS raising, for the twin's lookups only, of a query of
    its own: none cached): the
    recorder warns and stops (``fail``), the engine's results are its own."""
    tags = {"local_backward_started": {4}, "grad_written": {6, 1006, 2006}, "local_backward_ended": {5, 1005, 2005}}
    Value = value_classes.Value

    def failing(self, key):
        if key[0] in tags[callback] and sys._getframe(1).f_code.co_filename != recorder.__file__:
            raise ZeroDivisionError("recorder bug")
        return dict.__getitem__(self, key) if key in self else self.__missing__(key)

    started = recorder.PythonRecorder.backward_started

    def backward_started(self, end):
        started(self, end)
        self._passes[-1].number = 10 ** 12 + id(self) % 10 ** 6

    monkeypatch.setattr(type(eventlog.HEADS), "__getitem__", failing)
    monkeypatch.setattr(recorder.Recorder, "backward_started", backward_started)
    with pytest.warns(adtrace.RecorderWarning, match="recorder bug"):
        with adtrace.record(engine=Value) as recording:
            x = Value(3.0)
            y = x * x + x
            y.backward()
        recording.events  # (said by the time the recording is read)
    assert x.grad == 7.0 and "ZeroDivisionError" in recording.failure

"""A recording read back from its JSON export: the same events, in this process or another."""

import json
import subprocess
import sys

import autograd.numpy as anp
import numpy as np
import pytest
from autograd import grad

import adtrace
from adtrace.recording.saved import SavedRecordingError, from_jsonable, load
from adtrace.report.export import events_json, to_jsonable


def recorded(f, *args, **options):
    with adtrace.record(**options) as rec:
        f(*args)
    return rec


CASES = {
    "scalar": lambda: recorded(grad(lambda x: x * x + anp.sin(x)), 3.0, sites=True),
    "arrays": lambda: recorded(grad(lambda x: anp.sum(x * x + x * x + x * x)), np.array([1.0, 2.0])),
    "summaries": lambda: recorded(grad(lambda x: anp.sum(anp.tanh(x))), np.linspace(0, 1, 500)),
    "grad of grad (boxed)": lambda: recorded(grad(grad(lambda x: x ** 3)), 2.0),
    "getitem (sparse)": lambda: recorded(grad(lambda x: x[1] * 2.0), np.array([1.0, 2.0, 3.0]), capture="full"),
    "nan and a dict": lambda: recorded(grad(lambda d: d["a"] * anp.sqrt(d["b"])), {"a": 1.0, "b": np.nan}),
    "micrograd": lambda: _micrograd(),
}


def _micrograd():
    from micrograd.engine import Value

    with adtrace.record(engine="micrograd") as rec:
        x = Value(3.0)
        (x * x + x).backward()
    return rec


@pytest.mark.parametrize("case", list(CASES))
def test_saved_and_loaded_a_recording_has_the_same_events(case, tmp_path):
    rec = CASES[case]()
    rec.save(tmp_path / "r.json")
    loaded = adtrace.load(tmp_path / "r.json")
    assert events_json(loaded) == events_json(rec)  # (every event, every value, as the export writes them)
    assert (loaded.engine, loaded.capture, len(loaded.events), list(loaded.nodes)) == (
        rec.engine, rec.capture, len(rec.events), list(rec.nodes))
    assert [type(e) for e in loaded.events] == [type(e) for e in rec.events]
    assert loaded.queries == rec.queries and loaded.visit_order(rec.user_query()) == rec.visit_order(rec.user_query())
    assert loaded.graph() == rec.graph()  # (parents come back as tuples of labels)


def test_values_come_back_as_what_they_were():
    values = [np.array([[1.0, 2.0]], dtype=np.float32), 1.5 + 2j, np.nan, -np.inf, {1: 2.0}, (1.0, "x"),
              adtrace.Boxed(np.array(3.0), 1)]
    back = [from_jsonable(json.loads(json.dumps(to_jsonable(v)))) for v in values]
    assert back[0].dtype == np.float32 and back[0].shape == (1, 2) and back[1] == 1.5 + 2j
    assert np.isnan(back[2]) and back[3] == -np.inf and back[4] == {1: 2.0} and back[5] == [1.0, "x"]
    assert back[6] == adtrace.Boxed(np.array(3.0), 1) or (back[6].level == 1 and back[6].value == 3.0)


def test_a_saved_recording_says_its_format():
    with adtrace.record() as rec:
        grad(anp.sin)(0.5)
    assert json.loads(events_json(rec))["format"] == 1 and load(events_json(rec)).events == rec.events


def test_what_adtrace_report_json_writes_loads_its_reverse_recording(tmp_path):
    script = tmp_path / "funcs.py"
    script.write_text("import autograd.numpy as anp\n\ndef f(x):\n    return anp.sin(x) * x\n")
    out = subprocess.run([sys.executable, "-m", "adtrace", "report", "funcs.py:f", "--at", "0.5", "--mode", "both",
                          "-o", "r.md", "--json", "r.json"], cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    loaded = load(tmp_path / "r.json")
    assert [e.primitive for e in loaded.of_kind("node")] == ["sin", "multiply"] and loaded.queries == [1]
    assert float(loaded.gradient(1)) == pytest.approx(np.cos(0.5) * 0.5 + np.sin(0.5))


def test_a_diffs_recording_keeps_the_argument_it_differentiated(tmp_path):
    """The argument autograd's root is (``record_call(f, args, argnum)``) is saved with it: a diff of the loaded
    file pairs the root with an engine's leaf of that position, as it does the recording itself."""
    from adtrace.diff.calls import record_call

    rec = record_call(lambda x, y: x * y + anp.sin(y), (2.0, 0.5), argnum=1)
    rec.save(tmp_path / "r.json")
    assert rec.argnum == 1 and load(tmp_path / "r.json").argnum == 1
    assert "argnum" not in json.loads(events_json(recorded(grad(anp.sin), 0.5)))  # (unknown: not written)
    assert load(events_json(recorded(grad(anp.sin), 0.5))).argnum is None


@pytest.mark.parametrize("text, why", [
    ("not json", "not JSON"), ('{"events": 3}', "no list of events"),
    ('{"events": [{"kind": "nonsense"}]}', "not an event"),
    ('{"events": [{"kind": "root", "mode": "rev"}]}', r"event 0 \(root\): no field 'level'"),
    ('{"format": 999, "events": []}', "saved in format 999; this adtrace reads format 1"),
    ('{"engine": "tensorflow", "events": []}', "engine 'tensorflow'"),
    ('{"capture": "weird", "events": []}', "capture 'weird'"),
    ('{"events": [{"kind": "root", "mode": "rev", "level": 0, "label": "v0_root", "zz": 1}]}',
     "fields adtrace does not record: zz"),
    ('{"argnum": -1, "events": []}', "argnum -1: not the number of an argument")])
def test_a_file_that_is_not_a_saved_recording_is_refused_with_why(text, why, tmp_path):
    """Also a file of another format, engine or capture level, or with a field no event has (they were read
    as if they were this format's: a diff of two of them said identical)."""
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(SavedRecordingError, match=why):
        load(path)
    with pytest.raises(SavedRecordingError, match="cannot read"):
        load(tmp_path / "missing.json")

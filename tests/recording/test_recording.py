"""Recording: nodes table, queries, graph."""

import re
from pathlib import Path

import autograd.numpy as anp
import numpy as np
import pytest
from autograd import grad

import adtrace
from adtrace.recording.recording import RecordingWriter


def test_nodes_table_and_graph():
    with adtrace.record() as rec:
        grad(lambda x: anp.sin(x) * anp.sin(x) + x)(0.3)
    assert list(rec.nodes) == ["v0_root", "v1_sin", "v2_sin", "v3_multiply", "v4_add"]
    assert rec.graph() == {"v0_root": (), "v1_sin": ("v0_root",), "v2_sin": ("v0_root",),
                           "v3_multiply": ("v1_sin", "v2_sin"), "v4_add": ("v3_multiply", "v0_root")}
    assert rec.graph("v3_multiply") == {"v3_multiply": ("v1_sin", "v2_sin"), "v1_sin": ("v0_root",),
                                        "v2_sin": ("v0_root",), "v0_root": ()}
    assert repr(rec) == "<Recording capture='auto': 24 events, 5 nodes, 1 backward queries>"


def test_queries_and_events_per_query():
    with adtrace.record() as rec:
        grad(lambda x: x * x)(1.0)
        grad(lambda x: x * 3.0)(1.0)
    assert rec.queries == [1, 2]
    assert [e.kind for e in rec.query_events(2)] == [
        "backward_start", "toposort", "vjp", "add_outgrads", "toposort", "vjp", "backward_end"]
    assert rec.gradient(1) == 2.0 and rec.gradient(2) == 3.0 and rec.gradient(3) is None
    assert rec.visit_order(2) == ["v3_multiply", "v2_root"]


def test_views_read_before_more_events_follow_them():
    """A query's events and the passes are read once per recording while its events stay the same: read
    mid-recording, then again after another pass, or after an event is corrected in place, they follow."""
    with adtrace.record() as rec:
        grad(lambda x: anp.sin(x) * x)(0.5)
        first = rec.query_events(1)
        assert [p.query for p in rec.passes()] == [1] and rec.user_query() == 1
        first.clear()  # (a copy: the caller's own list)
        grad(lambda x: anp.sum(x * 2.0))(np.array([1.0, 2.0]))
    assert [p.query for p in rec.passes()] == [1, 2] and rec.user_query() == 2
    assert len(rec.query_events(1)) > 0 and [e.query for e in rec.query_events(2)] == [2] * len(rec.query_events(2))
    writer, end = RecordingWriter(rec), rec.query_events(2)[-1]
    index, replacement = rec.events.index(end), np.array([-1.0, -1.0])
    writer.update(writer.log.starts[index], lambda stored: replacement if stored is end.result else stored)
    assert rec.query_events(2)[-1].result is replacement and rec.gradient(2) is replacement


def test_an_engine_of_micrographs_shape_names_the_statements_of_its_own_backward():
    """Each event of micrograd's pass is named by the line of micrograd's backward() that made it,
    not by the autograd statement of its event class."""
    from micrograd.engine import Value

    with adtrace.record(engine=Value) as rec:
        (Value(2.0) * Value(3.0)).backward()
    named = {e.kind: rec.statement(e) for e in rec.events}
    assert named["backward_start"] == "self.grad = 1"
    assert named["toposort"] == "for v in reversed(topo):"
    assert named["vjp"] == named["add_outgrads"] == "v._backward()"


def test_a_recording_is_read_only_and_its_recorder_writes_through_the_writer():
    with adtrace.record(calls=True) as rec:
        grad(lambda x: x * x)(3.0)
    for internal in ("log", "update", "event", "before_read", "values", "add_call", "fail"):
        assert not hasattr(rec, internal), internal  # the write side is RecordingWriter's
    for name in ("capture", "engine", "code", "failure", "calls"):
        with pytest.raises(AttributeError):
            setattr(rec, name, None)
    with pytest.raises(TypeError):
        rec.calls["v9_made_up"] = None
    assert set(rec.calls) == {"v1_multiply"} and rec.engine == "autograd" and rec.failure is None

    writer = RecordingWriter(rec)  # (what the session hands to the engine's recorder)
    writer.fail("ValueError: made up")
    assert rec.failure == "ValueError: made up"
    assert writer.values is writer.log.values  # the hot path appends to the log's own list


def test_no_stage_after_recording_reaches_the_write_side():
    """report/, view/, compare/, checker/, tools/ read a Recording through its read API only."""
    package = Path(adtrace.__file__).parent
    reaching = re.compile(r"RecordingWriter|\.writer\b|\b_log\b|\.before_read\b"
                          r"|\._(log|events|nodes|calls|failure|before_read|built|capture|engine|code)\b")
    stages = ("reference", "compare", "checker", "diff", "report", "explain", "view", "tools")
    found = [f"{path.relative_to(package)}:{n}" for stage in stages
             for path in sorted((package / stage).rglob("*.py"))
             for n, line in enumerate(path.read_text().splitlines(), 1) if reaching.search(line)]
    assert found == []


def test_every_renderer_a_recording_calls_is_declared_in_one_place():
    """How a Recording renders itself is declared in adtrace/__init__.py alone, not by importing a stage
    (and the report's section of a later stage, explain's, the same way)."""
    from adtrace.recording.recording import RENDERERS

    source = Path(adtrace.recording.recording.__file__).read_text() + Path(adtrace.report.document.__file__).read_text()
    called = set(re.findall(r'RENDERERS(?:\.get\(|\[)"(\w+)"', source))
    assert called == set(RENDERERS) == {"markdown", "html", "html_inline", "explain", "explanations",
                                                 "graph_svg", "dot", "graph_json", "save", "diff"}
    package = Path(adtrace.__file__).parent
    declaring = sorted(str(path.relative_to(package)) for path in package.rglob("*.py")
                       if re.search(r"RENDERERS(\[[^]]+\]\s*=|\.update\()", path.read_text()))
    assert declaring == ["__init__.py"]
    with adtrace.record() as rec:
        grad(lambda x: x * x)(3.0)
    assert rec._repr_markdown_().startswith("# adtrace recording") and "<iframe srcdoc=" in rec._repr_html_()

"""A query's events are read once, however many nodes explain follows (a long chain took a minute when each
node read them again)."""

from adtrace.explain.explainer import explain_recording
from adtrace.explain.query_index import query_index
from adtrace.recording.events import AddOutgrads, VJPCalled
from view_cases import query_scans, zero_chain


def test_explaining_a_zero_through_a_chain_reads_its_events_as_often_however_long_it_is(monkeypatch):
    short, long = zero_chain(10), zero_chain(80)
    assert query_scans(monkeypatch, lambda: explain_recording(long, largest=False)) == query_scans(
        monkeypatch, lambda: explain_recording(short, largest=False)) <= 3
    (explained,) = explain_recording(long, largest=False)
    assert explained.verdict == "zero" and len(explained.causes) > 80  # every node of the chain followed


def test_the_index_is_made_again_when_the_recording_has_more_events():
    rec = zero_chain(3)
    query = rec.user_query()
    first = query_index(rec, query)
    assert query_index(rec, query) is first
    events = rec.query_events(query)
    assert set(first.vjps) == {e.node for e in events if type(e) is VJPCalled}
    assert sum(map(len, first.accumulations.values())) == sum(type(e) is AddOutgrads for e in events) > 0
    rec._events.append(rec.events[-1])  # (a recording still recording: one more event)
    assert query_index(rec, query) is not first

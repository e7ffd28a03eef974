"""A query's events read once and indexed: its ``vjp`` events by node and its accumulations (``add_outgrads``)
by the node they went into. Explain asks for a node's VJP for every node it follows: each asking
``recording.query_events`` again read every event of the recording (a 4,000-node chain took a minute).

``query_index(recording, query)`` is made once per recording and query and kept while the recording
holds the same events (a recording still recording gets a new one when it has more)."""

from ..recording.events import AddOutgrads, VJPCalled


class QueryIndex:
    def __init__(self, events):
        self.events = events  # the query's events, in order (``recording.query_events``)
        self.vjps, self.accumulations = {}, {}
        for event in events:
            if type(event) is VJPCalled:
                self.vjps.setdefault(event.node, event)  # (a node's VJP runs once per query)
            elif type(event) is AddOutgrads:
                self.accumulations.setdefault(event.parent, []).append(event)


def query_index(recording, query):
    """The ``QueryIndex`` of ``recording``'s ``query``, made once while the recording's events stay the same
    (``Recording.derived``)."""
    return recording.derived(("query_index", query), lambda r: QueryIndex(r.query_events(query)))


class ReadOnce:
    """``recording`` whose ``nodes`` and ``calls`` tables are read once (each read of them checks the recording for
    new events: explain reads them several times for every node it follows). For one explanation, of a recording
    that has ended."""

    def __init__(self, recording):
        self._recording, self.nodes, self.calls = recording, recording.nodes, recording.calls

    def __getattr__(self, name):
        return getattr(self._recording, name)

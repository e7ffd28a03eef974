"""The page's explanations: the input elements whose gradient is zero or not finite (as the report's
Explanations section picks them, ``explain/``), each with the nodes of its paths and its causes, as node
indices of the page's graph, and the step of the user's pass where each cause node's VJP ran.

An element's path nodes are the nodes its paths to the output go through, as if nothing cut them
(``explain.reach.follow``'s ``touched``): a cut node is among them, and they end at the output. In a graph
of more than ``MAX_FOLLOWED`` nodes, the nodes between the input and the output (another part of the
input's too). A cause's
``mark`` says what the page draws at its node: ``cut`` (a zero's cause), ``nan`` (the first non-finite
value of the backward pass), ``origin`` (the forward value already non-finite there), ``unknown`` (where
the recording could not follow the element: not a cause, the point it was lost)."""

from ..explain.elements import parse_selector
from ..explain.explainer import explain_recording
from ..explain.graph import Graph
from ..explain.reach import follow
from ..recording.events import BackwardStart, TraceReturned
from ..recording.snapshots import VJP
from ..report.format import fmt
from .source import ENGINE_STATEMENTS, REVERSE_STATEMENTS

MAX_FOLLOWED = 1000  # nodes: above, an element's paths are its input's, node to node (following it costs
#                      explain's time again: seconds per thousand nodes)


def explanations(recording, node_index, passes):
    """The page's ``explanations`` (``data.py`` documents the format); ``[]`` when no gradient is zero or
    not finite, or the recording cannot be explained (another engine's, values summarised, no trace)."""
    recording = _EventsOnce(recording)
    try:
        found = explain_recording(recording, largest=False)
    except (ValueError, TypeError, KeyError, AttributeError):  # (AttributeError: a recording that ended inside a
        return []                                               # VJP, its root kept without a value; the page stays)
    if not found:
        return []
    query = recording.user_query()
    graph = _graph(recording, query)
    steps = next((p["steps"] for p in passes if p["mode"] == "rev" and p["query"] == query), None)
    # (an engine with its own backward(): its statements, passes.engine_steps)
    vjp = REVERSE_STATEMENTS.index(VJP) if recording.code is None else ENGINE_STATEMENTS.index("vjp")
    at = _steps_by_node(steps, vjp)
    return [_explained(recording, query, graph, e, node_index, steps, at) for e in found]


class _EventsOnce:
    """``recording`` whose ``query_events`` are read once per query: explain reads them for each node it follows
    (a 4,000-node chain's page took 63 s, where the page alone takes 0.6 s)."""

    def __init__(self, recording):
        self.recording, self.read = recording, {}  # query -> its events

    def query_events(self, query):
        if query not in self.read:
            self.read[query] = self.recording.query_events(query)
        return self.read[query]

    def __getattr__(self, name):
        return getattr(self.recording, name)


def _explained(recording, query, graph, explanation, node_index, steps, at):
    causes = [{"node": node_index.get(c.node), "label": c.node, "primitive": c.primitive, "reason": c.reason,
               "line": c.line, "name": c.name, "detail": c.detail, "mark": _mark(explanation, c),
               "step": at.get(node_index.get(c.node))} for c in explanation.causes]
    path = _path_nodes(recording, query, graph, explanation) | {c.node for c in explanation.causes}
    return {"selector": explanation.selector, "gradient": fmt(explanation.gradient), "verdict": explanation.verdict,
            "pass": None if steps is None else f"q{query}", "causes": causes,
            "path": sorted(node_index[label] for label in path if label in node_index)}


def _mark(explanation, cause):
    if cause.reason == "unknown":
        return "unknown"
    if explanation.verdict == "nonfinite":
        return "origin" if cause.forward else "nan"
    return "cut"


def _steps_by_node(steps, vjp):
    """node -> the step (0-based) of the user's pass where its VJP (statement ``vjp``) ran, else its first step
    (read once: a cause per node of a long chain would read every step again)."""
    if steps is None:
        return {}
    at = {}
    for k, (node, statement) in enumerate(zip(steps["node"], steps["statement"])):
        if node is not None and node not in at or (node in at and statement == vjp and not at[node][1]):
            at[node] = (k, statement == vjp)
    return {node: k for node, (k, _) in at.items()}


def _graph(recording, query):
    """The explained trace's graph (the trace the user's query differentiates), or None."""
    traces = recording.of_kind(TraceReturned)
    if query is None or not traces:
        return None
    end = next(e.end for e in recording.query_events(query) if type(e) is BackwardStart)
    trace = next((t for t in reversed(traces) if t.end == end), traces[-1])
    return Graph(recording.graph(), trace.root, trace.end, trace.input)


def _path_nodes(recording, query, graph, explanation):
    """The labels on the element's paths to the output (node to node where it could not be followed)."""
    if graph is None:
        return set()
    on_paths = {label for label, n in graph.to_end.items() if n}
    between = {label for label, n in graph.from_root.items() if n} & on_paths
    if len(graph.parents) > MAX_FOLLOWED:
        return between
    try:
        touched = follow(recording, query, graph, parse_selector(explanation.selector)[1], guess=False).touched
    except (ValueError, TypeError, KeyError, AttributeError, IndexError):  # not followed: node to node
        return between
    return {label for label, mask in touched.items() if mask.any()} & on_paths

"""The step-through page's data: a ``Recording`` (optionally a ``TracedCall``) as plain JSON data.

Pure: it reads recordings and reference runs, never autograd's live objects, and gives the same
data for the same recording. Values are text, formatted as in the reports (``report.format.fmt``).

The format (``FORMAT`` names its version)::

    {"format": 1, "title": str, "capture": str,
     "summary": [[name, text], ...],              # function, source, inputs, output, gradient
     "checks": [[name, "pass" | "FAIL" | "skipped", detail], ...],
     "failures": [{"check": name, "detail": str,  # each failing check (failures.py), with the node it
                   "graph": graph index | null, "node": node index | null,  # names, and the step
                   "pass": pass id | null, "step": step | null}],   # of the start pass that shows it
     "notes": [text, ...],                        # recorder failure, autograd's warnings
     "code": {"rev" | "fwd": {                     # the two code panels of a reverse / forward pass
         "autograd": {"name": str, "lines": [str]},  # read from the installed autograd
         "lecture": {"name": str, "lines": [str]},
         "statements": [{"text": str, "autograd": line | null, "lecture": line | null,
                         "fields": {column: what it holds at this statement}}]}},
     "graphs": [{                                 # one per recording (reverse, forward)
         "nodes": {"label": [str], "primitive": [str], "value": [text], "group": [group index],
                   "parents": [[[argnum, node index], ...] by position],
                   "name": [str]},                # the user's variable, h@model.py:4 (report.naming), or ""
         "groups": [{"key": str, "by": "site" | "primitive"}]}],
     "passes": [{
         "id": "q1" | "f1",                       # reverse: the query number; forward: f1, f2 ...
         "mode": "rev" | "fwd", "query": int | null, "level": int, "graph": graph index,
         "name": str, "nodes": [node index],      # the nodes this pass walks
         "parent": null | {"pass": id, "node": node index, "step": step},  # run by that node's VJP
                                                  # at that step (0-based) of the parent pass
                                                  # (Recording.passes)
         "state": "outgrads" | "tangents" | "grads",  # grads: an engine's .grad values (micrograd)
         "lecture": "node_to_grad" | "node_to_tangent",
         "reference": null | str,                 # why the lecture's column is empty, if it is
         "steps": {column: [value per step]}}],   # passes.COLUMNS, see passes.py for the deltas
     "start": pass id,                            # the pass the page opens on
     "explanations": [{                           # input elements whose gradient is zero or not finite
         "selector": str, "gradient": text, "verdict": "zero" | "nonfinite",  # (explained.py; graph 0)
         "pass": pass id | null,                  # the user's pass, where the steps below are
         "path": [node index],                    # the nodes of the element's paths to the output
         "causes": [{"node": node index | null, "label": str, "primitive": str, "reason": str,
                     "line": str | null, "name": str | null, "detail": str,
                     "mark": "cut" | "nan" | "origin" | "unknown", "step": step | null}]}]}

Node and parent fields of steps are node indices into the pass's graph; ``statement`` indexes
``code[mode].statements``. Nodes are grouped for the collapsed graph by ``group_key``.
"""

import itertools

from ..compare.checks import verdict
from ..recording.events import (AddOutgrads, BackwardStart, JVPNodeCreated, JVPRoot, NodeCreated, RootCreated,
                                TraceReturned)
from ..recording.snapshots import VJP, replay
from ..report.abbreviate import counted
from ..report.format import fmt
from ..report.recorded import never_computed_line
from ..report.naming import Namer
from .explained import explanations
from .failures import failures
from .passes import engine_steps, forward_event_runs, forward_steps, reverse_steps
from .source import REVERSE_STATEMENTS, code_panels

FORMAT = 1
UNRECORDED_VALUE = "not recorded (made before the recording started)"
NO_REFERENCE = ("no reference run: a Recording alone holds autograd's side only "
                "(adtrace view and adtrace report run the reference engine beside it)")


def page_data(recording=None, call=None, title=None):
    """The page of ``recording``, or of ``call`` (its reverse and forward recordings, with the
    reference engine's runs and the checks)."""
    recordings = [recording] if call is None else [r for r in (call.recording, call.forward_recording) if r]
    graphs, passes, indices = [], [], []
    for number, rec in enumerate(recordings):
        graph, node_index = graph_table(rec)
        graphs.append(graph)
        indices.append(node_index)
        passes += reverse_passes(rec, number, node_index, call)
        passes += forward_passes(rec, number, node_index, call, first=sum(p["mode"] == "fwd" for p in passes) + 1)
    start = _start(passes)
    explained = explanations(recordings[0], indices[0], passes) if recordings and recordings[0].queries else []
    return {"format": FORMAT, "title": title or _title(call), "capture": recordings[0].capture if recordings else None,
            "summary": _summary(call), "checks": _checks(call), "failures": failures(call, graphs, passes, start),
            "notes": _notes(recordings, call), "code": code_panels(_engine_code(recordings)), "graphs": graphs,
            "passes": passes, "start": start, "explanations": explained}


def _engine_code(recordings):
    """The ``EngineCode`` of an engine with its own backward() (its reverse passes show it), or None."""
    return next((r.code for r in recordings if r.code is not None), None)


# -------------------- the graph --------------------


def group_key(recording, label):
    """``(by, key)``: what groups a node in the collapsed graph. The user's source line that made
    it when the recording kept it (the node's ``site``, under ``record(sites=True)``), else its
    primitive, so the page groups as the reports do."""
    return _group_key(recording.nodes.get(label))


def _group_key(node):
    site = getattr(node, "site", None)
    if site:
        return "site", site
    return "primitive", _primitive(node)


def graph_table(recording):
    """``(graph, label -> node index)`` for every node of ``recording``: first the nodes made before
    the recording started that it meets (a recorded node's parent, a node a backward pass visits),
    then the recorded ones in creation order, so a node's parents come before it."""
    labels = unrecorded_labels(recording) + list(recording.nodes)
    index = {label: i for i, label in enumerate(labels)}
    inputs = {e.root: e.input for e in recording.of_kind(TraceReturned)}  # a root's value is the input x
    groups, group_index = [], {}
    columns = {"label": labels, "primitive": [], "value": [], "group": [], "parents": []}
    names = Namer(recording).named
    nodes = recording.nodes  # (once: each read of the property checks the log)
    for label in labels:
        node = nodes.get(label)
        key = _group_key(node)
        if key not in group_index:
            group_index[key] = len(groups)
            groups.append({"key": key[1], "by": key[0]})
        columns["primitive"].append(_primitive(node))
        columns["value"].append(UNRECORDED_VALUE if node is None else fmt(getattr(node, "value", inputs.get(label))))
        columns["group"].append(group_index[key])
        columns["parents"].append([["?" if argnum is None else argnum, index[parent]] for argnum, parent in
                                   zip(getattr(node, "argnums", ()), getattr(node, "parents", ()))])
    columns["name"] = [names.get(label, "") for label in labels]
    return {"nodes": columns, "groups": groups}, index


def unrecorded_labels(recording):
    """The labels of the nodes made before the recording started (``u<j>_unrecorded``) that it meets."""
    nodes = recording.nodes  # (once: each read of the property checks the log)
    parents = (label for node in nodes.values() for label in getattr(node, "parents", ()))
    visited = (label for e in recording.events
               for label in (getattr(e, "end", None), getattr(e, "node", None), getattr(e, "parent", None)))
    met = itertools.chain(parents, visited)
    return list(dict.fromkeys(label for label in met if label is not None and label not in nodes))


def _primitive(node):
    if node is None:
        return "(unrecorded)"
    primitive = getattr(node, "primitive", "(input)")
    return primitive if primitive or getattr(node, "parents", ()) else "(leaf)"  # a micrograd leaf: op ''


# -------------------- passes --------------------


def reverse_passes(recording, number, node_index, call):
    events_of = {query: recording.query_events(query) for query in recording.queries}
    nesting = {p.query: p for p in recording.passes()}
    reference_query, run = _reference(recording, call)
    passes = []
    for query, events in events_of.items():
        # (the seed's event: after the writes a backward() made before seeding, a zeroing loop)
        start = next(e for e in events if isinstance(e, BackwardStart))
        walked = recording.graph(start.end)
        compared = run if query == reference_query else None
        own = recording.code is not None
        rows = replay(events, recording.code, states=False)  # (no copy of the state per row: .grads stay, quadratic)
        steps = engine_steps(rows, node_index, compared) if own else reverse_steps(rows, node_index, compared)
        passes.append({
            "id": f"q{query}", "mode": "rev", "query": query, "level": start.level, "graph": number,
            "name": f"query {query} (level {start.level})", "nodes": sorted(node_index[label] for label in walked),
            "parent": _parent(nesting, query, node_index), "state": "grads" if own else "outgrads",
            "lecture": "node_to_grad",
            "reference": _reference_note(call, query, reference_query), "steps": steps.columns})
    return _link_parents(passes)


def forward_passes(recording, number, node_index, call, first):
    tangents = call.reference_tangents if call is not None and recording is call.forward_recording else ()
    passes = []
    for n, events in enumerate(forward_event_runs(recording), first):
        labels = [e.label for e in events if isinstance(e, (JVPRoot, JVPNodeCreated))]
        note = None if tangents else (NO_REFERENCE if call is None else
                                      call.reference_note or "the reference engine's forward mode did not run")
        passes.append({
            "id": f"f{n}", "mode": "fwd", "query": None, "level": events[0].level, "graph": number,
            "name": f"forward {n} (make_jvp, level {events[0].level})", "nodes": sorted(node_index[x] for x in labels),
            "parent": None, "state": "tangents", "lecture": "node_to_tangent", "reference": note,
            "steps": forward_steps(events, node_index, tangents).columns})
    return passes


def _parent(nesting, query, node_index):
    """The pass and node whose VJP ran this query (``Recording.passes``), or ``None``."""
    found = nesting.get(query)
    if found is None or found.parent is None or found.node not in node_index:
        return None
    return {"pass": f"q{found.parent}", "node": node_index[found.node]}


def _link_parents(passes):
    """Each nested pass's parent gets the step of the node's VJP that ran it, else (the recording
    ended inside that VJP, which so never returned) the parent pass's last step."""
    by_id = {p["id"]: p for p in passes}
    vjp = REVERSE_STATEMENTS.index(VJP)
    for p in passes:
        parent = p["parent"]
        if parent is None or parent["pass"] not in by_id:
            p["parent"] = None
            continue
        steps = by_id[parent["pass"]]["steps"]
        parent["step"] = next((k for k, (node, statement) in enumerate(zip(steps["node"], steps["statement"]))
                               if node == parent["node"] and statement == vjp), len(steps["node"]) - 1)
    return passes


def _reference(recording, call):
    """``(query, run)``: the reference engine's run and the query the call compared it with (the
    user's pass, ``Recording.user_query``), or ``(None, None)``."""
    if call is None or call.reference is None or recording is not call.recording:
        return None, None
    query = recording.user_query()
    return (query, call.reference) if query is not None else (None, None)


def _reference_note(call, query, reference_query):
    if call is None:
        return NO_REFERENCE
    if query == reference_query:
        return None
    if reference_query is not None:
        return f"the reference engine ran for query {reference_query} only"
    return call.reference_note or "the reference engine did not run"


def _start(passes):
    """The pass the page opens on: the one compared with the reference engine (the user's), else
    the first top-level reverse pass of the outermost level."""
    top = [p for p in passes if p["parent"] is None]
    reverse = [p for p in top if p["mode"] == "rev"]
    compared = [p for p in reverse if p["reference"] is None]
    candidates = compared or reverse or top
    if not candidates:
        return None
    level = min(p["level"] for p in candidates)
    return next(p["id"] for p in candidates if p["level"] == level)


# -------------------- the header --------------------


def _title(call):
    return "adtrace recording" if call is None else f"adtrace: {call.name}"


def _summary(call):
    if call is None:
        return []
    own = call.recording is not None and call.recording.code is not None  # an engine with its own backward()
    rows = [["function", call.name], ["source", call.location], ["inputs", ", ".join(fmt(a) for a in call.args)],
            ["engine", f"{call.engine}: {call.recording.code.name}; every argument is a leaf"] if own else
            ["differentiated argument", str(call.argnum)], ["output", fmt(call.output)]]
    if call.mode in ("rev", "both"):
        rows.append(["gradient (.grad of each argument)" if own else "gradient (VJP with a seed of ones)",
                     fmt(call.gradient)])
    if call.mode in ("fwd", "both"):
        rows.append(["JVP with a tangent of ones", fmt(call.tangent)])
    return rows + [["capture level", call.capture]]


def _checks(call):
    return [] if call is None else [[c.name, verdict(c), c.detail] for c in call.checks]


def _notes(recordings, call):
    notes = [f"The recorder stopped early: {r.failure}." for r in recordings if r.failure]
    if call is not None:
        notes += [f"autograd warned: {message}" for message in call.warnings]
    never = [line for line in (never_computed_line(r, markdown=False) for r in recordings) if line]
    notes += never  # (values whose .grad is still __init__'s: a graph drawn before backward())
    if not never and not any(r.queries for r in recordings) and not any(forward_event_runs(r) for r in recordings):
        notes.append("No backward pass ran in this recording.")
    for r in recordings:
        unshown, outside = unshown_events(r)
        notes += [f"Not on this page: {counted(n, kind + ' event')} (a kind the page has no step for; the report's "
                  "call sequence and the JSON export show them)." for kind, n in unshown.items()]
        if outside:
            notes.append(f"Not on this page: {counted(outside, 'add_outgrads event')} outside every pass it shows "
                         "(the report's call sequence and the JSON export show them).")
    return notes


# the events the page shows outside the steps of a pass: the graph's nodes and inputs
GRAPH = frozenset((RootCreated, NodeCreated, JVPRoot, JVPNodeCreated, TraceReturned))


def unshown_events(recording):
    """What of ``recording`` the page shows nowhere (no node, input, or step of a pass): kind -> how
    many events of a kind it has no step for, and how many ``add_outgrads`` events lie outside every
    pass it shows (the steps of a backward pass, or of a forward trace: ``sum_outgrads``)."""
    queries = set(recording.queries)
    in_passes, elsewhere = [], []  # the events of the backward passes (every query's query_events), the others
    for e in recording.events:
        (in_passes if e.query in queries and e.mode == "rev" and e.in_backward_pass else elsewhere).append(e)
    unshown = dict(recording.tally(in_passes).rowless)
    adds = [e for e in elsewhere if type(e) is AddOutgrads]
    if adds:
        forward = {id(e) for run in forward_event_runs(recording) for e in run}  # their steps are sum_outgrads
        adds = [e for e in adds if id(e) not in forward]
    for e in elsewhere:
        if type(e) not in GRAPH and type(e) is not AddOutgrads:
            unshown[e.kind] = unshown.get(e.kind, 0) + 1
    return unshown, len(adds)

"""Align autograd's recorded backward pass with the lecture's, node by node.

For every node autograd visits, the lecture (the reference engine's step log) keeps the list
``node_to_grad[i]`` of partial adjoints and sums it at the visit; autograd keeps a running entry
``outgrads[node]`` that ``add_outgrads`` updates on each arrival and ``pop``s at the visit. For
``z = x*x`` at 3 the root reads ``[3, 3]``, sum 6, against ``None -> (3,False) -> (6,True)``,
pop 6. The two totals must agree; the first node where they do not is where the engines part ways.
"""

import math
from dataclasses import dataclass, replace
from typing import Any, Optional

import numpy as np

from autograd.core import vspace

from ..recording.events import AddOutgrads, BackwardStart, NodeCreated, RootCreated, ToposortYielded
from ..recording.values import ArraySummary, ContainerSummary, leaf_paths, plain, summarize

EXACT, CLOSE, DIFFERS, MISSING = "exact", "close", "differs", "missing"
NOT_COMPARED = "not compared"  # capture "auto" kept less than the value (leaves past a summary's limit)
_SEVERITY = [EXACT, CLOSE, NOT_COMPARED, DIFFERS, MISSING]
# close: |a - b| <= RTOL |b| + ATOL * scale, element by element, where scale is the largest
# magnitude of the partial adjoints summed into the value (the size of the terms that may cancel;
# by default the two values' own): no absolute floor, so 2x apart is "differs" at 1e-300 as at 1
RTOL, ATOL = 1e-9, 1e-12


@dataclass(frozen=True, slots=True)  # (slots: a row per node, a million at 1M nodes)
class NodeAlignment:
    label: str
    primitive: str
    partial_adjoints: Optional[tuple]  # the lecture's node_to_grad[i] (None: not visited by it)
    v_i_bar: Any  # sum(node_to_grad[i])
    running: tuple  # autograd's outgrads[node] after each arrival, starting from None
    popped: Any  # what outgrads.pop(node) returned
    status: str  # exact | close | differs | missing
    difference: Optional[float]  # largest absolute difference, when comparable
    summarized: bool = False  # autograd's value (or a part) was kept as a summary: compared by statistics
    borrowed: Optional[str] = None  # not compared: the lecture's sum holds the engine's own contributions (why)


def autograd_running_entries(query_events, visited=None):
    """``label -> [entry after each arrival]`` and ``label -> popped value`` for one query; ``visited``: a list
    given, the labels ``toposort`` yielded are appended to it (``Recording.visit_order``, read in the same walk)."""
    running, popped, state = {}, {}, {}
    visit = visited.append if visited is not None else None
    for e in query_events:
        event_type = type(e)  # (not isinstance: this loop reads every event of the pass)
        if event_type is AddOutgrads:
            parent = e.parent
            entries = running.get(parent)
            if entries is None:
                entries = running[parent] = [None]
            entries.append(e.result)
            state[parent] = e.result
        elif event_type is BackwardStart:
            running[e.end] = [None, (e.seed, False)]
            state[e.end] = (e.seed, False)
        elif event_type is ToposortYielded:
            node = e.node
            entry = state.pop(node, None)
            popped[node] = None if entry is None else entry[0]
            if visit is not None:
                visit(node)
    return running, popped


def align(recording, query, run):
    """One ``NodeAlignment`` per node autograd visited in ``query``, in autograd's visit order,
    against the reference ``run`` (``adtrace.reference.run_gradient``) with the same seed."""
    order = []
    running, popped = autograd_running_entries(recording.query_events(query), order)
    steps = run.steps if run is not None else ()
    by_label, visits = None, len(steps)  # (by_label: made when the two orders part, not read per node else)
    rows, nodes, no_entries = [], recording.nodes, (None,)
    for index, label in enumerate(order):  # (recording.visit_order(query), read in the walk above)
        node = nodes.get(label)
        step = steps[index] if index < visits else None  # (both engines visit in the same order, most often)
        if step is None or step.label != label:
            if by_label is None:
                by_label = {step.label: step for step in steps}
            step = by_label.get(label)
        value = popped.get(label)
        entries = running.get(label)
        if step is None:
            status, difference, partials, v_i_bar = MISSING, None, None, None
        else:
            partials, v_i_bar = step.partial_adjoints, step.v_i_bar
            one = partials[0] if type(partials) is tuple and len(partials) == 1 else partials
            if type(one) in _REALS and type(value) in _REALS and type(v_i_bar) in _REALS:
                # (compare(value, v_i_bar, magnitude(one)), inline: a scalar program's every node)
                scale = float(abs(one)) if math.isfinite(one) else 0.0
                status, difference = _compare_reals(float(value), float(v_i_bar), ATOL * scale)
            else:
                status, difference = compare(value, v_i_bar, magnitude(one))
        rows.append(NodeAlignment(label, getattr(node, "primitive", "root"), partials, v_i_bar,
                                  no_entries if entries is None else tuple(entries), value, status, difference,
                                  type(value) not in _REALS and summarized(value)))
    return rows


def relabel(run, recording, level, query):
    """The reference ``run`` with its labels renamed to the recording's nodes of ``level`` created
    before ``query`` (the backward pass compared) began.

    Under ``grad(grad(f))`` the recorder numbers the inner trace's nodes too, and a VJP rule that
    traces (``fixed_point``'s, when its node is made; ``odeint``'s, while the pass runs) adds
    traces of its own; the reference engine numbers only its own capture. Both create the outer
    nodes in the same order, so creation order maps one onto the other; the run is returned
    unchanged when the primitives do not line up (the alignment then shows the nodes as missing)."""
    if run is None:
        return None
    recorded = []
    for e in recording.events:
        if isinstance(e, BackwardStart) and e.query == query:
            break
        if isinstance(e, (RootCreated, NodeCreated)) and e.level == level:
            recorded.append(e)
    if [e.label for e in recorded] == list(run.labels):
        return run
    primitives = {step.label: step.primitive for step in run.steps}
    names = dict(zip(run.labels, (e.label for e in recorded)))
    if len(recorded) != len(run.labels) or any(
            primitives.get(label, getattr(e, "primitive", "root")) != getattr(e, "primitive", "root")
            for label, e in zip(run.labels, recorded)):
        return run
    steps = tuple(replace(s, label=names[s.label], contributions=tuple(
        replace(c, parent=names[c.parent]) for c in s.contributions)) for s in run.steps)
    return replace(run, steps=steps, order=tuple(names[o] for o in run.order),
                   parents={names[k]: tuple(names[p] for p in v) for k, v in run.parents.items()},
                   labels=tuple(names[label] for label in run.labels))


def first_divergence(rows):
    """The first node (autograd's visit order) whose totals differ, or ``None``."""
    return next((row.label for row in rows if row.status in (DIFFERS, MISSING)), None)


def compare(recorded, reference, scale=None):
    """``(status, largest absolute difference)`` of a recorded kept value against a raw value, in
    the value's vector space: arrays element by element, containers leaf by leaf (the worst leaf
    decides), a user's registered ``VSpace`` through its own operations (``==`` is object identity
    for such a class). ``scale``: the size of the terms the value sums (default: the values' own)."""
    if scale is None:
        scale = max(magnitude(recorded), magnitude(reference))
    return _compare(recorded, reference, ATOL * scale)


def magnitude(value):
    """The largest finite magnitude in a value (arrays, scalars, containers, summaries; 0 if none)."""
    if type(value) in _REALS:  # (a scalar program's every value: numpy's path is most of aligning it)
        return float(abs(value)) if math.isfinite(value) else 0.0
    if type(value) is tuple:  # (plain's own walk, without the copy)
        return max((magnitude(v) for v in value), default=0.0)
    value = plain(value)
    if isinstance(value, (tuple, list)):
        return max((magnitude(v) for v in value), default=0.0)
    if isinstance(value, dict):
        return max((magnitude(v) for v in value.values()), default=0.0)
    if isinstance(value, ArraySummary):
        return max(magnitude(value.min), magnitude(value.max))
    if isinstance(value, ContainerSummary):
        return max((magnitude(leaf) for _, leaf in value.leaves), default=0.0)
    try:
        a = np.abs(np.asarray(value))
        return float(np.max(a[np.isfinite(a)], initial=0.0)) if a.dtype.kind in "fciu" else 0.0
    except (TypeError, ValueError):
        return 0.0


def _compare(recorded, reference, atol):
    if recorded is None:
        return DIFFERS, None
    if type(recorded) in _REALS and type(reference) in _REALS:  # a scalar program's every node: no arrays made
        return _compare_reals(float(recorded), float(reference), atol)
    recorded = plain(recorded)
    if isinstance(recorded, ContainerSummary):  # capture "auto" kept each leaf's statistics
        return _compare_container_summary(recorded, reference, atol)
    if isinstance(recorded, (tuple, list, dict)):
        return _compare_containers(recorded, reference, atol)
    if isinstance(recorded, ArraySummary):  # capture "auto" kept statistics only
        return _compare_summary(recorded, reference, atol)
    try:
        a, b = np.asarray(recorded), np.asarray(reference)
        if a.dtype == object or b.dtype == object:
            return _compare_in_vspace(recorded, reference, atol)
        if a.shape != b.shape:
            return DIFFERS, None
        with np.errstate(all="ignore"):  # inf - inf: the difference is nan, numpy need not say so
            difference = float(np.max(np.abs(a - b))) if a.size else 0.0
    except (TypeError, ValueError):  # objects numpy cannot subtract
        return _compare_in_vspace(recorded, reference, atol)
    if np.array_equal(a, b, equal_nan=True):
        return EXACT, difference
    with np.errstate(all="ignore"):
        return (CLOSE if np.allclose(a, b, rtol=RTOL, atol=atol, equal_nan=True) else DIFFERS), difference


_REALS = frozenset({float, np.float64})
_INF = float("inf")


def _compare_reals(a, b, atol):
    """``compare`` of two real scalars, as numpy's ``array_equal`` and ``allclose`` decide it."""
    difference = abs(a - b)
    if a == b or (a != a and b != b):  # (NaN against NaN is equal, as equal_nan=True has it)
        return EXACT, difference
    close = difference <= atol + RTOL * abs(b) and abs(b) != _INF  # (numpy: an infinity is close to itself only)
    return (CLOSE if close else DIFFERS), difference


def _compare_summary(recorded, reference, atol):
    ref = summarize(np.asarray(reference))
    if (recorded.shape, recorded.dtype) != (ref.shape, ref.dtype):
        return DIFFERS, None
    got, want = np.array([recorded.min, recorded.max, recorded.mean]), np.array([ref.min, ref.max, ref.mean])
    with np.errstate(all="ignore"):
        return (CLOSE if np.allclose(got, want, rtol=RTOL, atol=atol, equal_nan=True) else DIFFERS,
                float(np.max(np.abs(got - want))))


def _compare_container_summary(recorded, reference, atol):
    """Leaf by leaf, by statistics; the leaves past the summary's limit are not compared."""
    if not isinstance(reference, (tuple, list, dict)) or (recorded.type, recorded.length) != (
            type(reference).__name__, len(reference)):
        return DIFFERS, None
    leaves = dict(leaf_paths(reference))
    if len(leaves) != len(recorded.leaves) + recorded.more:
        return DIFFERS, None
    results = []
    for path, summary in recorded.leaves:
        if path not in leaves:
            return DIFFERS, None
        if not np.issubdtype(np.asarray(leaves[path]).dtype, np.number):  # a leaf kept by type only
            results.append((NOT_COMPARED, None) if summary.dtype == type(leaves[path]).__name__ else (DIFFERS, None))
        else:
            results.append(_compare_summary(summary, leaves[path], atol))
    if recorded.more:
        results.append((NOT_COMPARED, None))
    status = max((s for s, _ in results), key=_SEVERITY.index, default=CLOSE)
    differences = [d for _, d in results if d is not None]
    return status, (max(differences) if differences and status != DIFFERS else None)


def _compare_containers(recorded, reference, atol):
    if type(recorded) is not type(reference) and not (isinstance(recorded, tuple) and isinstance(reference, tuple)):
        return DIFFERS, None
    if isinstance(recorded, dict):
        if set(recorded) != set(reference):
            return DIFFERS, None
        pairs = [(recorded[k], reference[k]) for k in recorded]
    elif len(recorded) != len(reference):
        return DIFFERS, None
    else:
        pairs = list(zip(recorded, reference))
    results = [_compare(a, b, atol) for a, b in pairs]
    status = max((s for s, _ in results), key=_SEVERITY.index, default=EXACT)
    differences = [d for _, d in results if d is not None]
    return status, (max(differences) if differences and status != DIFFERS else None)


def _compare_in_vspace(recorded, reference, atol):
    """Two values of a user's vector space: the norm of their difference, by its inner product."""
    try:
        space = vspace(reference)
        if vspace(recorded) != space:
            return DIFFERS, None
        difference = space.add(recorded, space.scalar_mul(reference, -1.0))
        norm = float(np.sqrt(abs(space.inner_prod(difference, difference))))
        scale = float(np.sqrt(max(abs(space.inner_prod(v, v)) for v in (recorded, reference))))
    except Exception:  # no vector space, or one whose operations refuse these values
        return (EXACT, 0.0) if _equal(recorded, reference) else (DIFFERS, None)
    if norm == 0.0:
        return EXACT, 0.0
    return (CLOSE if norm <= RTOL * scale + atol else DIFFERS), norm


def summarized(value):
    """Whether ``value`` holds statistics (or only the length) in place of some array it had."""
    value = plain(value)
    if isinstance(value, (ArraySummary, ContainerSummary)):
        return True
    if isinstance(value, (tuple, list)):
        return any(summarized(v) for v in value)
    if isinstance(value, dict):
        return any(summarized(v) for v in value.values())
    return False


def _equal(a, b):
    try:
        return bool(np.all(a == b))
    except Exception:
        return False

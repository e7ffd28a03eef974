"""Trace one call of a user's function through an engine whose values keep their gradient
(micrograd, a learner's ``Value`` class), the lecture beside it, by the engine protocol
(``recording/engines.py``).

``trace_engine_call(f, args, engine)`` makes each argument a leaf of the engine (``Engine.leaf``:
every one gets its gradient), calls ``f``, and runs the engine's backward pass on the result
(``Engine.backward``) inside ``record(engine=...)``: the engine's real run, recorded. The
``TracedCall`` it returns holds what ``trace_call`` holds for autograd: the recording, the
lecture's run over the recorded graph (``reference.recorded``), the alignment of its
``node_to_grad`` with the engine's running ``.grad`` (``grad_align``), and the checks: the lecture
agrees per node, both orders are valid, every write into ``.grad`` adds, and central finite
differences of ``f`` through the engine itself.
"""

import inspect

import numpy as np

from ..recording.callsite import calls_user_code, source_location
from ..recording.events import AddOutgrads, BackwardStart, NodeCreated
from ..recording.registry import engine_named
from ..recording.session import record
from ..reference.recorded import lecture_order, run_recorded
from .checks import Check, engines_agree, finite_differences, not_known, orders_valid
from .grad_align import align_grads
from .pass_checks import ONE_PASS, REVERSE_TOPOLOGICAL, ZERO_AT_START, pass_findings
from .traced_call import TracedCall, function_name


@calls_user_code
def trace_engine_call(f, args, engine="micrograd", capture="auto", relative_to=None, rtol=None):
    """``engine``: ``"micrograd"`` or a ``Value`` class of its shape; ``relative_to``: the folder source
    locations are relative to; ``rtol``: the relative tolerance of central differences."""
    adapter = engine_named(engine)  # (the engine protocol: recording/engines.py)
    call = TracedCall(function_name(f), source_location(f, relative_to), tuple(args), None, "rev", capture)
    with record(engine=engine, capture=capture, sites=True, relative_to=relative_to) as rec:
        values = [adapter.leaf(a) for a in args]
        out = f(*values)
        if not isinstance(out, adapter.cls):
            raise TypeError(f"{call.name} returned a {type(out).__name__}, not a {adapter.cls.__qualname__}: "
                            "nothing to call backward() on")
        adapter.backward(out)
    grads = tuple(adapter.grad(v) for v in values)
    made = [e.label for e in rec.of_kind(NodeCreated) if not e.parents][:len(args)]  # (each argument's leaf first)
    rec.argument_names = dict(zip(made, _parameter_names(f)))  # (the report's explanations say W[1, 0])
    call.engine, call.recording, call.output = rec.engine_name, rec, adapter.data(out)
    call.gradient = grads[0] if len(grads) == 1 else grads
    query = rec.user_query()
    call.reference = run_recorded(rec, query) if query is not None else None
    if call.reference is None:
        call.reference_note = "reference engine: no values were recorded (capture 'structure')"
    call.pass_findings = pass_findings(rec, query)
    found = {f.test: f for f in reversed(call.pass_findings)}  # (the first of each)
    end = next((e.end for e in rec.query_events(query) if isinstance(e, BackwardStart)), None) if query else None
    if end is not None:
        early, graph = found.get(REVERSE_TOPOLOGICAL), rec.graph(end)
        if call.reference is not None:
            call.alignment = align_grads(rec, query, call.reference)
            call.checks.append(engines_agree(call.alignment, engine=call.engine, end=end))
        # (capture 'structure': no values, the lecture's order all the same)
        call.checks.append(orders_valid(rec.visit_order(query), graph, lecture_order(graph, end), graph,
                                        walk=f"{rec.code.name}'s order", early=early and early.reason,
                                        leaves_anywhere=True))
    for test, name in ((ONE_PASS, "backward() ran once over the graph"),
                       (ZERO_AT_START, "every .grad was 0 when the pass began")):
        if test in found:  # (only when found: a right engine's report keeps its checks)
            call.checks.append(Check(name, False, found[test].reason))
    call.checks.append(writes_add(rec, query, call.reference))
    call.checks.append(_finite_differences(f, adapter, args, out, call.gradient, rtol))
    return call


def _parameter_names(f):
    try:
        parameters = inspect.signature(f).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def writes_add(recording, query, run):
    """Every write a ``_backward`` made into ``.grad`` added its contribution; the first that
    replaced a value already there is named, with what the lecture kept for that value. A write
    adtrace cannot tell (``replaced`` None) makes the check ``not known``, never a pass."""
    name = "every write into .grad adds"
    writes = [e for e in recording.query_events(query) if isinstance(e, AddOutgrads) and e.node is not None]
    assigned = [e for e in writes if e.replaced]
    unknown = [e for e in writes if e.replaced is None]
    lost = [e for e in assigned if e.previous is not None and _nonzero(e.previous[0])]
    if not lost:
        detail = f"{len(writes)} writes, {len(writes) - len(assigned) - len(unknown)} add"
        if assigned:
            detail += f"; {len(assigned)} assign over a .grad of 0 (nothing lost here; first: {_where(assigned[0])})"
        if unknown:
            return not_known(name, f"{detail}; {len(unknown)} not known: added or replaced (first: "
                                   f"{_where(unknown[0])}: read, then written other than as grad + c or grad - c "
                                   "of an int, float or ndarray)")
        return Check(name, True, detail)
    first = lost[0]
    step = next((s for s in run.steps if s.label == first.parent), None) if run is not None else None
    lecture = "" if step is None else (f"; the lecture's node_to_grad[{first.parent}] is "
                                       f"[{', '.join(_text(p) for p in step.partial_adjoints)}], sum "
                                       f"{_text(step.v_i_bar)}")
    return Check(name, False, f"{len(lost)} of {len(writes)} writes lost a contribution; first: {_where(first)} "
                              f"replaced {_text(first.previous[0])} by {_text(first.result[0])}{lecture}")


def _where(event):
    return f"{event.node}'s write into {event.parent}.grad (argument {event.argnum})"


def _finite_differences(f, adapter, args, out, gradient, rtol):
    """Central differences of ``f`` through the engine itself (unrecorded), along a fixed direction."""
    leaf = adapter.leaf

    def data(value):
        return np.asarray(adapter.data(value), dtype=float)

    seed = np.ones_like(data(out))
    if len(args) == 1:
        return finite_differences(lambda x: data(f(leaf(x))), args[0], seed, gradient, rtol=rtol)
    return finite_differences(lambda xs: data(f(*map(leaf, xs))), tuple(args), seed, gradient, rtol=rtol)


def _nonzero(value):
    try:
        return bool(np.any(np.asarray(value) != 0))
    except (TypeError, ValueError):
        return True


def _text(value):
    if isinstance(value, np.ndarray) and value.ndim and value.dtype.kind in "biuf":  # (a tensor engine's .grad)
        return np.array2string(value, precision=6, threshold=6, separator=", ")
    try:
        return f"{float(value):.6g}"
    except (TypeError, ValueError):
        return type(value).__name__

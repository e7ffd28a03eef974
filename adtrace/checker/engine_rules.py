"""Per-node checks of an engine with its own operations (``EngineCode.ops``: micrograd, a learner's
``Value`` class): each node's contributions against its op's derivative, and each write into
``.grad`` that threw a contribution away.

``check_engine(f, *args, cls=...)`` makes each argument a leaf of the engine ``cls`` names
(``Engine.leaf``, ``recording/engines.py``), calls ``f``, runs the engine's backward pass on the
result (``Engine.backward``) under ``record(engine=cls, sites=True)`` and reads the recording
(``check_engine_recording``):

- ``local``: for node ``v = op(a, b)`` visited with ``v.grad = g``, the contribution its
  ``_backward`` wrote into its child at position k against ``g * dv/dk``, the derivative taken by
  central differences of the op's forward function (``Recording.code.ops``, keyed by the op as the
  class writes it) at the recorded values: independent of the analytic derivatives; the
  verdict by ``compare.tolerance.agree`` at rtol 1e-5 (scale-safe, no absolute floor). For an
  array node (a learner's tensor engine) by a random-direction inner product, as ``checker.local``
  does for autograd: ``<contribution, w>`` against ``<v.grad, J w>``, ``J w`` by central differences
  of the op's forward along a fixed random ``w`` of the input's shape;
- ``accumulation``: a write that assigned (``child.grad = c``) where ``child.grad`` already held a
  contribution lost it: the classic bug. An assignment over 0 loses nothing (noted, passes). A
  write adtrace cannot tell (``replaced`` None: added or assigned?) is skipped as not known.

Each row names the node, the argument and the line of ``f`` that made the node (its ``site``).
"""

import math
from dataclasses import replace

import numpy as np

from ..compare.checks import Check
from ..compare.pass_checks import pass_findings
from ..compare.traced_call import function_name
from ..compare.differences import along
from ..compare.tolerance import DEFAULT_RTOL, agree, agree_arrays, norm, power_of_two_unit, rtol_for
from ..recording.callsite import calls_user_code
from ..recording.events import AddOutgrads, VJPCalled
from ..recording.registry import engine_named
from ..recording.session import record
from . import CheckReport
from .local import FAIL, PASS, SKIPPED, NodeCheck, kink_reason

RTOL = DEFAULT_RTOL  # Python floats: double precision
ORDER_LOST = "not known (children given as a set: argument order lost)"


@calls_user_code
def check_engine(f, *args, cls, relative_to=None):
    """Record ``f`` on leaves of the engine ``cls`` (``record(engine=...)``'s: a ``Value`` class,
    ``"micrograd"``) made from ``args`` and check it node by node."""
    engine = engine_named(cls)  # (the engine protocol: recording/engines.py)
    with np.errstate(all="ignore"), record(engine=cls, sites=True, capture="full", relative_to=relative_to) as rec:
        values = [engine.leaf(a) for a in args]
        out = f(*values)
        if not isinstance(out, engine.cls):  # (as trace_engine_call says it: not "float has no attribute backward")
            raise TypeError(f"{function_name(f)} returned a {type(out).__name__}, not a {engine.cls.__qualname__}: "
                            "nothing to call backward() on")
        engine.backward(out)
    report = check_engine_recording(rec)
    report.gradient = tuple(map(engine.grad, values))
    return report


def check_engine_call(call):
    """Add to a ``TracedCall`` of an engine (``compare.traced_engine_call``) the per-node checks of its
    recording: its ``node_checks`` and one check in its summary."""
    call.node_checks = check_engine_recording(call.recording)
    first = call.node_checks.first_failure
    call.checks.append(Check("per-node local rules", first is None, "every checked node passes" if first is None
                             else f"first failing node: {first.node} argument {first.argnum}"))
    return call


def check_engine_recording(rec):
    """Check the user's backward pass (the last outermost one) of a ``record(engine=...)`` recording."""
    query = rec.user_query()
    events = rec.query_events(query) if query is not None else []
    rows = []
    for event in events:
        if isinstance(event, VJPCalled):
            rows += _local(rec, event)
        elif isinstance(event, AddOutgrads) and event.node is not None and event.replaced is not False:
            rows.append(_accumulation(rec, event))
    order = {label: i for i, label in enumerate(rec.nodes)}
    rows.sort(key=lambda r: (order.get(r.node, -1), r.argnum if r.argnum is not None else -1, r.test != "local"))
    # (a bug of the whole pass first: every local rule may pass under it)
    passes = [NodeCheck(node=f.node, primitive=_primitive(rec.nodes.get(f.node)),
                        argnum=None, site=f.site, test=f.test, status=FAIL, reason=f.reason)
              for f in pass_findings(rec, query)]
    return CheckReport(passes + rows, recording=rec)


def _primitive(node):
    """As recorded; "(leaf)" for a value made without children (not one made by an op without ``_op``: '')."""
    primitive = getattr(node, "primitive", "")
    return primitive if primitive or getattr(node, "parents", ()) else "(leaf)"


def _local(rec, vjp):
    node = rec.nodes.get(vjp.node)
    if node is None or not node.parents:
        return []
    row = dict(node=node.label, primitive=node.primitive, site=node.site, test="local")
    forward = rec.code.ops.forward(node.primitive, len(node.parents))
    inputs = [getattr(rec.nodes.get(p), "value", None) for p in node.parents]
    rows = []
    for k, contribution in enumerate(vjp.ingrads):
        if None in node.argnums:
            reason = ORDER_LOST
        elif forward is None:
            reason = f"op {node.primitive!r} is not one adtrace knows ({rec.code.ops.known})"
        elif contribution is None:
            reason = "contribution not known (the write into .grad was not read as grad + c or grad - c)"
        elif all(_is_number(v) for v in [contribution, vjp.outgrad, *inputs]):
            rows.append(_unless_moved(_compare(row, k, forward, inputs, vjp.outgrad, contribution), forward, inputs,
                                      node.value))
            continue
        elif all(_is_float_array(v) for v in [contribution, vjp.outgrad, *inputs]):
            if not rec.code.ops.fits(node.primitive, node.value, inputs):
                reason = (f"op {node.primitive!r} here is not the one adtrace knows (its value has shape "
                          f"{getattr(node.value, 'shape', np.shape(node.value))}; adtrace's {node.primitive!r} of "
                          "these inputs has another)")
            else:
                rows.append(_unless_moved(_compare_arrays(row, k, forward, inputs, vjp.outgrad, contribution),
                                          forward, inputs, node.value))
                continue
        else:
            reason = "contribution not known (a value is neither a number nor a float array kept whole)"
        rows.append(NodeCheck(**row, argnum=k, status=SKIPPED, reason=reason))
    return rows


def _unless_moved(check, forward, inputs, value):
    """A failing check, unless the op's forward of its inputs as recorded does not give the value it made: an
    input's ``.data`` changed after it was recorded (``p.data -= lr * p.grad`` between passes), so the derivative
    here is not at the point the ``_backward`` used: not known, not FAIL."""
    try:
        with np.errstate(all="ignore"):
            moved = check.status == FAIL and not agree_arrays(forward(*inputs), value, RTOL).passed
    except (TypeError, ValueError):  # (operands numpy cannot broadcast or multiply: the check stands)
        moved = False
    if not moved:
        return check
    return replace(check, status=SKIPPED, numeric=None, difference=None, tolerance=None, reason=(
        "not known: the op of its inputs as recorded does not give the value it made (an input's .data changed "
        "after it was recorded, as an update p.data -= lr * p.grad does; adtrace keeps a value's data as it was "
        "made)"))


def _compare(row, k, forward, inputs, outgrad, contribution):
    differences, kink = _derivative(forward, inputs, k)
    if kink:
        return NodeCheck(**row, argnum=k, status=SKIPPED, analytic=float(contribution), reason=kink)
    step = float(differences.direction)  # the step actually taken: 1 rounded to the point's spacing
    derivative = float(differences.estimate) / step
    with np.errstate(all="ignore"):
        numeric = float(outgrad * derivative)
        error = abs(float(outgrad)) * differences.error(1.0) / abs(step)
    analytic = float(contribution)
    verdict = agree(analytic, numeric, RTOL, error=error)
    status = {PASS: PASS, FAIL: FAIL}.get(verdict.status, SKIPPED)
    reason = verdict.describe()
    if status == FAIL:
        reason = (f"wrote {analytic:.6g} into argument {k}; .grad {float(outgrad):.6g} times the op's "
                  f"derivative {derivative:.6g} is {numeric:.6g}: {reason}")
    return NodeCheck(**row, argnum=k, status=status, analytic=analytic, numeric=numeric,
                     difference=verdict.difference, tolerance=verdict.tolerance, reason=reason)


def _compare_arrays(row, k, forward, inputs, outgrad, contribution):
    """``<contribution, w>`` against ``<outgrad, J w>`` for a fixed random direction ``w`` of input
    k, ``J w`` by central differences of the op's forward (as ``checker.local`` does for autograd,
    with the engine's own ``.grad`` as the output's direction)."""
    a = np.asarray(inputs[k], dtype=np.float64)
    if np.shape(contribution) != a.shape:
        return NodeCheck(**row, argnum=k, status=FAIL, reason=(
            f"wrote shape {np.shape(contribution)} into argument {k} of shape {a.shape} "
            "(a broadcast contribution not summed back to the input's shape?)"))
    point = [np.asarray(v, dtype=np.float64) for v in inputs]
    rng = np.random.default_rng(k)
    w = rng.standard_normal(a.shape)
    w = w / max(float(np.max(np.abs(w), initial=0.0)), 1.0)

    def at(x):
        return np.asarray(forward(*point[:k], x, *point[k + 1:]), dtype=np.float64)

    with np.errstate(all="ignore"):
        differences = along(a, w, at)
    if differences is None:
        return NodeCheck(**row, argnum=k, status=SKIPPED, reason="no step moves the point")
    u = np.asarray(outgrad, dtype=np.float64)
    unit = power_of_two_unit(contribution, differences.estimate, u)
    with np.errstate(all="ignore"):
        numeric = float(np.sum(u * (differences.estimate / unit)))
        analytic = float(np.sum(np.asarray(contribution, dtype=np.float64) / unit * differences.direction))
    kink = kink_reason(differences)
    if kink:
        return NodeCheck(**row, argnum=k, status=SKIPPED, numeric=numeric * unit, reason=kink)
    terms, error = norm(u) * norm(differences.estimate / unit), differences.error(u) / unit
    verdict = agree(analytic, numeric, rtol_for(np.result_type(contribution)), terms, error)
    status = {PASS: PASS, FAIL: FAIL}.get(verdict.status, SKIPPED)
    reason = verdict.describe()
    if status == FAIL:
        reason = (f"wrote into argument {k} a contribution whose inner product with a random direction w is "
                  f"{analytic * unit:.6g}; .grad times the op's derivative along w is {numeric * unit:.6g}: {reason}")
    return NodeCheck(**row, argnum=k, status=status, analytic=analytic * unit, numeric=numeric * unit,
                     difference=verdict.difference * unit, tolerance=verdict.tolerance * unit, reason=reason)


def _accumulation(rec, add):
    node = rec.nodes.get(add.node)
    previous = None if add.previous is None else add.previous[0]
    lost = previous is not None and _nonzero(previous)
    row = dict(node=add.node, primitive=getattr(node, "primitive", "?"), argnum=add.argnum,
               site=getattr(node, "site", None), test="accumulation", analytic=_float(add.result[0]),
               numeric=_float(_sum(previous, add.contribution)))
    if add.replaced is None:
        return NodeCheck(**row, status=SKIPPED, reason=(
            f"not known whether this write added to {add.parent}.grad or replaced it (read, then written other than "
            "as grad + c or grad - c of an int, float or ndarray: a float32's +=, grad = grad * 1 + c)"))
    if lost:
        return NodeCheck(**row, status=FAIL, difference=float(np.max(np.abs(previous))), reason=(
            f"{add.parent}.grad = {_text(add.contribution)} replaced {_text(previous)} instead of adding to it: "
            f"the contribution {_text(previous)} already there is lost (write it with +=)"))
    return NodeCheck(**row, status=PASS, reason=(
        f"{add.parent}.grad = {_text(add.contribution)} assigns instead of adding; nothing lost here "
        "(.grad was 0), but a value used twice would lose a contribution"))


def _derivative(forward, inputs, k):
    """d forward / d input k by the shared central differences (``compare.differences``: the step
    scales with the input, capped, and relative to it where far from 1), in double precision;
    with the reason it has none here ("" when it has one)."""
    point = [float(v) for v in inputs]

    def at(x):
        moved = list(point)
        moved[k] = np.float64(x)  # numpy's arithmetic: a ** 0.5 left of 0 is NaN, not Python's complex
        return np.float64(forward(*moved))

    with np.errstate(all="ignore"):
        differences = along(np.float64(point[k]), np.float64(1.0), at)
    if differences is None or not all(math.isfinite(v) for v in (differences.half_plus, differences.half_minus,
                                                                   differences.center)):
        return None, "not finite next to the point (outside the op's domain)"
    kink = kink_reason(differences)
    return differences, kink and "not differentiable here: one-sided differences differ (a kink)"


def _is_number(value):
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


def _nonzero(value):
    """A number or a numeric array (a ``.grad`` of numpy arrays) that holds something other than 0."""
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "biufc" and bool(np.any(value != 0))
    return _is_number(value) and value != 0
def _is_float_array(value):
    """A float array or a number (``_is_number``)."""
    return (isinstance(value, np.ndarray) and value.dtype.kind == "f") or _is_number(value)


def _sum(previous, contribution):
    return None if previous is None or contribution is None else previous + contribution


def _float(value):
    return float(value) if _is_number(value) else None


def _text(value):
    """A number as ``.6g``; an array on one line (its rows ``[...], [...]``), abbreviated past 6 elements."""
    if _is_number(value):
        return f"{float(value):.6g}"
    if isinstance(value, np.ndarray):
        return " ".join(np.array2string(value, precision=6, threshold=6, separator=", ").split())
    return str(value)

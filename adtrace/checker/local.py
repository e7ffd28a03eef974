"""One node's local rules, tested alone: re-run its primitive on the recorded inputs.

For argument ``a`` of ``ans = fun(..., a, ...)`` and fixed random directions ``u`` (output space)
and ``v`` (input space), the VJP test compares ``<VJP(u), v>`` with the central difference
``<u, (fun(a + h v) - fun(a - h v)) / 2h>`` (as autograd's own ``check_vjp`` does, through the
vector spaces' ``covector`` and ``inner_prod``, so complex values work); the JVP test compares
``<u, JVP(v)>`` with the same number. Both are ``<u, J v>`` (the VJP is the JVP's transpose): the
two rows show the same figures up to rounding, and differ where one of the two rules is wrong.
The differences and their error estimate come from ``compare.differences``, the verdict from
``compare.tolerance.agree`` (rtol by the dtype of the rule's output, scaled at any magnitude).

A point where the primitive has no derivative (``abs`` at 0, ``maximum`` at a tie) is skipped
with the reason: there the one-sided differences disagree, ``(fun(a + h v) - ans) / h`` against
``(ans - fun(a - h v)) / h``.
"""

from dataclasses import dataclass
from typing import Optional

import numpy as np
from autograd.core import SparseObject, primitive_jvps, primitive_vjps, vspace
from autograd.util import subvals

from ..compare.differences import along
from ..compare.tolerance import FAIL, PASS, agree, norm, power_of_two_unit, rtol_for
from ..recording.labels import primitive_name

SKIPPED = "skipped"


@dataclass(frozen=True)
class NodeCheck:
    node: str
    primitive: str
    argnum: Optional[int]
    site: Optional[str]
    test: str  # vjp | jvp | vspace | nonfinite
    status: str  # pass | FAIL | skipped
    analytic: Optional[float] = None
    numeric: Optional[float] = None
    difference: Optional[float] = None
    reason: str = ""
    tolerance: Optional[float] = None  # a pass is difference <= tolerance


def check_node(label, call, ans, seed, rtol=None):
    """The checks of one recorded node (a ``NodeCall``), one VJP (and JVP) test per argnum;
    ``rtol``, when given, replaces the relative tolerance the dtype sets.

    The VJP is built for all the node's argnums at once, as autograd built it in the recorded run
    (a rule can be right alone and wrong jointly)."""
    row = dict(node=label, primitive=primitive_name(call.fun), site=call.site)
    if not _is_float(ans) or not all(_is_float(call.args[n]) for n in call.argnums):
        return [NodeCheck(**row, argnum=n, test="vjp", status=SKIPPED,
                          reason="input or output is not a float array or scalar") for n in call.argnums]
    rng = np.random.default_rng(seed)
    ys = vspace(ans)
    u = _direction(ans, rng)
    ingrads = tuple(primitive_vjps[call.fun](call.argnums, ans, call.args, call.kwargs)(ys.covector(u)))
    rows = []
    for argnum, ingrad in zip(call.argnums, ingrads):
        rows += _check_argument(row, call, ans, argnum, u, _densify(ingrad), rng, rtol)
    return rows


def _check_argument(row, call, ans, argnum, u, ingrad, rng, rtol):
    row = dict(row, argnum=argnum)
    a = call.args[argnum]
    mismatch = _vspace_mismatch(ingrad, a)
    if mismatch:
        return [NodeCheck(**row, test="vspace", status=FAIL, reason=mismatch)]
    xs, ys = vspace(a), vspace(ans)
    v = _direction(a, rng, symmetric=_is_symmetric(a))
    try:
        differences = along(_double(a), _double(v), _restricted(call, argnum))
    except Exception as exc:  # the primitive refuses the perturbed input (a domain error)
        return [NodeCheck(**row, test="vjp", status=SKIPPED, reason=f"primitive fails near the point: {exc}")]
    if differences is None:
        return [NodeCheck(**row, test="vjp", status=SKIPPED, reason="no step moves the point (not a number?)")]
    unit = power_of_two_unit(ingrad, differences.estimate)  # every inner product below on the numbers / unit
    numeric = _real(ys.inner_prod(u, differences.estimate / unit))
    kink = kink_reason(differences)
    if kink:
        return [NodeCheck(**row, test="vjp", status=SKIPPED, numeric=_times(numeric, unit), reason=kink)]
    w = _like(differences.direction, a)  # the direction the differences moved along, exactly
    rtol = rtol_for(np.result_type(ingrad)) if rtol is None else rtol
    # |u| |J w|: the size of the terms the inner product sums (which may cancel)
    terms, error = norm(u) * norm(differences.estimate / unit), differences.error(u) / unit
    analytic = _real(xs.inner_prod(w, xs.covector(ingrad / unit)))
    rows = [_compare(row, "vjp", analytic, numeric, rtol, terms, error, unit)]
    if call.fun in primitive_jvps:
        jvp_out = _densify(primitive_jvps[call.fun]((argnum,), [w], ans, call.args, call.kwargs))
        rows.append(_compare(row, "jvp", _real(ys.inner_prod(u, jvp_out / unit)), numeric, rtol, terms, error, unit))
    return rows


def _times(x, unit):
    with np.errstate(all="ignore"):
        return float(np.float64(x) * unit)


def _compare(row, test, analytic, numeric, rtol, terms, error, unit):
    """The verdict on the numbers divided by ``unit``; the row shows them as they are."""
    verdict = agree(analytic, numeric, rtol, terms, error)
    status = {PASS: PASS, FAIL: FAIL}.get(verdict.status, SKIPPED)
    reason = verdict.describe()
    if status == FAIL:
        reason = f"{test} differs from central differences: {reason}"
    return NodeCheck(**row, test=test, status=status, analytic=_times(analytic, unit), numeric=_times(numeric, unit),
                     difference=_times(verdict.difference, unit), tolerance=_times(verdict.tolerance, unit),
                     reason=reason)


def kink_reason(differences):
    """Why the primitive has no derivative at the point, or "" when it has one. The one-sided
    differences at h/2 are compared element by element, so one kink in a vector is not averaged
    away; a smooth function's differ by about h times its curvature, far below the threshold."""
    plus, minus, at, h = differences.half_plus, differences.half_minus, differences.center, differences.h / 2
    if not (np.all(np.isfinite(plus)) and np.all(np.isfinite(minus))):
        return "not finite next to the point (outside the primitive's domain)"
    with np.errstate(all="ignore"):
        right, left = (plus - at) / h, (at - minus) / h
        gap = np.abs(right - left)
    scale = max(1.0, float(np.max(np.abs(right), initial=0.0)), float(np.max(np.abs(left), initial=0.0)))
    if float(np.max(gap, initial=0.0)) > 1e-2 * scale:
        where = np.unravel_index(int(np.argmax(gap)), gap.shape) if gap.shape else ()
        at_element = f" at output element {tuple(int(i) for i in where)}" if where else ""
        return f"not differentiable here: one-sided differences differ{at_element} (a kink or a tie)"
    return ""


def _restricted(call, argnum):
    """The primitive as a function of one argument, the others fixed at their recorded values."""
    raw = getattr(call.fun, "fun", call.fun)
    return lambda a: _double(raw(*subvals(call.args, [(argnum, a)]), **call.kwargs))


def _direction(value, rng, symmetric=False):
    """A fixed pseudo-random direction in ``value``'s space (symmetric for a symmetric matrix:
    rules such as cholesky's assume their input stays symmetric)."""
    value = np.asarray(value)
    d = rng.standard_normal(value.shape)
    if np.iscomplexobj(value):
        d = d + 1j * rng.standard_normal(value.shape)
    if symmetric:
        d = (d + np.swapaxes(d, -1, -2)) / 2
    d = d / max(float(np.max(np.abs(d), initial=0.0)), 1.0)  # no element above 1: u * ans overflows only if ans does
    return d.astype(value.dtype) if value.shape else value.dtype.type(d)


def _is_symmetric(value):
    """Symmetric to rounding: a covariance computed as ``K + K.T`` or from pairwise distances is
    symmetric exactly under one numpy and off by an ulp under another (numpy 1.x's gaussian_process
    example: 4e-17 in 2.1), and the rules that assume symmetry are right for it either way."""
    value = np.asarray(value)
    if not (value.ndim >= 2 and value.shape[-1] == value.shape[-2] and value.shape[-1] > 1):
        return False
    asymmetry = np.max(np.abs(value - np.swapaxes(value, -1, -2)))
    return bool(asymmetry <= 64 * np.finfo(value.dtype).eps * np.max(np.abs(value)))


def _double(value):
    """The same value in double precision (numerical derivatives of float32 code in float64)."""
    value = np.asarray(value)
    return value.astype(np.complex128 if np.iscomplexobj(value) else np.float64)


def _like(direction, value):
    """``direction`` in ``value``'s dtype and form (a scalar for a scalar)."""
    value = np.asarray(value)
    direction = np.asarray(direction).astype(value.dtype)
    return direction if value.shape else value.dtype.type(direction)


def _real(x):
    return float(np.real(x))


def _densify(g):
    return g.mut_add(g.vs.zeros()) if isinstance(g, SparseObject) else g


def _vspace_mismatch(contribution, parent_value):
    """The ``assert vspace(...) == ...`` class of bug: shape, dtype or complexness differ."""
    got, want = vspace(contribution), vspace(parent_value)
    if got == want:
        return ""
    return f"VJP returns {_describe(contribution)} for an argument of {_describe(parent_value)}"


def _describe(value):
    value = np.asarray(value)
    return f"shape {value.shape} {value.dtype}"


def _is_float(value):
    """A float or complex array or scalar (containers are not re-run: their rules are autograd's
    container_take/untake, tested through the arrays they hold)."""
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "fc"
    return isinstance(value, (float, complex, np.floating, np.complexfloating))

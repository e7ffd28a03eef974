"""One node's local rules, tested alone: re-run its primitive on the recorded inputs.

For argument ``a`` of ``ans = fun(..., a, ...)`` and fixed random directions ``u`` (output space)
and ``v`` (input space), the VJP test compares ``<VJP(u), v>`` with the central difference
``<u, (fun(a + h v) - fun(a - h v)) / 2h>``; the JVP test compares ``<u, JVP(v)>`` with the same
number. Tolerances scale with the dtype's precision and the magnitude of the two sides.

A point where the primitive has no derivative (``abs`` at 0, ``maximum`` at a tie) is skipped
with the reason: there the one-sided differences disagree, ``(fun(a + h v) - ans) / h`` against
``(ans - fun(a - h v)) / h``.
"""

from dataclasses import dataclass
from typing import Optional

import numpy as np
from autograd.core import SparseObject, primitive_jvps, primitive_vjps, vspace
from autograd.util import subvals

from ..labels import primitive_name

PASS, FAIL, SKIPPED = "pass", "FAIL", "skipped"
_PRECISION = {np.dtype(np.float64): (1e-6, 1e-5), np.dtype(np.float32): (1e-3, 1e-2),
              np.dtype(np.complex128): (1e-6, 1e-5), np.dtype(np.complex64): (1e-3, 1e-2)}


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


def check_node(label, call, ans, seed):
    """The checks of one recorded node (a ``NodeCall``), one VJP (and JVP) test per argnum."""
    rows = []
    for argnum in call.argnums:
        rows += _check_argument(label, call, ans, argnum, np.random.default_rng([seed, argnum]))
    return rows


def _check_argument(label, call, ans, argnum, rng):
    name = primitive_name(call.fun)
    row = dict(node=label, primitive=name, argnum=argnum, site=call.site)
    a = call.args[argnum]
    if not _is_float(a) or not _is_float(ans):
        return [NodeCheck(**row, test="vjp", status=SKIPPED, reason="input or output is not a float array or scalar")]
    u, v = _direction(ans, rng), _direction(a, rng)
    phi = _restricted(call, argnum)
    vjp_out = _densify(tuple(primitive_vjps[call.fun]((argnum,), ans, call.args, call.kwargs)(u))[0])
    mismatch = _vspace_mismatch(vjp_out, a)
    if mismatch:
        return [NodeCheck(**row, test="vspace", status=FAIL, reason=mismatch)]
    h, rtol = _steps(a)
    try:
        with np.errstate(all="ignore"):
            plus, minus = phi(a + h * v), phi(a - h * v)
    except Exception as exc:  # the primitive refuses the perturbed input (a domain error)
        return [NodeCheck(**row, test="vjp", status=SKIPPED, reason=f"primitive fails near the point: {exc}")]
    numeric = _inner(u, (plus - minus) / (2 * h))
    kink = _kink(plus, minus, np.asarray(ans), h)
    if kink:
        return [NodeCheck(**row, test="vjp", status=SKIPPED, numeric=numeric, reason=kink)]
    roundoff = _roundoff(u, ans, h)
    rows = [_compare(row, "vjp", _inner(vjp_out, v), numeric, rtol, roundoff)]
    if call.fun in primitive_jvps:
        jvp_out = primitive_jvps[call.fun]((argnum,), [v], ans, call.args, call.kwargs)
        rows.append(_compare(row, "jvp", _inner(u, _densify(jvp_out)), numeric, rtol, roundoff))
    return rows


def _roundoff(u, ans, h):
    """The rounding error of the central difference: large outputs lose digits when subtracted."""
    ans = np.asarray(ans)
    eps = np.finfo(ans.dtype).eps if ans.dtype.kind in "fc" else np.finfo(float).eps
    return 10 * eps * float(np.max(np.abs(ans), initial=0.0)) * float(np.sum(np.abs(u))) / h


def _compare(row, test, analytic, numeric, rtol, roundoff):
    difference = abs(analytic - numeric)
    scale = max(abs(analytic), abs(numeric), 1.0)
    ok = bool(np.isfinite(difference)) and difference <= rtol * scale + roundoff
    return NodeCheck(**row, test=test, status=PASS if ok else FAIL, analytic=analytic, numeric=numeric,
                     difference=difference, reason="" if ok else f"{test} differs from central differences")


def _kink(plus, minus, ans, h):
    """Why the primitive has no derivative at the point, or "" when it has one. Compared element
    by element, so one kink in a vector is not averaged away; a smooth function's one-sided
    differences differ by about h times its curvature, far below the threshold."""
    if not (np.all(np.isfinite(plus)) and np.all(np.isfinite(minus))):
        return "not finite next to the point (outside the primitive's domain)"
    right, left = (plus - ans) / h, (ans - minus) / h
    gap = np.abs(right - left)
    scale = max(1.0, float(np.max(np.abs(right), initial=0.0)), float(np.max(np.abs(left), initial=0.0)))
    if float(np.max(gap, initial=0.0)) > 1e-2 * scale:
        where = np.unravel_index(int(np.argmax(gap)), gap.shape) if gap.shape else ()
        at = f" at output element {tuple(int(i) for i in where)}" if where else ""
        return f"not differentiable here: one-sided differences differ{at} (a kink or a tie)"
    return ""


def _restricted(call, argnum):
    """The primitive as a function of one argument, the others fixed at their recorded values."""
    raw = getattr(call.fun, "fun", call.fun)
    return lambda a: np.asarray(raw(*subvals(call.args, [(argnum, a)]), **call.kwargs))


def _direction(value, rng):
    value = np.asarray(value)
    d = rng.standard_normal(value.shape)
    if np.iscomplexobj(value):
        d = d + 1j * rng.standard_normal(value.shape)
    return d.astype(value.dtype) if value.shape else value.dtype.type(d)


def _steps(a):
    h, rtol = _PRECISION.get(np.asarray(a).dtype, (1e-6, 1e-5))
    return h * max(1.0, float(np.max(np.abs(a)))), rtol


def _inner(x, y):
    return float(np.real(np.sum(np.conj(np.asarray(x)) * np.asarray(y))))


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

"""The checks a report states with pass/fail: the engines agree, the visit orders are valid,
the gradient matches central finite differences."""

from dataclasses import dataclass

import numpy as np
from autograd.core import vspace
from autograd.misc.flatten import flatten

from .align import CLOSE, EXACT, NOT_COMPARED, first_divergence
from ..reference import is_reverse_topological


@dataclass(frozen=True)
class Check:
    name: str
    passed: bool  # True when skipped: a check that could not run fails nothing, and says why
    detail: str
    skipped: bool = False


def skipped(name, reason):
    return Check(name, True, reason, skipped=True)


def engines_agree(rows, engine="autograd"):
    exact = sum(r.status == EXACT for r in rows)
    close = sum(r.status == CLOSE for r in rows)
    divergent = first_divergence(rows)
    detail = f"{exact} nodes exact, {close} within rtol 1e-9"
    summarized = sum(r.summarized and r.status != NOT_COMPARED for r in rows)
    if summarized:
        detail += f" ({summarized} compared by summary statistics only: capture them with capture='full')"
    uncompared = sum(r.status == NOT_COMPARED for r in rows)
    if uncompared:
        detail += (f"; {uncompared} not compared (containers above the inline size, kept as type and length: "
                   "capture them with capture='full')")
    if divergent:
        detail += f"; first divergent node: {divergent}"
    return Check(f"reference engine vs {engine}, per node", divergent is None and bool(rows), detail)


def orders_valid(autograd_order, autograd_graph, reference_order, reference_graph, walk="autograd's toposort"):
    """``walk``: what made the engine's order (another engine: "micrograd's build_topo")."""
    ok_autograd = is_reverse_topological(autograd_order, autograd_graph)
    ok_reference = is_reverse_topological(reference_order, reference_graph)
    same = list(autograd_order) == list(reference_order)
    detail = (f"{walk}: {'valid' if ok_autograd else 'INVALID'}; lecture's DFS order: "
              f"{'valid' if ok_reference else 'INVALID'}; {'same order' if same else 'different orders'}")
    return Check("both visit orders are reverse topological", ok_autograd and ok_reference, detail)


def finite_differences(f, x, seed, gradient, eps=1e-6, rtol=None, atol=1e-7):
    """Directional check: <seed, (f(x + h u) - f(x - h u)) / 2h> against <gradient, u>, with
    ``u`` a fixed pseudo-random direction (seeded: the report stays deterministic). A container
    argument (tuples, lists, dicts of arrays) moves along ``u`` through its flattened vector
    (``autograd.misc.flatten``), a value of a user's own vector space through that space's
    ``randn``, ``add``, ``scalar_mul`` and ``inner_prod`` (as autograd's ``check_vjp``). ``rtol``
    (default 1e-5): the relative tolerance the user accepts, for a rule approximate by design
    (``fixed_point``'s iterative solve)."""
    name, rtol = "central finite differences", DEFAULT_RTOL if rtol is None else rtol
    try:
        with np.errstate(all="ignore"):  # adtrace's own arithmetic on inf and nan: no numpy warning
            move, analytic, h = _direction(x, gradient, eps)
            forward, backward = move(h), move(-h)
    except Exception as exc:  # a vector space that cannot move (or a value in none): say why, claim nothing
        return skipped(name, f"no direction to move the argument along ({type(exc).__name__}: {exc})")
    plus, minus = _flattened(f(forward))[0], _flattened(f(backward))[0]
    with np.errstate(all="ignore"):
        numeric = float(np.sum(_flattened(seed)[0] * (plus - minus) / (2 * h)))
        passed = bool(np.isclose(analytic, numeric, rtol=rtol, atol=atol))
        relative = abs(analytic - numeric) / max(abs(analytic), abs(numeric)) if analytic != numeric else 0.0
    return Check(name, passed, f"<gradient, u> = {analytic:.6g}, numeric = {numeric:.6g}, relative difference "
                               f"{relative:.1e} (h = {h:.1e}, rtol {rtol:g})")


def _direction(x, gradient, eps):
    """``(t -> x + t u, <gradient, u>, h)`` for a fixed pseudo-random direction ``u``."""
    try:
        flat, unflatten = _flattened(x)
    except (TypeError, ValueError, AttributeError):  # not arrays: the value's own vector space
        return _direction_in_vspace(x, gradient, eps)
    u = np.random.default_rng(0).standard_normal(flat.shape)
    h = eps * max(1.0, float(np.max(np.abs(flat))) if flat.size else 1.0)
    return (lambda t: unflatten(flat + t * u)), float(np.sum(_flattened(gradient)[0] * u)), h


def _direction_in_vspace(x, gradient, eps):
    space = vspace(x)
    state = np.random.get_state()  # randn of a user's space may draw from numpy's global generator
    try:
        np.random.seed(0)
        u = space.randn()
    finally:
        np.random.set_state(state)
    # (as autograd's check_vjp: a complex gradient is a covector)
    analytic = float(np.real(space.inner_prod(u, space.covector(gradient))))
    return (lambda t: space.add(x, space.scalar_mul(u, t))), analytic, eps


DEFAULT_RTOL = 1e-5


def _flattened(value):
    """``value`` as a float array and the way back: arrays and scalars as they are, containers
    through ``autograd.misc.flatten``."""
    if _is_float_array(value):
        return np.asarray(value, dtype=float), lambda flat: flat
    flat, unflatten = flatten(value)
    if not _is_float_array(flat):
        raise TypeError(f"flattened to {np.asarray(flat).dtype}, not floats")
    return np.asarray(flat, dtype=float), unflatten


def _is_float_array(value):
    return isinstance(value, (np.ndarray, np.floating, float)) and np.asarray(value).dtype.kind == "f"

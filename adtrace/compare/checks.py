"""The checks a report states with pass/fail: the engines agree, the visit orders are valid,
the gradient matches central finite differences."""

from dataclasses import dataclass

import numpy as np
from autograd.core import vspace
from autograd.misc.flatten import flatten

from .align import ATOL, CLOSE, EXACT, NOT_COMPARED, RTOL, first_divergence
from .differences import along, richardson
from .tolerance import UNRESOLVED, agree, norm, rtol_for
from ..reference import is_reverse_topological


@dataclass(frozen=True)
class Check:
    name: str
    passed: bool  # True when skipped: a check that could not run fails nothing, and says why
    detail: str
    skipped: bool = False
    known: bool = True  # False: it ran, and cannot tell (skipped too: it fails nothing, and is no pass)


def skipped(name, reason):
    return Check(name, True, reason, skipped=True)


def not_known(name, reason):
    return Check(name, True, reason, skipped=True, known=False)


def verdict(check):
    """What a check's row says: ``not known`` (it ran and cannot tell), ``skipped`` (it could not run;
    either fails nothing), ``pass`` or ``FAIL``."""
    return "not known" if not check.known else "skipped" if check.skipped else "pass" if check.passed else "FAIL"


def rule_suspected(checks):
    """Central finite differences fail while the reference engine agrees with the engine node by
    node: the two share the wrong local rule (a custom primitive's VJP, which the reference engine
    borrows), and only a check of each node alone (``checker``) names it."""
    found = {c.name: c for c in checks}
    differences = found.get("central finite differences")
    engines = next((c for c in checks if c.name.startswith("reference engine vs ")), None)
    others = [c for c in checks if c not in (differences, engines) and c.name != "per-node local rules"]
    return (differences is not None and verdict(differences) == "FAIL" and engines is not None
            and verdict(engines) == "pass" and not any(verdict(c) == "FAIL" for c in others))  # (a pass's own bug)


def engines_agree(rows, engine="autograd", end=None):
    """``end``: the node the pass starts from (its row compares the seed with itself)."""
    exact = sum(r.status == EXACT for r in rows)
    close = sum(r.status == CLOSE for r in rows)
    divergent = first_divergence(rows)
    nodes = "1 node" if exact == 1 else f"{exact} nodes"
    detail = f"{nodes} exact, {close} within rtol {_short(RTOL)} (+ {_short(ATOL)} x the largest partial adjoint)"
    summarized = sum(r.summarized and r.status != NOT_COMPARED for r in rows)
    if summarized:
        detail += f" ({summarized} compared by summary statistics only: capture them with capture='full')"
    borrowed = [r for r in rows if r.status == NOT_COMPARED and r.borrowed]
    if borrowed:
        detail += (f"; {len(borrowed)} not compared (the lecture's sum holds contributions it borrowed from the "
                   f"engine's own recording, compared with themselves; first: {borrowed[0].label}: "
                   f"{borrowed[0].borrowed})")
    unknown = sum(r.status == NOT_COMPARED and r.partial_adjoints is not None and r.v_i_bar is None
                  and not r.borrowed for r in rows)
    if unknown:
        detail += (f"; {unknown} not compared (the lecture's sum is not known: a contribution into it came from "
                   "an op whose rule adtrace could not apply (it has none, or its values were kept as summaries) and "
                   "the engine's own contribution was not known, or kept only as a summary)")
    uncompared = sum(r.status == NOT_COMPARED for r in rows) - unknown - len(borrowed)
    if uncompared:
        detail += (f"; {uncompared} not compared (containers above the inline size, kept as type and length: "
                   "capture them with capture='full')")
    if divergent:
        detail += f"; first divergent node: {divergent}"
    name = f"reference engine vs {engine}, per node"
    if borrowed and divergent is None and all(r.status == NOT_COMPARED or r.label == end for r in rows):
        return not_known(name, detail)  # (nothing the lecture computed itself was compared)
    return Check(f"reference engine vs {engine}, per node", divergent is None and bool(rows), detail)


def _short(x):
    return f"{x:g}".replace("e-0", "e-")


def orders_valid(autograd_order, autograd_graph, reference_order, reference_graph, walk="autograd's toposort",
                 early=None, leaves_anywhere=False):
    """``walk``: what made the engine's order (another engine: "micrograd's build_topo"); ``early``: the
    node whose local backward ran before a consumer added into it, as ``pass_checks`` names it;
    ``leaves_anywhere``: the engine's leaves may be visited at any time (``is_reverse_topological``)."""
    strict = None if leaves_anywhere else is_reverse_topological(autograd_order, autograd_graph)  # (read once)
    ok_autograd = (is_reverse_topological(autograd_order, autograd_graph, leaves_anywhere) if strict is None
                   else strict) and early is None
    ok_reference = is_reverse_topological(reference_order, reference_graph)
    same = list(autograd_order) == list(reference_order)
    if strict is None and ok_autograd:
        strict = is_reverse_topological(autograd_order, autograd_graph)
    valid = "valid" if not ok_autograd or strict else \
        "valid (a leaf visited before a consumer added into it: its local backward does nothing)"
    detail = (f"{walk}: {valid if ok_autograd else 'INVALID'}; lecture's DFS order: "
              f"{'valid' if ok_reference else 'INVALID'}; {'same order' if same else 'different orders'}")
    if early:
        detail += f"; {early}"
    return Check("both visit orders are reverse topological", ok_autograd and ok_reference, detail)


def order_valid(order, graph, walk="autograd's toposort"):
    """``orders_valid`` without a reference engine's order beside it (not run: too many nodes)."""
    ok = is_reverse_topological(order, graph)
    return Check("the visit order is reverse topological", ok,
                 f"{walk}: {'valid' if ok else 'INVALID'} ({len(order):,} nodes; the lecture's order not made)")


def finite_differences(f, x, seed, gradient, eps=1e-6, rtol=None):
    """Directional check: ``dot(seed, (f(x + h u) - f(x - h u)) / 2h)`` (Richardson-extrapolated,
    ``compare.differences``) against ``dot(gradient, u)``, with ``u`` a fixed pseudo-random
    direction (seeded: the report stays deterministic), judged by ``compare.tolerance.agree``.
    A container argument (tuples, lists, dicts of arrays) moves along ``u`` through its flattened
    vector (``autograd.misc.flatten``), a value of a user's own vector space through that space's
    ``randn``, ``add``, ``scalar_mul`` and ``inner_prod`` (as autograd's ``check_vjp``). A complex
    argument moves along a complex ``u`` (a real and an imaginary direction per element), its
    gradient read as autograd's covector (``df/dx - i df/dy`` for a real f of ``z = x + iy``).
    ``rtol`` (default: by the gradient's dtype, 1e-5 in double precision): the relative tolerance
    the user accepts, for a rule approximate by design (``fixed_point``'s iterative solve).
    Anything that stops the check (a direction it cannot take, an output that is not floats, the
    function raising next to the point) skips it and says why: it is never blamed on the function."""
    name = "central finite differences"
    with np.errstate(all="ignore"):  # adtrace's own arithmetic on inf and nan: no numpy warning
        try:
            analytic, numeric, terms, error, h, dtype = _compared(f, x, seed, gradient, eps)
        except _Stopped as stopped:
            exc = stopped.__cause__
            return skipped(name, f"{stopped.args[0]} ({type(exc).__name__}: {exc})")
        except Exception as exc:  # a vector space that cannot move (or a value in none): say why, claim nothing
            return skipped(name, f"no direction to move the argument along ({type(exc).__name__}: {exc})")
        verdict = agree(analytic, numeric, rtol_for(dtype) if rtol is None else rtol, terms, error)
    detail = (f"dot(gradient, u) = {analytic:.6g}, numeric = {numeric:.6g}, {verdict.describe()} "
              f"(h = {h:.1e}; u: a random direction, seeded)")
    if verdict.status == UNRESOLVED:
        return skipped(name, detail)
    return Check(name, verdict.passed, detail)


class _Stopped(Exception):
    """The function raised next to the point, or gave an output with no differences (the cause)."""


def _compared(f, x, seed, gradient, eps):
    """``(dot(gradient, u), the differences' dot(seed, J u), |seed| |J u|, their error, h, dtype)``."""
    seed = _flattened(seed)[0]

    def output(point):
        try:
            value = f(point)
        except Exception as exc:
            raise _Stopped("the function raised next to the point") from exc
        try:
            return _flattened(value)[0].astype(complex if np.iscomplexobj(value) else float)
        except Exception as exc:
            raise _Stopped("the function's output has no differences to take") from exc

    try:
        flat, unflatten = _flattened(x)
    except (TypeError, ValueError, AttributeError):  # not arrays: the value's own vector space
        flat = None
    if flat is not None:
        u = _random(flat.shape, np.iscomplexobj(flat))
        found = along(flat.astype(complex if np.iscomplexobj(flat) else float), u, lambda p: output(unflatten(p)),
                      center=False)
        grad_flat = _flattened(gradient)[0]
        analytic, dtype = _real_sum(found.direction * grad_flat), grad_flat.dtype
    else:
        space = vspace(x)
        u = _randn(space)
        found = richardson(lambda t: output(space.add(x, space.scalar_mul(u, t))), eps, center=False)
        # (as autograd's check_vjp: a complex gradient is a covector)
        analytic, dtype = float(np.real(space.inner_prod(u, space.covector(gradient)))), float
    numeric = _real_sum(seed * found.estimate)
    return analytic, numeric, norm(seed) * norm(found.estimate), found.error(np.conj(seed)), found.h, dtype


def _random(shape, complex_):
    rng = np.random.default_rng(0)
    u = rng.standard_normal(shape)
    return u + 1j * rng.standard_normal(shape) if complex_ else u


def _randn(space):
    state = np.random.get_state()  # randn of a user's space may draw from numpy's global generator
    try:
        np.random.seed(0)
        return space.randn()
    finally:
        np.random.set_state(state)


def _real_sum(products):
    return float(np.real(np.sum(products)))


def _flattened(value):
    """``value`` as a float or complex array and the way back: arrays and scalars as they are,
    containers through ``autograd.misc.flatten``."""
    if _is_number_array(value):
        return np.asarray(value), lambda flat: flat
    flat, unflatten = flatten(value)
    if not _is_number_array(flat):
        raise TypeError(f"flattened to {np.asarray(flat).dtype}, not floats")
    return np.asarray(flat), unflatten


def _is_number_array(value):
    return isinstance(value, (np.ndarray, np.number, float, complex)) and np.asarray(value).dtype.kind in "fc"

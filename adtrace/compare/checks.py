"""The checks a report states with pass/fail: the engines agree, the visit orders are valid,
the gradient matches central finite differences."""

from dataclasses import dataclass

import numpy as np

from .align import CLOSE, EXACT, first_divergence
from ..reference import is_reverse_topological


@dataclass(frozen=True)
class Check:
    name: str
    passed: bool
    detail: str


def engines_agree(rows):
    exact = sum(r.status == EXACT for r in rows)
    close = sum(r.status == CLOSE for r in rows)
    divergent = first_divergence(rows)
    detail = f"{exact} nodes exact, {close} within rtol 1e-9"
    summarized = sum(r.summarized for r in rows)
    if summarized:
        detail += f" ({summarized} compared by summary statistics only: capture them with capture='full')"
    if divergent:
        detail += f"; first divergent node: {divergent}"
    return Check("reference engine vs autograd, per node", divergent is None and bool(rows), detail)


def orders_valid(autograd_order, autograd_graph, reference_order, reference_graph):
    ok_autograd = is_reverse_topological(autograd_order, autograd_graph)
    ok_reference = is_reverse_topological(reference_order, reference_graph)
    same = list(autograd_order) == list(reference_order)
    detail = (f"autograd's toposort: {'valid' if ok_autograd else 'INVALID'}; lecture's DFS order: "
              f"{'valid' if ok_reference else 'INVALID'}; {'same order' if same else 'different orders'}")
    return Check("both visit orders are reverse topological", ok_autograd and ok_reference, detail)


def finite_differences(f, x, seed, gradient, eps=1e-6, rtol=1e-5, atol=1e-7):
    """Directional check: <seed, (f(x + h u) - f(x - h u)) / 2h> against <gradient, u>, with
    ``u`` a fixed pseudo-random direction (seeded: the report stays deterministic)."""
    x = np.asarray(x, dtype=float)
    u = np.random.default_rng(0).standard_normal(x.shape)
    h = eps * max(1.0, float(np.max(np.abs(x))) if x.size else 1.0)
    numeric = float(np.sum(np.asarray(seed) * (np.asarray(f(x + h * u)) - np.asarray(f(x - h * u))) / (2 * h)))
    analytic = float(np.sum(np.asarray(gradient) * u))
    passed = bool(np.isclose(analytic, numeric, rtol=rtol, atol=atol))
    return Check("central finite differences", passed,
                 f"<gradient, u> = {analytic:.6g}, numeric = {numeric:.6g} (h = {h:.1e}, rtol {rtol:g})")

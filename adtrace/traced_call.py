"""Trace one call of a user's function: autograd recorded, the reference engine beside it, checks.

``trace_call(f, args, argnum=0, mode="rev")`` differentiates ``f`` with respect to argument
``argnum`` at ``args``: in reverse mode one VJP with a seed of ones (the gradient for a scalar
output), in forward mode one JVP with a tangent of ones. Everything the reporter needs is in
the returned ``TracedCall``; the reporter itself never runs autograd.
"""

import warnings
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np
from autograd import make_jvp, make_vjp
from autograd.core import vspace

from . import reference
from .align import align, relabel
from .arguments import differentiated, unary
from .callsite import source_location
from .checker import check
from .checks import Check, engines_agree, finite_differences, orders_valid
from .session import record

MODES = ("rev", "fwd", "both")


@dataclass
class TracedCall:
    name: str
    location: str
    args: tuple
    argnum: int
    mode: str
    capture: str
    output: Any = None
    gradient: Any = None  # the VJP with a seed of ones (reverse mode)
    tangent: Any = None  # the JVP with a tangent of ones (forward mode)
    recording: Any = None  # Recording of the reverse-mode call
    forward_recording: Any = None
    reference: Any = None  # reference.GradientRun, or None
    reference_tangents: tuple = ()
    reference_note: Optional[str] = None  # why the reference engine did not run
    alignment: list = field(default_factory=list)
    checks: list = field(default_factory=list)
    warnings: list = field(default_factory=list)
    node_checks: Any = None  # checker.CheckReport, with node_checks=True


def trace_call(f, args, argnum=0, mode="rev", capture="auto", root=None, node_checks=False):
    """``root``: the folder source locations are relative to (default: the working one);
    ``node_checks``: also run the per-node checker (``adtrace.check``) on the call."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}; got {mode!r}")
    x = differentiated(args, argnum)
    of_x = unary(f, args, argnum)
    call = TracedCall(_name(f), source_location(f, root), tuple(args), argnum, mode, capture)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if mode in ("rev", "both"):
            _reverse(call, of_x, x, capture)
        if mode in ("fwd", "both"):
            _forward(call, of_x, x, capture)
        if node_checks:
            call.node_checks = check(f, *args, argnum=argnum, root=root)
            if not call.node_checks.passed:
                first = call.node_checks.first_failure
                call.checks.append(Check("per-node local rules", False, f"first failing node: {first.node}"))
            else:
                call.checks.append(Check("per-node local rules", True, "every checked node passes"))
    call.warnings = sorted({str(w.message) for w in caught})
    return call


def _reverse(call, f, x, capture):
    with record(capture=capture) as rec:
        vjp, output = make_vjp(f)(x)
        seed = vspace(output).ones()
        call.gradient = vjp(seed)
    call.output, call.recording = output, rec
    try:
        call.reference = reference.run_gradient(f, x, seed)
    except (TypeError, NotImplementedError) as exc:
        call.reference_note = str(exc)
    if rec.queries and call.reference is not None:
        query = rec.queries[-1]  # the outer query: inner ones (grad inside f) ran during the trace
        end = rec.query_events(query)[0].end
        call.reference = relabel(call.reference, rec, rec.nodes[end].level)
        call.alignment = align(rec, query, call.reference)
        call.checks += [engines_agree(call.alignment),
                        orders_valid(rec.visit_order(query), rec.graph(end), call.reference.order,
                                     call.reference.parents)]
    if _is_array_like(x):
        call.checks.append(finite_differences(f, x, seed, call.gradient))


def _forward(call, f, x, capture):
    tangent_in = vspace(x).ones()
    with record(capture=capture) as rec:
        output, call.tangent = make_jvp(f)(x)(tangent_in)
    call.output, call.forward_recording = output, rec
    try:
        call.reference_tangents = reference.run_tangents(f, x, tangent_in)
        ref_tangent = call.reference_tangents[-1].tangent if call.reference_tangents else None
        agree = ref_tangent is not None and np.allclose(ref_tangent, call.tangent, rtol=1e-9, atol=1e-12)
        call.checks.append(Check("forward mode: reference tangent vs autograd", bool(agree),
                                 "output tangents agree" if agree else "output tangents differ"))
    except (TypeError, NotImplementedError) as exc:
        call.reference_note = call.reference_note or str(exc)


def _is_array_like(x):
    try:
        return np.issubdtype(np.asarray(x).dtype, np.floating)
    except (TypeError, ValueError):
        return False


def _name(f):
    return getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or type(f).__name__

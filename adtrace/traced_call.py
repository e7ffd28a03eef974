"""Trace one call of a user's function: autograd recorded, the reference engine beside it, checks.

``trace_call(f, args, argnum=0, mode="rev")`` differentiates ``f`` with respect to argument
``argnum`` at ``args``: in reverse mode one VJP with a seed of ones (the gradient for a scalar
output), in forward mode one JVP with a tangent of ones. Everything the reporter needs is in
the returned ``TracedCall``; the reporter itself never runs autograd.
"""

import inspect
import os
import warnings
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np
from autograd import make_jvp, make_vjp
from autograd.core import vspace

from . import reference
from .align import align
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


def trace_call(f, args, argnum=0, mode="rev", capture="auto", root=None):
    """``root``: the folder the source location is given relative to (default: the working one)."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}; got {mode!r}")
    if not 0 <= argnum < len(args):
        raise ValueError(f"argnum {argnum} is out of range for {len(args)} argument(s)")
    x = args[argnum]
    if x is None or isinstance(x, (bool, str, bytes, int)):
        raise TypeError(f"cannot differentiate with respect to a {type(x).__name__} ({x!r}): give a float, "
                        "a float array, or a tuple/list/dict of them")
    unary = _unary(f, args, argnum)
    call = TracedCall(_name(f), source_location(f, root), tuple(args), argnum, mode, capture)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if mode in ("rev", "both"):
            _reverse(call, unary, x, capture)
        if mode in ("fwd", "both"):
            _forward(call, unary, x, capture)
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
        query = rec.queries[-1]
        call.alignment = align(rec, query, call.reference)
        end = rec.query_events(query)[0].end
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


def _unary(f, args, argnum):
    def unary(x):
        return f(*args[:argnum], x, *args[argnum + 1:])

    unary.__name__ = _name(f)
    return unary


def _is_array_like(x):
    try:
        return np.issubdtype(np.asarray(x).dtype, np.floating)
    except (TypeError, ValueError):
        return False


def _name(f):
    return getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or type(f).__name__


def source_location(f, root=None):
    """``path:line`` relative to ``root`` (the working directory by default), or ``module:line``
    for code outside it: never an absolute path."""
    try:
        path, line = inspect.getsourcefile(f), inspect.getsourcelines(f)[1]
    except (TypeError, OSError):
        return getattr(f, "__module__", None) or "unknown"
    relative = os.path.relpath(path, root or os.getcwd()) if path else None
    if relative is None or relative.startswith(".."):
        return f"{getattr(f, '__module__', 'unknown')}:{line}"
    return f"{relative.replace(os.sep, '/')}:{line}"

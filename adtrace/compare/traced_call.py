"""Trace one call of a user's function: autograd recorded, the reference engine beside it, checks.

``trace_call(f, args, argnum=0, mode="rev")`` differentiates ``f`` with respect to argument
``argnum`` at ``args``: in reverse mode one VJP with a seed of ones (the gradient for a scalar
output), in forward mode one JVP with a tangent of ones. Everything the reporter needs is in
the returned ``TracedCall``; the reporter itself never runs autograd.
"""

import gc
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import autograd
import numpy as np
from autograd import make_jvp, make_vjp
from autograd.core import vspace

from .. import reference
from ..recording.eventlog import collector_paused
from ..recording.events import FWD, REV, NodeCreated
from .align import align, relabel
from .arguments import differentiated, unary
from ..recording.callsite import source_location
from .checks import Check, engines_agree, finite_differences, order_valid, orders_valid
from .tolerance import agree_arrays
from ..recording.passes import user_query
from ..recording.session import record
from ..recording.values import ArraySummary, plain

MODES = (REV, FWD, "both")  # (the command line's --mode)
# nodes: above it the reference engine is not run (it reruns the function and doubles a report's time: 1,000,000
# nodes would take minutes), and the report says so; ``trace_call(reference_limit=None)`` always runs it
REFERENCE_LIMIT = 100_000
TANGENT_RTOL = 1e-9  # the same rules in the same order: rounding-level agreement (a rule 1e-7 off differs)
_AUTOGRAD_DIR = str(Path(autograd.__file__).resolve().parent)
_REFERENCE_DIR = str(Path(reference.__file__).resolve().parent)


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
    reference_warnings: list = field(default_factory=list)  # numpy's warnings in the reference engine's own rules
    node_checks: Any = None  # checker.CheckReport, added by checker.check_call
    pass_findings: list = field(default_factory=list)  # compare.pass_checks.PassFinding: bugs of the whole pass
    engine: str = "autograd"  # the engine traced (traced_engine_call: every argument is a leaf, argnum None)


def trace_call(f, args, argnum=0, mode="rev", capture="auto", relative_to=None, rtol=None,
               reference_limit=REFERENCE_LIMIT):
    """``relative_to``: the folder source locations are relative to (default: the working one); ``rtol``: the
    relative tolerance of the numerical checks (central differences, per node), when the user
    accepts more than the default (a rule approximate by design, as ``fixed_point``'s);
    ``reference_limit``: the most nodes a recording may have for the reference engine to run beside it
    (None: no limit); above it ``reference_note`` says why it did not run."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}; got {mode!r}")
    if reference_limit is not None and (type(reference_limit) is not int or reference_limit < 0):
        raise ValueError("reference_limit must be a whole number of nodes, 0 or more, or None; "
                         f"got {reference_limit!r}")
    x = differentiated(args, argnum)
    of_x = unary(f, args, argnum)
    call = TracedCall(function_name(f), source_location(f, relative_to), tuple(args), argnum, mode, capture)
    with warnings.catch_warnings(record=True) as caught, collector_paused():
        warnings.simplefilter("always")
        if mode in (REV, "both"):
            _reverse(call, of_x, x, capture, rtol, relative_to, reference_limit)
        if mode in (FWD, "both"):
            _forward(call, of_x, x, capture, relative_to, reference_limit)
    call.warnings, call.reference_warnings = _sorted_warnings(caught)
    return call


def _sorted_warnings(caught):
    """autograd's own warnings (its text is fixed) and those raised in the reference engine's code
    (its rules recomputing a derivative, as a division by zero: pointing into adtrace would blame
    it) go into the report, each message once; any other, the user's code's, is warned
    again once per line, as if adtrace had not caught it: its text may hold addresses or paths."""
    own, reference, seen = set(), set(), set()
    for w in caught:
        filename = str(w.filename)
        if filename.startswith(_AUTOGRAD_DIR):
            own.add(str(w.message))
        elif filename.startswith(_REFERENCE_DIR):
            reference.add(str(w.message))
        elif (filename, w.lineno, str(w.message)) not in seen:  # the reference engine reran the same line
            seen.add((filename, w.lineno, str(w.message)))
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return sorted(own), sorted(reference - own)


def _reverse(call, f, x, capture, rtol, relative_to, limit):
    # sites: the report's lines of the user's code
    with record(capture=capture, sites=True, relative_to=relative_to) as rec:
        vjp, output = make_vjp(f)(x)
        seed = vspace(output).ones()
        call.gradient = vjp(seed)
    del vjp  # it holds autograd's whole graph: freed before the reference engine builds its own
    call.output, call.recording = output, rec
    too_large = _above(limit, rec)
    call.reference, call.reference_note = (None, too_large) if too_large else _reference_run(f, x, seed, output, rec)
    if call.reference is None and not too_large:  # a run that stopped leaves its graph held by its own cycles
        gc.collect(0)  # (collected young: what this call made; a finished run frees it)
    query = user_query(rec)  # not a pass run during the forward computation or inside a VJP rule
    if query is not None and too_large:  # (the order checked alone: the reference's order is not there)
        end = rec.query_events(query)[0].end
        call.checks.append(order_valid(rec.visit_order(query), rec.graph(end)))
    if query is not None and call.reference is not None:
        end = rec.query_events(query)[0].end
        call.reference = relabel(call.reference, rec, rec.nodes[end].level, query)
        if capture != "structure":  # no values recorded: nothing to compare node by node
            call.alignment = align(rec, query, call.reference)
            call.checks.append(engines_agree(call.alignment))
        # (the alignment has a row per label toposort yielded, in order: the visit order, without another walk)
        visited = [row.label for row in call.alignment] if call.alignment else rec.visit_order(query)
        call.checks.append(orders_valid(visited, rec.graph(end), call.reference.order, call.reference.parents))
    call.checks.append(finite_differences(f, x, seed, call.gradient, rtol=rtol))


def _above(limit, recording):
    """Why the reference engine does not run beside ``recording`` (more nodes than ``limit``), else None."""
    nodes = len(recording.nodes)
    if limit is None or nodes <= limit:
        return None
    return (f"reference engine: {nodes:,} nodes, above the limit of {limit:,} "
            f"(--reference-limit {nodes} runs it: it reruns the function, about as long again)")


def _reference_run(f, x, seed, output, recording):
    """The reference engine's run with the same seed, or ``(None, why not)``: its scope is real
    arrays and scalars."""
    # (each node's event from the nodes table: a walk of the nodes, not of every event)
    values = [x, output] + [e.value for e in recording.nodes.values() if isinstance(e, NodeCreated)]
    if any(_is_complex(v) for v in values):
        return None, "reference engine: real numbers only (this call has complex values)"
    try:
        return reference.run_gradient(f, x, seed), None
    except (TypeError, NotImplementedError) as exc:
        return None, str(exc)


def _forward(call, f, x, capture, relative_to, limit):
    tangent_in = vspace(x).ones()
    with record(capture=capture, sites=True, relative_to=relative_to) as rec:
        output, call.tangent = make_jvp(f)(x)(tangent_in)
    call.output, call.forward_recording = output, rec
    too_large = _above(limit, rec)
    if too_large:
        call.reference_note = call.reference_note or too_large
        return
    try:
        call.reference_tangents = reference.run_tangents(f, x, tangent_in)
        # the output's tangent (zeros when the output does not depend on the input: no node to log)
        ref_tangent = call.reference_tangents[-1].tangent if call.reference_tangents else vspace(output).zeros()
        with np.errstate(all="ignore"):
            verdict = agree_arrays(call.tangent, ref_tangent, TANGENT_RTOL)
        call.checks.append(Check("forward mode: reference tangent vs autograd", verdict.passed,
                                 f"output tangents {'agree' if verdict.passed else 'differ'}: {verdict.describe()}"))
    except (TypeError, NotImplementedError) as exc:
        call.reference_note = call.reference_note or str(exc)


def _is_complex(value):
    if type(value) is float or type(value) is np.float64:  # (a scalar program's every node: numpy's test is slow)
        return False
    value = plain(value)
    if isinstance(value, ArraySummary):
        return value.dtype.startswith("complex")
    try:
        return bool(np.iscomplexobj(value))
    except Exception:
        return False


def function_name(f):
    return getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or type(f).__name__

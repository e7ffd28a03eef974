"""Per-node gradient checking: which node's local rule is wrong, at which argument, on which line.

``check(f, *args, argnum=0)`` records one gradient computation of ``f`` (with each node's call
kept), then tests every node's local VJP (and JVP, where autograd has a forward rule) alone
against central differences (``local``), and reads the recording for contributions of the wrong
vector space and for the first non-finite value (``flags``). autograd's ``check_grads`` can only
say that the whole function is wrong; this names the node.
"""

from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np
from autograd import make_vjp
from autograd.core import vspace

from ..compare.arguments import differentiated, unary
from ..compare.checks import Check, rule_suspected, skipped
from ..recording.callsite import relative_to_given
from ..recording.passes import user_query
from ..recording.session import record
from .flags import nonfinite_origin, vspace_flags
from .local import FAIL, PASS, SKIPPED, NodeCheck, check_node

__all__ = ["check", "check_call", "check_if_rule_suspected", "check_recording", "CheckReport", "NodeCheck", "PASS",
           "FAIL", "SKIPPED"]


@dataclass
class CheckReport:
    rows: list  # NodeCheck, in the order the nodes were created
    nonfinite: Optional[NodeCheck] = None
    not_checked: int = 0  # nodes left out by max_nodes / sample
    gradient: Any = None
    recording: Any = None
    notes: list = field(default_factory=list)

    @property
    def failures(self):
        return [r for r in self.rows if r.status == FAIL]

    @property
    def first_failure(self):
        """The first failing node in creation order (the innermost cause in the forward program)."""
        failures = self.failures
        return failures[0] if failures else self.nonfinite

    @property
    def passed(self):
        return self.first_failure is None


def check(f, *args, argnum=0, max_nodes=None, sample=None, relative_to=None, rtol=None, root=None):
    """Record ``f``'s VJP with a seed of ones with respect to argument ``argnum`` and check it node
    by node. ``max_nodes`` / ``sample`` bound the cost on large graphs (the first N nodes, or a
    fixed pseudo-random sample of N); ``rtol`` replaces the relative tolerance the dtype sets,
    for rules approximate by design (``fixed_point``'s iterative solve). ``relative_to``: the folder
    the user's lines are named relative to (``root=``, its former name, warns)."""
    relative_to = relative_to_given(relative_to, root)
    x = differentiated(args, argnum)
    with np.errstate(all="ignore"), record(capture="full", calls=True, relative_to=relative_to) as rec:
        vjp, ans = make_vjp(unary(f, args, argnum))(x)
        gradient = vjp(vspace(ans).ones())
    report = check_recording(rec, max_nodes=max_nodes, sample=sample, rtol=rtol)
    report.gradient = gradient
    return report


def check_call(call, f, relative_to=None, rtol=None):
    """Add to a ``TracedCall`` of ``f`` the per-node checks at its point: its ``node_checks`` (a
    report's "Checks per node") and one check in its summary."""
    report = call.node_checks = check(f, *call.args, argnum=call.argnum, relative_to=relative_to, rtol=rtol)
    first, tested = report.first_failure, {r.node for r in report.rows if r.status != SKIPPED}
    if first is not None:
        call.checks.append(Check("per-node local rules", False, f"first failing node: {first.node}"))
    elif not tested:  # nothing checked is not a pass
        call.checks.append(skipped("per-node local rules", "no node could be tested (see Checks per node)"))
    else:
        nodes = "1 node" if len(tested) == 1 else f"{len(tested)} nodes"
        call.checks.append(Check("per-node local rules", True, f"{nodes} tested, all pass"))
    return call


SUSPECT_LIMIT = 2000  # nodes: above it, the report names the command instead of checking each node alone


def check_if_rule_suspected(call, f, relative_to=None, rtol=None, limit=SUSPECT_LIMIT):
    """``check_call`` when finite differences fail and the reference engine agrees with autograd
    (``compare.checks.rule_suspected``: only a node checked alone can be named), on a graph of at most
    ``limit`` nodes; the call unchanged otherwise."""
    recording = call.recording
    if call.node_checks is not None or not rule_suspected(call.checks) or recording is None:
        return call
    if len(recording.nodes) > limit:
        return call
    return check_call(call, f, relative_to=relative_to, rtol=rtol)


def check_recording(rec, max_nodes=None, sample=None, rtol=None):
    """Check the nodes of a ``record(capture="full", calls=True)`` recording."""
    labels = [label for label in rec.calls if label in rec.nodes]
    chosen = _choose(labels, max_nodes, sample)
    rows = []
    for index, label in enumerate(labels):
        if label in chosen:
            with np.errstate(all="ignore"):
                rows += check_node(label, rec.calls[label], rec.nodes[label].value, index, rtol)
    query = user_query(rec)
    if query is not None:
        rows += vspace_flags(rec, query, rec.calls)
    order = {label: i for i, label in enumerate(labels)}
    rows.sort(key=lambda r: (order.get(r.node, -1), r.argnum if r.argnum is not None else -1))
    nonfinite = nonfinite_origin(rec, query, rec.calls) if query is not None else None
    return CheckReport(rows, nonfinite, len(labels) - len(chosen), recording=rec)


def _choose(labels, max_nodes, sample):
    chosen = list(labels)
    if sample is not None and sample < len(chosen):
        picks = np.random.default_rng(0).choice(len(chosen), size=sample, replace=False)
        chosen = [chosen[i] for i in sorted(picks)]
    if max_nodes is not None:
        chosen = chosen[:max_nodes]
    return set(chosen)

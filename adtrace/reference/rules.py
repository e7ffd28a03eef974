"""The reference engine's table of local rules, and borrowing from autograd's.

A local rule answers, for one node ``v_i = fun(..., v_k, ...)``:

* reverse mode (VJP): given the adjoint ``v_i_bar``, the partial adjoint
  ``v_k_to_i_bar = v_i_bar * dv_i/dv_k`` for input position k;
* forward mode (JVP): given the tangent ``v_k_dot`` of an input, its share
  ``dv_i/dv_k * v_k_dot`` of the tangent ``v_i_dot``.

Rules are written in autograd's style (a registry dict right beside the function
that fills it; a VJP maker is staged, ``maker(ans, *args) -> (lambda g: ...)``) and
the engine's own rules live in ``vjp_rules.py`` / ``jvp_rules.py``. A primitive the
engine has no rule for *borrows* autograd's registered rule
(``autograd.core.primitive_vjps`` / ``primitive_jvps``), and each visited node is
tagged ``"own"`` or ``"borrowed"`` so a run can say how much is really its own.
"""

from contextlib import contextmanager
from dataclasses import dataclass, field

import autograd.core as autograd_core
from autograd.core import SparseObject

from ..recording.events import REV
from ..recording.labels import primitive_name

OWN, BORROWED, ROOT = "own", "borrowed", "root"

# -------------------- the engine's own rule tables --------------------

primitive_vjps = {}


def defvjp(fun, *vjpmakers, argnums=None):
    """Own VJP rules for ``fun``, one staged maker per argument number."""
    argnums = range(len(vjpmakers)) if argnums is None else argnums
    primitive_vjps[fun] = dict(zip(argnums, vjpmakers))


primitive_jvps = {}


def defjvp(fun, *jvpfuns, argnums=None):
    """Own JVP rules for ``fun``: ``jvp(g, ans, *args, **kwargs)`` per argument number."""
    argnums = range(len(jvpfuns)) if argnums is None else argnums
    primitive_jvps[fun] = dict(zip(argnums, jvpfuns))


def rule_source(fun, own_table, autograd_table, kind):
    """``"own"`` or ``"borrowed"``; a clear error if nobody has a rule for ``fun``."""
    if fun in own_table:
        return OWN
    if fun in autograd_table:
        return BORROWED
    raise NotImplementedError(
        f"reference engine: no {kind} rule for primitive {primitive_name(fun)!r} (own or autograd's)"
    )


def vjp_source(fun):
    return rule_source(fun, primitive_vjps, autograd_core.primitive_vjps, "VJP")


def jvp_source(fun):
    return rule_source(fun, primitive_jvps, autograd_core.primitive_jvps, "JVP")


def own_rules_for(table, node, kind):
    rules = table[node.fun]
    if len(node.argnums) == 1 and node.argnums[0] in rules:  # (most nodes)
        return rules
    missing = [a for a in node.argnums if a not in rules]
    if missing:
        raise NotImplementedError(
            f"reference engine: no {kind} rule for primitive {primitive_name(node.fun)!r} "
            f"wrt argnum {missing[0]}"
        )
    return rules


# -------------------- applying a rule to one node --------------------


def partial_adjoints(node, v_i_bar):
    """``v_k_to_i_bar`` for every input position k of node i, in position order."""
    if vjp_source(node.fun) == OWN:
        rules = own_rules_for(primitive_vjps, node, "VJP")
        value, args, kwargs = node.value, node.args, node.kwargs
        return tuple([rules[argnum](value, *args, **kwargs)(v_i_bar) for argnum in node.argnums])
    vjp = autograd_core.primitive_vjps[node.fun](node.argnums, node.value, node.args, node.kwargs)
    return tuple([densify(g) for g in vjp(v_i_bar)])  # may be a generator: materialise it


def tangent_shares(node, input_tangents):
    """``dv_i/dv_k * v_k_dot`` for every input position k (own rules), or the whole
    tangent ``v_i_dot`` as a 1-tuple (autograd's rules already sum the shares)."""
    if jvp_source(node.fun) == OWN:
        rules = own_rules_for(primitive_jvps, node, "JVP")
        return tuple(
            rules[argnum](g, node.value, *node.args, **node.kwargs)
            for argnum, g in zip(node.argnums, input_tangents)
        )
    jvp = autograd_core.primitive_jvps[node.fun]
    return (densify(jvp(node.argnums, list(input_tangents), node.value, node.args, node.kwargs)),)


def densify(g):
    """autograd's rules for indexing return a sparse ``SparseObject``; make it an array."""
    if type(g) is float:  # (a scalar program's every partial adjoint)
        return g
    if isinstance(g, SparseObject):
        return g.mut_add(g.vs.zeros())
    return g


# -------------------- counting own and borrowed nodes --------------------


@dataclass
class RuleTally:
    """How many visited nodes used an own or a borrowed rule, and which own rules ran."""

    own: int = 0
    borrowed: int = 0
    own_vjps_used: set = field(default_factory=set)
    own_jvps_used: set = field(default_factory=set)

    @property
    def borrowed_share(self):
        total = self.own + self.borrowed
        return self.borrowed / total if total else 0.0


ACTIVE_TALLIES = []  # the tallies counting now (tally_rules); read by the engines to skip note_visit when empty


@contextmanager
def tally_rules():
    """Count own/borrowed nodes over every reference run inside the ``with`` block."""
    tally = RuleTally()
    ACTIVE_TALLIES.append(tally)
    try:
        yield tally
    finally:
        ACTIVE_TALLIES.remove(tally)


def note_visit(fun, source, mode):
    """Called by the engines once per visited (non-root) node; ``mode``: ``REV`` or ``FWD`` (``events``)."""
    for tally in ACTIVE_TALLIES:
        if source == OWN:
            tally.own += 1
            (tally.own_vjps_used if mode == REV else tally.own_jvps_used).add(fun)
        else:
            tally.borrowed += 1

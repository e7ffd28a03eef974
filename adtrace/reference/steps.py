"""What a reverse-mode run leaves behind: one ``Step`` per visited node.

A step is the lecture's loop body for one node ``i``, as data::

    v_i_bar = sum(node_to_grad[i])            partial_adjoints, v_i_bar
    for k in inputs(i):
        v_k_to_i_bar = v_i_bar * dv_i/dv_k     contributions[k].value
        node_to_grad[k].append(v_k_to_i_bar)   contributions[k].parent

Steps hold labels and raw values (``autograd.tracer.getval`` of any box of an outer
trace), never nodes or boxes, so they can be stored, compared and printed after the
run. The reporter aligns them with autograd's recorded events by ``label``.
"""

from dataclasses import dataclass
from typing import Any, Mapping, Optional

from .rules import BORROWED, OWN


# (slots: a scalar program's run keeps a Step and a Contribution per node, a million of each at 1M nodes)
@dataclass(frozen=True, slots=True)
class Contribution:
    """One partial adjoint ``v_k_to_i_bar`` appended to ``node_to_grad[k]``."""

    position: int  # k: the input position of node i (index into its parents)
    argnum: int  # which argument of the primitive that input is
    parent: str  # label of the input node v_k
    value: Any  # v_k_to_i_bar


@dataclass(frozen=True, slots=True)
class Step:
    """The visit of node ``label``: its partial adjoints, their sum, what it passed on."""

    label: str
    primitive: str  # the primitive's name ("root" for the input)
    rule: str  # "own", "borrowed" or "root"
    partial_adjoints: tuple  # node_to_grad[i], in the order the contributions arrived
    v_i_bar: Any  # sum(node_to_grad[i])
    contributions: tuple  # of Contribution, one per input position
    borrowed: Optional[str] = None  # why the rule was not applied, where the run knows it (else the op has none)


def _maker(cls):
    """``cls(*fields)`` for a frozen slotted dataclass, made as its ``__init__`` would (every field given), each
    slot set through its descriptor: a frozen class's ``__init__`` sets each field with ``object.__setattr__``,
    twice the time, and a run makes a ``Step`` and a ``Contribution`` per node (a million of each at 1M nodes)."""
    new, setters = object.__new__, tuple(cls.__dict__[f].__set__ for f in cls.__slots__)
    if len(setters) == 4:
        a, b, c, d = setters

        def make(w, x, y, z):
            made = new(cls)
            a(made, w)
            b(made, x)
            c(made, y)
            d(made, z)
            return made
    else:
        a, b, c, d, e, f, g = setters

        def make(t, u, v, w, x, y, z=None):
            made = new(cls)
            a(made, t)
            b(made, u)
            c(made, v)
            d(made, w)
            e(made, x)
            f(made, y)
            g(made, z)
            return made
    return make


make_contribution = _maker(Contribution)  # Contribution(position, argnum, parent, value), faster
make_step = _maker(Step)  # Step(label, primitive, rule, partial_adjoints, v_i_bar, contributions[, borrowed]), faster


@dataclass(frozen=True)
class GradientRun:
    """One reverse-mode query over one traced graph, for inspection and alignment."""

    value: Any  # the output's value
    seed: Any  # node_to_grad = {out: [seed]}
    adjoint: Any  # v_input_bar, the result
    order: tuple  # labels in visit order (reverse_topo_order)
    steps: tuple  # of Step, in visit order
    parents: Mapping  # label -> tuple of parent labels by argument position
    labels: tuple  # every traced node's label, in creation order

    @property
    def own(self):
        return sum(step.rule == OWN for step in self.steps)

    @property
    def borrowed(self):
        return sum(step.rule == BORROWED for step in self.steps)

"""adtrace's reference engine: the lecture's reverse-mode algorithm and forward mode,
reimplemented over a graph traced with autograd's tracer, and checked against
autograd.

It shares autograd's *tracer* (boxes, primitives, ``trace``) but none of its
differentiation machinery (``VJPNode``, ``JVPNode``, ``make_vjp``,
``backward_pass``): it keeps its own graph of primitive calls (``graph``), its own
order (``order``), its own table of local rules (``rules``, ``vjp_rules``,
``jvp_rules``, ``matrix_rules``) and the textbook loops (``reverse``, ``forward``).

Worked example, ``f(x) = x * x`` at ``x = 3.0``:

1. ``trace_graph`` runs f once with a boxed input. The tracer creates one node per
   primitive call: ``v0_root`` (the input) and ``v1_multiply`` with inputs
   ``(v0_root, v0_root)``: the root sits in *both* argument positions.
2. ``gradient`` seeds ``node_to_grad = {v1_multiply: [1.0]}`` and visits
   ``reverse_topo_order`` = ``[v1_multiply, v0_root]``. At ``v1_multiply`` the rule
   for multiply gives one partial adjoint per position, ``1.0 * 3.0`` and
   ``3.0 * 1.0``, both appended to ``node_to_grad[v0_root]``.
3. At ``v0_root`` the partial adjoints ``[3.0, 3.0]`` are summed: 6.0 = f'(3).

    >>> import adtrace.reference as ref
    >>> float(ref.grad(lambda x: x * x)(3.0))
    6.0
    >>> [s.label for s in ref.run_gradient(lambda x: x * x, 3.0).steps]
    ['v1_multiply', 'v0_root']

Because the local rules are written with ``autograd.numpy``, the adjoint
computation of an inner ``grad`` is itself traced by an outer trace ("reverse
mode AD by extending the computational graph"), so ``grad(grad(f))`` works.
Primitives without an own rule borrow autograd's; steps say which (``rule``).
"""

import warnings

from . import jvp_rules, matrix_rules, vjp_rules  # noqa: F401  (fill the rule tables)
from .forward import TangentStep, make_jvp, run_tangents, tangents
from .graph import Graph, ReferenceNode, parent_labels, trace_graph
from .jacobian import hessian, jacobian, jacobian_forward
from .order import is_reverse_topological, reverse_topo_order, topo_order
from .reverse import elementwise_grad, grad, gradient, make_vjp, run_gradient
from .rules import RuleTally, defjvp, defvjp, primitive_jvps, primitive_vjps, tally_rules
from .steps import Contribution, GradientRun, Step


def capture(fun, x):
    """The former name of ``trace_graph`` (before issue 25: "capture" names only the capture level)."""
    warnings.warn("adtrace.reference.capture is now trace_graph", DeprecationWarning, stacklevel=2)
    return trace_graph(fun, x)


__all__ = [
    "Contribution",
    "Graph",
    "GradientRun",
    "ReferenceNode",
    "RuleTally",
    "Step",
    "TangentStep",
    "trace_graph",
    "defjvp",
    "defvjp",
    "elementwise_grad",
    "grad",
    "gradient",
    "hessian",
    "is_reverse_topological",
    "jacobian",
    "jacobian_forward",
    "make_jvp",
    "make_vjp",
    "parent_labels",
    "primitive_jvps",
    "primitive_vjps",
    "reverse_topo_order",
    "run_gradient",
    "run_tangents",
    "tally_rules",
    "tangents",
    "topo_order",
]

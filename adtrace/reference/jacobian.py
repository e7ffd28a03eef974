"""Jacobians from basis vectors: reverse mode gives rows, forward mode gives columns.

For ``f: R^n -> R^m`` the Jacobian ``J`` is ``m x n``. One reverse pass seeded with
the basis vector ``e_r`` of the output space returns ``e_r^T J``, row r; one forward
pass with the basis vector ``e_c`` of the input space returns ``J e_c``, column c.
Both engines run over a single traced graph: the tracing happens once, the passes
(``gradient`` or ``tangents``) as many times as there are rows or columns, each with
its own ``node_to_grad`` / tangent table. Example, ``f(x) = [x0 * x1, sin(x2)]``::

    rows    (reverse, 2 passes):  [x1, x0, 0], [0, 0, cos(x2)]
    columns (forward, 3 passes):  [x1, 0], [x0, 0], [0, cos(x2)]

Which to use is a question of cost: reverse mode needs one pass per output entry,
forward mode one per input entry, so a wide-and-short Jacobian (few outputs, as a
loss) favours reverse mode and a tall-and-thin one favours forward mode. As in
autograd, the result has shape ``shape(f(x)) + shape(x)``, and ``hessian`` is the
Jacobian of the gradient (reverse over reverse).
"""

import autograd.numpy as anp
from autograd.core import vspace
from autograd.wrap_util import unary_to_nary

from .forward import unary_make_jvp
from .reverse import grad, unary_make_vjp


@unary_to_nary
def jacobian(fun, x):
    """Like ``autograd.jacobian``: stacked rows ``e_r^T J``, one reverse pass each."""
    vjp, ans = unary_make_vjp(fun, x)
    out_space = vspace(ans)
    rows = [vjp(e_r) for e_r in out_space.standard_basis()]
    return anp.reshape(anp.stack(rows), out_space.shape + vspace(x).shape)


@unary_to_nary
def jacobian_forward(fun, x):
    """The same Jacobian from columns ``J e_c``, one forward pass each."""
    jvp = unary_make_jvp(fun, x)
    in_space = vspace(x)
    columns = [jvp(e_c)[1] for e_c in in_space.standard_basis()]
    out_shape = anp.shape(jvp(in_space.zeros())[0])
    if not columns:
        return anp.zeros(out_shape + in_space.shape)
    return anp.reshape(anp.stack(columns, axis=-1), out_shape + in_space.shape)


def hessian(fun, argnum=0):
    """Like ``autograd.hessian``: ``jacobian(grad(fun))``."""
    return jacobian(grad(fun, argnum), argnum)

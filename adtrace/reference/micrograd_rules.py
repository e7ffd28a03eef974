"""The reference engine's local rules for micrograd's operations, keyed by the op as the class writes it.

A rule gives the local derivatives ``dv_i/dv_k`` of one node from its output's value and its
inputs' values, one per input position; the lecture's partial adjoint is ``v_i_bar * dv_i/dv_k``.
micrograd's reversed forms (``__radd__``, ``__rmul__``, ``__rsub__``, ``__rtruediv__``, ``__neg__``,
``__sub__``, ``__truediv__``) build their nodes from ``+``, ``*`` and ``**k``, so these rules cover
them; a learner's class that writes ``-`` or ``/`` nodes of its own is covered too. For
``x*x`` at 3: ``'*'`` gives ``(3, 3)`` for the inputs ``(x, x)``.
"""

op_derivatives = {}


def defderivatives(op, rule):
    """``rule(out, *inputs) -> (dv_i/dv_k, ...)`` for nodes whose ``_op`` is ``op``."""
    op_derivatives[op] = rule


defderivatives("+", lambda out, a, b: (1.0, 1.0))
defderivatives("-", lambda out, a, b: (1.0, -1.0))
defderivatives("*", lambda out, a, b: (b, a))
defderivatives("/", lambda out, a, b: (1.0 / b, -a / b ** 2))
defderivatives("ReLU", lambda out, a: ((out > 0) * 1.0,))
defderivatives("relu", op_derivatives["ReLU"])
defderivatives("tanh", lambda out, a: (1 - out ** 2,))
defderivatives("exp", lambda out, a: (out,))
defderivatives("log", lambda out, a: (1.0 / a,))


def power(op):
    """The exponent of a ``**k`` op (``'**2'`` -> 2, ``'**-1'`` -> -1), else None."""
    if not isinstance(op, str) or not op.startswith("**"):
        return None
    try:
        k = float(op[2:])
    except ValueError:
        return None
    return int(k) if k.is_integer() else k


def rule_for(op, inputs):
    """The rule of ``op`` for this many inputs, or None when the reference engine has none."""
    k = power(op)
    if k is not None:
        return (lambda out, a: (k * a ** (k - 1),)) if inputs == 1 else None
    rule = op_derivatives.get(op)
    arity = {"+": 2, "-": 2, "*": 2, "/": 2}.get(op, 1)
    return rule if rule is not None and inputs == arity else None


KNOWN_OPS = "+, -, *, /, **k, ReLU, tanh, exp, log"

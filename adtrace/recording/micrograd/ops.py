"""micrograd's operations, keyed by the op as the class writes it (``_op``): what each computes and
its local derivatives, for the reference engine's rules (``reference.recorded``) and the checker's
forward (``checker.engine_rules``). Both reach it through the ``EngineCode`` a recording holds (``ops``).

A rule gives the local derivatives ``dv_i/dv_k`` of one node from its output's value and its
inputs' values, one per input position; the lecture's partial adjoint is ``v_i_bar * dv_i/dv_k``.
micrograd's reversed forms (``__radd__``, ``__rmul__``, ``__rsub__``, ``__rtruediv__``, ``__neg__``,
``__sub__``, ``__truediv__``) build their nodes from ``+``, ``*`` and ``**k``, so these rules cover
them; a learner's class that writes ``-`` or ``/`` nodes of its own is covered too. For
``x*x`` at 3: ``'*'`` gives ``(3, 3)`` for the inputs ``(x, x)``.
"""

import numpy as np

_BINARY = ("+", "-", "*", "/")
_OPS = {  # op -> (forward(*inputs), derivatives(out, *inputs))
    "+": (lambda a, b: a + b, lambda out, a, b: (1.0, 1.0)),
    "-": (lambda a, b: a - b, lambda out, a, b: (1.0, -1.0)),
    "*": (lambda a, b: a * b, lambda out, a, b: (b, a)),
    "/": (lambda a, b: a / b, lambda out, a, b: (1.0 / b, -a / b ** 2)),
    "ReLU": (lambda a: np.maximum(a, 0.0), lambda out, a: ((out > 0) * 1.0,)),
    "tanh": (np.tanh, lambda out, a: (1 - out ** 2,)),
    "exp": (np.exp, lambda out, a: (out,)),
    "log": (np.log, lambda out, a: (1.0 / a,)),
}
_OPS["relu"] = _OPS["ReLU"]


def power(op):
    """The exponent of a ``**k`` op (``'**2'`` -> 2, ``'**-1'`` -> -1), else None."""
    if not isinstance(op, str) or not op.startswith("**"):
        return None
    try:
        k = float(op[2:])
    except ValueError:
        return None
    return int(k) if k.is_integer() else k


def _pair(op, inputs):
    """``(forward, derivatives)`` of ``op`` for this many inputs, or None when adtrace has none."""
    k = power(op)
    if k is not None:
        return ((lambda a: a ** k), (lambda out, a: (k * a ** (k - 1),))) if inputs == 1 else None
    pair = _OPS.get(op)
    return pair if pair is not None and inputs == (2 if op in _BINARY else 1) else None


class Ops:
    known = "+, -, *, /, **k, ReLU, tanh, exp, log"  # (as a message names them)

    def forward(self, op, inputs):
        """``forward(*inputs)`` of ``op`` for this many inputs, or None."""
        pair = _pair(op, inputs)
        return None if pair is None else pair[0]

    def derivatives(self, op, inputs):
        """``rule(out, *inputs) -> (dv_i/dv_k, ...)`` of ``op`` for this many inputs, or None."""
        pair = _pair(op, inputs)
        return None if pair is None else pair[1]


OPS = Ops()

"""micrograd's operations, keyed by the op as the class writes it (``_op``): what each computes and
its local derivatives, for the reference engine's rules (``reference.recorded``) and the checker's
forward (``checker.engine_rules``). Both reach it through the ``EngineCode`` a recording holds (``ops``).

A rule gives the local derivatives ``dv_i/dv_k`` of one node from its output's value and its
inputs' values, one per input position; the lecture's partial adjoint is ``v_i_bar * dv_i/dv_k``.
micrograd's reversed forms (``__radd__``, ``__rmul__``, ``__rsub__``, ``__rtruediv__``, ``__neg__``,
``__sub__``, ``__truediv__``) build their nodes from ``+``, ``*`` and ``**k``, so these rules cover
them; a learner's class that writes ``-`` or ``/`` nodes of its own is covered too. For
``x*x`` at 3: ``'*'`` gives ``(3, 3)`` for the inputs ``(x, x)``.

A class of numpy arrays (a learner's tensor engine) also has ``'@'`` and ``'sum'`` (all elements),
which are not elementwise: their rules are partial adjoints, ``vjp(g, out, *inputs)``. An
elementwise op's partial adjoint ``g * dv_i/dv_k`` is summed back to the input's shape where numpy
broadcast it (``unbroadcast``); a number's is the product as it is.
"""

import numpy as np

_BINARY = ("+", "-", "*", "/")
_COMMUTATIVE = ("+", "*")  # (their rules are symmetric: the order of a set's two children does not matter)
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


def _matmul_vjp(g, out, a, b):
    """``(g @ b.T, a.T @ g)``, a 1-D side taken as a row (``a``) or a column (``b``), as numpy's ``@`` does."""
    a2, b2 = np.atleast_2d(a), (np.asarray(b)[:, None] if np.ndim(b) == 1 else np.asarray(b))
    g2 = np.reshape(g, np.shape(a2 @ b2))
    return (np.reshape(unbroadcast(g2 @ np.swapaxes(b2, -1, -2), a2.shape), np.shape(a)),
            np.reshape(unbroadcast(np.swapaxes(a2, -1, -2) @ g2, b2.shape), np.shape(b)))


_STRUCTURAL = {  # op -> (inputs, forward(*inputs), vjp(g, out, *inputs))
    "@": (2, lambda a, b: a @ b, _matmul_vjp),
    "sum": (1, np.sum, lambda g, out, a: (g * np.ones_like(a),)),
}


def unbroadcast(partial, shape):
    """``partial`` summed over the axes numpy broadcast an input of ``shape`` along (numpy's rule:
    leading axes added, axes of length 1 stretched); ``partial`` itself when the shapes agree."""
    if np.shape(partial) == tuple(shape):
        return partial
    partial = np.sum(partial, axis=tuple(range(np.ndim(partial) - len(shape))))
    stretched = tuple(axis for axis, n in enumerate(shape) if n == 1 and np.shape(partial)[axis] != 1)
    return np.sum(partial, axis=stretched, keepdims=True) if stretched else partial


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


def _reproduces(forward, inputs, data):
    try:
        with np.errstate(all="ignore"):
            value = forward(*inputs)
        return np.shape(value) == np.shape(data) and bool(np.all(value == data))
    except Exception:  # (data of a kind the forward cannot take: the order is not known, the user's run goes on)
        return False


def _elementwise_vjp(derivatives):
    def vjp(g, out, *inputs):
        return tuple(unbroadcast(g * d, np.shape(a)) for d, a in zip(derivatives(out, *inputs), inputs))
    return vjp


class Ops:
    known = "+, -, *, /, **k, ReLU, tanh, exp, log, @, sum"  # (as a message names them)

    def forward(self, op, inputs):
        """``forward(*inputs)`` of ``op`` for this many inputs, or None."""
        structural = _STRUCTURAL.get(op) if isinstance(op, str) else None
        if structural is not None:
            return structural[1] if inputs == structural[0] else None
        pair = _pair(op, inputs)
        return None if pair is None else pair[0]

    def fits(self, op, out, inputs):
        """Whether ``op``'s forward at ``inputs`` has the shape of the recorded ``out`` (a class's
        ``sum(axis=1)`` written ``'sum'`` is not this ``sum``: its rule would not apply). Numbers fit."""
        if all(np.ndim(v) == 0 for v in (out, *inputs)):
            return True
        try:
            with np.errstate(all="ignore"):
                return np.shape(self.forward(op, len(inputs))(*inputs)) == getattr(out, "shape", np.shape(out))
        except (TypeError, ValueError):  # (operands numpy cannot broadcast or multiply)
            return False

    def vjp(self, op, inputs):
        """``rule(g, out, *inputs) -> (partial adjoint, ...)`` of ``op`` for this many inputs (one per
        input, in its shape), or None."""
        structural = _STRUCTURAL.get(op) if isinstance(op, str) else None
        if structural is not None:
            return structural[2] if inputs == structural[0] else None
        pair = _pair(op, inputs)
        return None if pair is None else _elementwise_vjp(pair[1])

    def order(self, op, data, a, b):
        """The argument order of a binary value whose two children came unordered (a set): ``(a, b)``
        or ``(b, a)``, whichever ``op``'s forward reproduces ``data`` from (as given for ``+`` and ``*``,
        whose order does not matter); None when the op has no forward here, or both or neither do."""
        if op in _COMMUTATIVE:
            return a, b
        forward = self.forward(op, 2)
        if forward is None:
            return None
        matches = [pair for pair in ((a, b), (b, a)) if _reproduces(forward, pair, data)]
        return matches[0] if len(matches) == 1 else None

    def derivatives(self, op, inputs):
        """``rule(out, *inputs) -> (dv_i/dv_k, ...)`` of ``op`` for this many inputs, or None."""
        pair = _pair(op, inputs)
        return None if pair is None else pair[1]


OPS = Ops()

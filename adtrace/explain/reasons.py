"""Which primitives act element by element, and the reason word for a zero or non-finite local
derivative of each (autograd's primitive names, as ``NodeCreated.primitive`` spells them)."""

import numpy as np

# element by element (with broadcasting): element m of the output reads element m of each argument
ELEMENTWISE = frozenset("""
    add subtract multiply divide true_divide negative power square sqrt exp exp2 expm1 log log2 log10 log1p
    sin cos tan arcsin arccos arctan sinh cosh tanh arcsinh arccosh arctanh reciprocal abs absolute fabs
    maximum minimum fmax fmin where clip floor ceil round around rint sign fix trunc logaddexp logaddexp2
    sinc real imag conj conjugate deg2rad rad2deg degrees radians cbrt""".split())

# a zero local derivative at a point (the cut's reason)
ZERO_REASONS = {
    **dict.fromkeys(("maximum", "minimum", "fmax", "fmin"), "relu-off"),
    "where": "where-unselected-branch",
    "clip": "clip-saturated",
}
ZERO_DEFAULT = "zero-derivative"  # floor, round, sign (0 everywhere), abs at 0, a product with 0, ...


def zero_reason(primitive):
    return ZERO_REASONS.get(primitive, ZERO_DEFAULT)


LOGS = frozenset({"log", "log2", "log10", "log1p"})
DIVISIONS = frozenset({"divide", "true_divide", "reciprocal"})
NORMS = frozenset({"norm", "linalg.norm"})


def nonfinite_reason(primitive, argnum, inputs):
    """Why a VJP (or a forward value) of ``primitive`` is not finite, from its inputs at that element
    (``inputs``: argnum -> number or None when not kept)."""
    x = inputs.get(argnum)
    if primitive in LOGS and _at(x, -1.0 if primitive == "log1p" else 0.0):
        return "log-of-zero"
    if primitive == "sqrt" and _at(x, 0.0):
        return "sqrt-at-zero"
    if primitive in DIVISIONS and _at(inputs.get(0 if primitive == "reciprocal" else 1), 0.0):
        return "division-by-zero"
    if primitive == "power" and _at(inputs.get(0), 0.0):
        return "power-at-zero"
    if primitive.endswith("norm"):
        return "norm-at-zero"
    if any(v is not None and not np.all(np.isfinite(v)) for v in inputs.values()):
        return "nonfinite-input"
    return "overflow"


def _at(value, point):
    return value is not None and np.size(value) == 1 and np.asarray(value).ravel()[0] == point

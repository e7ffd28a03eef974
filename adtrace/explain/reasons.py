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


SELECTIONS = frozenset({"maximum", "minimum", "fmax", "fmin"})  # the larger (smaller) of two, element by element
REDUCTIONS_SELECTING = frozenset({"max", "min", "amax", "amin", "nanmax", "nanmin"})  # np.max: the largest only


def zero_reason(primitive):
    return ZERO_REASONS.get(primitive, ZERO_DEFAULT)


def selection_reason(traced, other):
    """A ``maximum``/``minimum`` that did not select this argument: ``relu-off`` against the constant 0,
    ``saturated`` against another constant (``np.minimum(x, 1.0)`` at its cap), ``not-selected`` when
    the other argument is a traced value too (``np.maximum(a, b)``). ``other``: its value, the output's there."""
    if traced:
        return "not-selected"
    return "relu-off" if other == 0 else "saturated"


LOGS = frozenset({"log", "log2", "log10", "log1p"})
DIVISIONS = frozenset({"divide", "true_divide", "reciprocal"})
SUMS = frozenset({"add", "subtract", "sum", "logaddexp"})
# finite inputs can make a value too large to hold, with a finite derivative (an overflow, not a pole)
OVERFLOWING = frozenset("""
    add subtract multiply divide true_divide reciprocal power square exp exp2 expm1 sinh cosh ldexp hypot
    sum prod cumsum cumprod dot matmul tensordot einsum inner outer""".split())


def nonfinite_reason(primitive, argnum, inputs, result=None, derivative=None, output=None):
    """Why a VJP (or a forward value) of ``primitive`` is not finite, from its inputs at that element
    (``inputs``: argnum -> number or None when not kept), the non-finite ``result`` it made there and,
    for a VJP, the local ``derivative`` and the forward ``output`` there when known. A domain error
    (``sqrt-of-negative``, ``log-of-negative``, ``power-of-negative``, ``domain-error``: NaN, "invalid")
    is told from a boundary (``log-of-zero``, ``sqrt-at-zero``, ``infinite-derivative``: an infinite
    value or derivative at a finite point) and from an ``overflow`` (a value, or a finite derivative's
    product, too large to hold), and ``unknown`` when none is established (an op adtrace does not know)."""
    numbers = {a: _number(v) for a, v in inputs.items()}
    if any(v is not None and not np.isfinite(v) for v in numbers.values()):
        return _of_nonfinite(primitive, numbers, result)
    x = numbers.get(argnum)
    if primitive in LOGS:
        edge = -1.0 if primitive == "log1p" else 0.0
        if x is not None and x <= edge:
            return "log-of-zero" if x == edge else "log-of-negative"
    if primitive == "sqrt" and x is not None and x <= 0:
        return "sqrt-at-zero" if x == 0 else "sqrt-of-negative"
    if primitive in DIVISIONS and numbers.get(0 if primitive == "reciprocal" else 1) == 0:
        return "division-by-zero"
    if primitive == "power":
        base, exponent = numbers.get(0), numbers.get(1)
        if base is not None and base < 0 and (exponent is None or exponent != np.round(exponent)):
            return "power-of-negative"
        if base == 0:
            return "power-at-zero"
    if primitive.endswith("norm"):
        return "norm-at-zero"
    for made in (output, derivative):  # an output too large makes its derivative so (exp); else a pole (arcsin at 1)
        if made is not None and np.isnan(made):
            return "domain-error"
    if output is not None and np.isinf(output):
        return "overflow" if primitive in OVERFLOWING else "unknown"
    if derivative is not None and np.isinf(derivative):
        return "infinite-derivative"
    if result is not None and np.isnan(result):
        return "domain-error"
    if derivative is not None and np.isfinite(derivative) and result is not None and np.isinf(result):
        return "overflow"  # a finite derivative times a finite cotangent, too large to hold
    if primitive in OVERFLOWING and (result is None or np.isinf(result)):
        return "overflow"
    return "unknown"  # (an op adtrace does not know, or a cause not established: never a guess)


def _of_nonfinite(primitive, numbers, result):
    """A NaN made of infinities (``inf - inf``, ``0 * inf``, ``inf / inf``), else an input already not finite."""
    if result is not None and np.isnan(result) and not any(v is not None and np.isnan(v) for v in numbers.values()):
        if primitive in SUMS:
            return "inf-minus-inf"
        if primitive == "multiply":
            return "zero-times-inf"
        if primitive in DIVISIONS:
            return "inf-over-inf"
    return "nonfinite-input"


def _number(value):
    if value is None or np.size(value) != 1:
        return None
    number = np.asarray(value).ravel()[0]
    return float(number.real) if np.iscomplexobj(number) else float(number)

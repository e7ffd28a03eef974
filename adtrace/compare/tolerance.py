"""When an analytic number and a numeric one agree: the one rule every numerical check applies
(central differences of the whole function, each node's local rules, an engine's ops, forward
mode's tangents), at any magnitude.

``agree(analytic, numeric, rtol, scale=0, error=0)`` passes when

    |analytic - numeric| <= rtol * max(|analytic|, |numeric|, rtol * scale) + 10 * error

relative to the larger side, plus ten times the estimated error of the numeric side (central
differences' truncation and rounding). ``scale`` is the size of the terms an inner product sums
(``|u| |J v|``): where they cancel, a rule exact to rounding errs by the rounding of each term, so
the terms enter at ``rtol ** 2`` (1e-10 in double precision, 2.4e-5 in float32), not at ``rtol``:
at ``rtol`` a random ``u`` over n elements (``|u| |J v|`` is about sqrt(n) times ``<u, J v>``) let
a rule 2x wrong in one element of 100,000 pass. There is no absolute floor: a gradient 2x wrong
is caught at 1e-310 as at 1. It is computed on the numbers divided by the largest of them, so nothing overflows to an
infinite tolerance (1e300) or underflows to no tolerance at all (1e-300).

- Exactly equal (both 0 included): a pass, whatever the differences' error. Both 0 where the
  function is flat only to rounding (tanh at 300, a rule of 0 against a true 4e-261) passes too:
  no difference can be seen there.
- The error estimate at least as large as every number compared, or ``rtol ** 2 * scale`` (the
  terms cancelled 1e10-fold in double precision): ``UNRESOLVED``, neither pass nor fail (a right
  rule cannot be told from a wrong one there).
- A number that is not finite: a fail when it is the analytic side (the rule made it),
  ``UNRESOLVED`` when it is the numeric side or an estimate (the differences overflowed, or did not
  converge: an unknown error).
"""

import math
from dataclasses import dataclass

import numpy as np

PASS, FAIL, UNRESOLVED = "pass", "FAIL", "unresolved"


@dataclass(frozen=True)
class Agreement:
    status: str  # PASS | FAIL | UNRESOLVED
    difference: float  # |analytic - numeric|
    tolerance: float  # absolute: a pass is difference <= tolerance
    relative: float  # the difference relative to max(|analytic|, |numeric|) (0 when both are 0)
    relative_tolerance: float  # the tolerance, in the same unit
    rtol: float
    error: float  # the numeric side's estimated error (10x of it is in the tolerance)
    terms: float = 0.0  # the size of the terms an inner product summed, relative to the larger side
    why: str = ""  # what stopped a comparison (UNRESOLVED, or a FAIL with no number to compare)

    @property
    def passed(self):
        return self.status == PASS

    def describe(self):
        """The figures a pass or a fail follows from, as one phrase."""
        if self.why:
            return self.why
        if self.difference == 0:
            return f"equal (rtol {self.rtol:.3g})"
        cancelled = self.rtol * self.terms > 1  # the terms' rounding, not the numbers, sets the tolerance
        terms = f" x {self.rtol:.3g} x the terms' size {self.terms:.1e}" if cancelled else ""
        parts = [f"rtol {self.rtol:.3g}{terms}"]
        if self.error:
            parts.append(f"10 x differences' error {self.error / self.difference * self.relative:.1e}")
        verb = "within" if self.passed else "beyond"
        return (f"relative difference {self.relative:.1e} {verb} tolerance {self.relative_tolerance:.1e} "
                f"({' + '.join(parts)})")


def agree(analytic, numeric, rtol, scale=0.0, error=0.0):
    """Whether ``analytic`` and ``numeric`` (floats) agree; see the module's docstring."""
    analytic, numeric, scale, error = float(analytic), float(numeric), float(scale), float(error)
    if not math.isfinite(analytic):
        return Agreement(FAIL, math.inf, 0.0, math.inf, 0.0, rtol, error, why=f"the analytic side is {analytic}")
    if analytic == numeric:  # exactly: whatever the differences' error (a flat probe's may be unknown)
        return Agreement(PASS, 0.0, 0.0, 0.0, 0.0, rtol, error)
    if not all(math.isfinite(x) for x in (numeric, scale, error)):
        return Agreement(UNRESOLVED, math.nan, math.nan, math.nan, math.nan, rtol, error,
                         why="central differences overflowed or did not converge here: nothing to compare")
    unit = max(abs(analytic), abs(numeric), abs(scale), abs(error))
    if unit == 0 or analytic == numeric:
        return Agreement(PASS, 0.0, 0.0, 0.0, 0.0, rtol, error)
    a, n, s, e = analytic / unit, numeric / unit, abs(scale) / unit, abs(error) / unit
    larger = max(abs(a), abs(n))  # > 0: both 0 are equal
    difference, tolerance = abs(a - n), rtol * max(larger, rtol * s) + 10 * e
    terms, relative, relative_tolerance = s / larger, difference / larger, tolerance / larger
    if 10 * e >= larger:  # not the terms: an error above the numbers would let any of their size pass
        largest = max(abs(analytic), abs(numeric))
        return Agreement(UNRESOLVED, difference * unit, tolerance * unit, relative, relative_tolerance, rtol,
                         error, terms, why=f"below what central differences resolve here: their error {error:.1e} "
                                           f"(x 10) is as large as the numbers compared ({largest:.1e})")
    if rtol * rtol * s >= larger:  # the terms' part alone reaches the numbers: any of their size would pass
        return Agreement(UNRESOLVED, difference * unit, tolerance * unit, relative, relative_tolerance, rtol,
                         error, terms, why=f"the terms summed ({terms:.1e} x the numbers compared) cancel below what "
                                           f"rtol {rtol:.3g} x {rtol:.3g} of them resolves")
    status = PASS if difference <= tolerance else FAIL
    return Agreement(status, difference * unit, tolerance * unit, relative, relative_tolerance, rtol, error, terms)


def agree_arrays(got, want, rtol):
    """Two arrays of one shape, normwise: ``|got - want| <= rtol * max(|got|, |want|)`` (2-norms of
    the arrays divided by their largest magnitude first); NaN against NaN and an infinity against
    itself are equal. No absolute floor: all zeros against all zeros is the only exact 0."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return Agreement(FAIL, math.inf, 0.0, math.inf, 0.0, rtol, 0.0, why=f"shapes {got.shape} and {want.shape}")
    if np.array_equal(got, want, equal_nan=True):
        return Agreement(PASS, 0.0, 0.0, 0.0, 0.0, rtol, 0.0)
    if not (np.all(np.isfinite(got)) and np.all(np.isfinite(want))):
        return Agreement(FAIL, math.inf, 0.0, math.inf, 0.0, rtol, 0.0, why="non-finite values differ")
    unit = max(float(np.max(np.abs(got), initial=0.0)), float(np.max(np.abs(want), initial=0.0)))
    g, w = got / unit, want / unit
    difference, larger = norm(g - w), max(norm(g), norm(w))
    status = PASS if difference <= rtol * larger else FAIL
    return Agreement(status, difference * unit, rtol * larger * unit, difference / larger, rtol, rtol, 0.0)


def norm(x):
    """The 2-norm without overflow or underflow: of ``x`` divided by its largest magnitude first."""
    x = np.abs(np.ravel(np.asarray(x)))
    if x.dtype.kind not in "fc":
        x = x.astype(float)
    largest = float(np.max(x, initial=0.0))
    if largest == 0 or not math.isfinite(largest):
        return largest
    return largest * float(np.linalg.norm(x.astype(np.float64) / largest))


def power_of_two_unit(*arrays):
    """1, or a power of two near the largest magnitude where it is beyond 2 ** +-500: numbers
    divided by it sum without overflow (400 terms of 1e307: exp's VJP at 709 was inf, a FAIL of a
    right rule) or underflow, and the division is exact."""
    largest = max(float(np.max(np.abs(a), initial=0.0)) for a in arrays)
    if not math.isfinite(largest) or largest == 0 or 2.0 ** -500 <= largest <= 2.0 ** 500:
        return 1.0
    return math.ldexp(1.0, math.frexp(largest)[1] - 1)  # at most 2 ** 1023: the numbers divided by it below 2


def rtol_for(dtype):
    """The relative tolerance a rule computed in ``dtype`` is held to: 1e-5 in double precision,
    eps ** (1/3) below it (float32 4.9e-03, float16 9.9e-02): a rule 2x wrong fails in every one."""
    dtype = np.dtype(dtype)
    if dtype.kind not in "fc":
        return DEFAULT_RTOL
    return max(DEFAULT_RTOL, float(np.finfo(dtype).eps) ** (1 / 3))


DEFAULT_RTOL = 1e-5

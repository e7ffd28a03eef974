"""When two kept values are the same, within a relative tolerance: the one rule of a diff.

``same(a, b, rtol)`` compares two values as events keep them (``recording/values.py``): numbers and
arrays element by element against ``rtol`` times the larger side's largest magnitude (the value's own
scale: a gradient 1e-17 where the other side has 0 is the same at rtol 1e-9 if the value's other
elements are near 1), containers leaf by leaf (a tuple and a list alike: a saved recording reads
tuples back as lists), a summary (capture ``auto``) by its statistics, and a value not kept on one
side (capture ``structure``) as not compared, never as the same.
"""

import numpy as np

from ..recording.values import ArraySummary, ContainerSummary, plain, summarize

SAME, DIFFERS, NOT_COMPARED = "same", "differs", "not compared"
RTOL = 1e-9  # the default: two runs of one computation agree exactly; two engines to a few ulps


def same(a, b, rtol=RTOL):
    """``SAME``, ``DIFFERS`` or ``NOT_COMPARED`` (a value missing on one side)."""
    if type(a) in _REALS and type(b) in _REALS:  # (a scalar program's every value: no arrays made)
        if a == b:
            return SAME
        difference = abs(a - b)
        if difference == difference and difference != _INF:
            return SAME if difference <= rtol * max(abs(a), abs(b)) else DIFFERS
    a, b = plain(a), plain(b)
    if a is None or b is None:
        return SAME if a is None and b is None else NOT_COMPARED
    return _same(a, b, rtol)


_REALS = frozenset({float, int, np.float64})
_INF = float("inf")


def _same(a, b, rtol):
    if isinstance(a, (tuple, list)) or isinstance(b, (tuple, list)):
        if not (isinstance(a, (tuple, list)) and isinstance(b, (tuple, list))) or len(a) != len(b):
            return _arrays(a, b, rtol)  # (an array kept as a list of numbers on one side)
        return _worst(_same(x, y, rtol) for x, y in zip(a, b))
    if isinstance(a, dict) or isinstance(b, dict):
        if not (isinstance(a, dict) and isinstance(b, dict)) or set(a) != set(b):
            return DIFFERS
        return _worst(_same(a[k], b[k], rtol) for k in a)
    if isinstance(a, ContainerSummary) or isinstance(b, ContainerSummary):
        return SAME if a == b else NOT_COMPARED
    if isinstance(a, ArraySummary) or isinstance(b, ArraySummary):
        return _summaries(a, b, rtol)
    return _arrays(a, b, rtol)


def _arrays(a, b, rtol):
    try:
        x, y = np.asarray(a), np.asarray(b)
        if x.dtype == object or y.dtype == object:
            return SAME if _equal(a, b) else DIFFERS
        if x.shape != y.shape:
            return DIFFERS
        if np.array_equal(x, y, equal_nan=True):
            return SAME
        with np.errstate(all="ignore"):
            scale = max(_largest(x), _largest(y))
            finite = np.isfinite(x) & np.isfinite(y)
            if not np.array_equal(np.where(finite, 0, x), np.where(finite, 0, y), equal_nan=True):
                return DIFFERS  # an infinity or NaN on one side only
            return SAME if float(np.max(np.abs(x - y)[finite], initial=0.0)) <= rtol * scale else DIFFERS
    except (TypeError, ValueError):
        return SAME if _equal(a, b) else DIFFERS


def _summaries(a, b, rtol):
    a, b = (v if isinstance(v, ArraySummary) else summarize(np.asarray(v)) for v in (a, b))
    if tuple(a.shape) != tuple(b.shape):
        return DIFFERS
    return _arrays([a.min, a.max, a.mean], [b.min, b.max, b.mean], rtol)


def _largest(x):
    a = np.abs(x[np.isfinite(x)]) if x.dtype.kind in "fc" else np.abs(x)
    return float(np.max(a, initial=0.0)) if x.dtype.kind in "fciub" else 0.0


def _worst(statuses):
    statuses = set(statuses)
    return DIFFERS if DIFFERS in statuses else NOT_COMPARED if NOT_COMPARED in statuses else SAME


def _equal(a, b):
    try:
        return bool(np.all(a == b))
    except Exception:
        return False

"""A live self-test of the hook points: does each one see what it must, and change nothing?

Small known computations run once without and once with recording. Each hook point must have
produced its events (a patch at the wrong binding site records nothing), every result must be
bit-identical (a wrapper that alters a value is caught), and the recorded gradient must be the
one returned. ``adtrace doctor`` prints the outcome; the tests break a hook on purpose.
"""

import warnings

import autograd.numpy as anp
import numpy as np
from autograd import grad, make_jvp

from ..recording.autograd.hooks import HOOK_POINTS
from ..recording.session import record

# hook point name -> the event kinds it alone produces (from the hook points table)
EXPECTED = {point.name: point.events for point in HOOK_POINTS}


def _workload():
    x = np.array([0.5, -1.0, 2.0])
    return [
        grad(lambda v: anp.sum(anp.sin(v) * v + v[0] * v[1] + v * v * v))(x),
        grad(lambda s: s * s + anp.tanh(s))(0.7),
        make_jvp(lambda v: v * v + anp.sin(v))(x)(np.ones(3)),
    ]


def run():
    """``[(check, passed, detail)]``: one row per hook point, then identity and consistency."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = _workload()
        with record(capture="full") as rec:
            recorded = _workload()
    counts = {kind: len(rec.of_kind(kind)) for expected in EXPECTED.values() for kind in expected}
    rows = [(name, all(counts[k] for k in expected), "events: " + ", ".join(f"{k} x{counts[k]}" for k in expected))
            for name, expected in EXPECTED.items()]
    same = all(_bits(a) == _bits(b) for a, b in zip(plain, recorded))
    rows.append(("results bit-identical with and without recording", same, f"{len(plain)} computations"))
    returned = [rec.gradient(q) for q in rec.queries]
    consistent = len(returned) == 2 and all(np.array_equal(g, r) for g, r in zip(returned, recorded[:2]))
    rows.append(("recorded gradients equal the returned ones", consistent, f"{len(returned)} backward queries"))
    return rows


def _bits(result):
    if isinstance(result, tuple):
        return tuple(_bits(r) for r in result)
    a = np.asarray(result)
    return a.dtype.str, a.shape, a.tobytes()

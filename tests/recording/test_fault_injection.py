"""An interrupt at every function entry inside ``with record(): grad(f)(x)`` (injected through
``sys.settrace``), at each capture level, leaves autograd exactly as it was and the next
recording exact."""

import os
import sys

import autograd.numpy as anp
import numpy as np
import pytest
from autograd import grad

import adtrace
from adtrace.recording import registry
from adtrace.recording.autograd import hooks

ORIGINALS = {p.name: vars(p.owner)[p.attribute] for p in hooks.HOOK_POINTS}


def f(x):
    return anp.sum(anp.sin(x) * x + x[0] * x)  # fan-out, a sparse contribution, an in-place accumulation


X = np.array([0.5, -1.0])
SWALLOWED_BY_AUTOGRAD = os.path.join("autograd", "wrap_util.py")


class Interrupt:
    """A trace function that raises KeyboardInterrupt at the ``at``-th function entry."""

    def __init__(self, at):
        self.at, self.entries, self.where = at, 0, None

    def __call__(self, frame, event, arg):
        if event == "call":
            self.entries += 1
            if self.entries == self.at:
                self.where = frame.f_code.co_filename
                raise KeyboardInterrupt
        return None


def run_interrupted(capture, at):
    interrupt = Interrupt(at)
    try:
        with adtrace.record(capture=capture):
            sys.settrace(interrupt)
            try:
                grad(f)(X)
            finally:
                sys.settrace(None)
    except KeyboardInterrupt:
        return interrupt, True
    return interrupt, False


def exact_square_recording():
    with adtrace.record() as rec:
        grad(lambda x: x * x)(3.0)
    adds = rec.of_kind("add_outgrads")
    return rec.failure is None and len(rec.events) == 11 and \
        [(float(a.result[0]), a.result[1]) for a in adds] == [(3.0, False), (6.0, True)]


@pytest.mark.parametrize("capture", ["auto", "full", "structure"])
def test_an_interrupt_at_every_function_entry_leaves_autograd_as_it_was(capture):
    run_interrupted(capture, at=0)  # first calls fill caches (primitive names, vector spaces)
    dry, interrupted = run_interrupted(capture, at=0)  # a dry run counts the entries
    total = dry.entries
    assert not interrupted and total > 100
    for at in range(1, total + 1):
        interrupt, interrupted = run_interrupted(capture, at)
        # (autograd's own wrap_util.wraps swallows any exception, KeyboardInterrupt included; adtrace never does)
        assert interrupt.where is not None, f"entry {at} of {total} never came"
        assert interrupted or interrupt.where.endswith(SWALLOWED_BY_AUTOGRAD), (at, interrupt.where)
        for point in hooks.HOOK_POINTS:
            assert vars(point.owner)[point.attribute] is ORIGINALS[point.name], (at, point.name)
        assert registry.active_recordings() == 0, at
        assert exact_square_recording(), f"the recording after an interrupt at entry {at} was not exact"

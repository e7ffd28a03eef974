"""The seed article's example, ``grad(x * x)(3.0)``: what a backward pass of it records and shows,
written once for every test that needs a recording known exactly."""

from autograd import grad

import adtrace


def square(x):
    return x * x


# the kinds of its events, in order: the node tracing made, then one event per step of backward_pass
EVENTS = ("root", "node", "trace", "backward_start", "toposort", "vjp", "add_outgrads", "add_outgrads",
          "toposort", "vjp", "backward_end")
# the rows of its state snapshot (statements of backward_pass run): eleven too, though not one per event
# (toposort's yield and pop are two rows, the root's empty zip one more; root, node, trace are not steps)
SNAPSHOT_ROWS = 11


def record_square(engine="autograd"):
    """``grad(square)(3.0)`` in a fresh recording (its gradient checked); ``engine="micrograd"``: the
    same with micrograd's ``Value`` (``(x * x).backward()``)."""
    with adtrace.record(engine=engine) as rec:
        if engine == "autograd":
            assert grad(square)(3.0) == 6.0
        else:
            from micrograd.engine import Value
            x = Value(3.0)
            square(x).backward()
            assert x.grad == 6.0
    return rec


def is_exact_square(rec):
    """True when ``rec`` holds exactly the events of ``grad(square)(3.0)``: no failure, the kinds of
    ``EVENTS`` and its two ``add_outgrads``, 3 into an empty slot, then 3 more (6, now mutable)."""
    adds = [(float(a.result[0]), a.result[1]) for a in rec.of_kind("add_outgrads")]
    return rec.failure is None and tuple(e.kind for e in rec.events) == EVENTS and adds == [(3, False), (6, True)]

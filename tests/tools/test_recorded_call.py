"""One call recorded and nothing else (``adtrace graph``): the function called once, the graph the
report of the same call shows."""

import autograd.numpy as anp
import pytest

from adtrace.compare.traced_call import trace_call
from adtrace.recording.events import JVPNodeCreated, NodeCreated
from adtrace.tools.recorded_call import recorded_call, recorded_engine_call


def counted():
    calls = []

    def f(x, y):
        calls.append(x)
        return anp.sin(x) * y + x

    return f, calls


def test_the_function_is_called_once_and_recorded_as_the_report_records_it():
    f, calls = counted()
    rec = recorded_call(f, (0.5, 3.0))
    assert len(calls) == 1
    assert [n.primitive for n in rec.of_kind(NodeCreated)] == ["sin", "multiply", "add"]
    assert rec.graph() == trace_call(f, (0.5, 3.0)).recording.graph()  # (the report's: 6 calls)
    assert [n.site for n in rec.of_kind(NodeCreated)][0].startswith("tests/tools/test_recorded_call.py:")
    assert len(rec.queries) == 1  # the VJP ran: a backward pass, seeded with ones


def test_argnum_and_forward_mode():
    f, calls = counted()
    rec = recorded_call(f, (0.5, 3.0), argnum=1, mode="fwd")
    assert len(calls) == 1 and not rec.queries
    assert [n.primitive for n in rec.of_kind(JVPNodeCreated)] == ["multiply", "add"]  # sin(x) (x fixed) is no node
    with pytest.raises(ValueError, match="mode must be one of rev, fwd"):
        recorded_call(f, (0.5, 3.0), mode="both")


def test_an_engine_call_makes_each_argument_a_leaf_and_runs_backward():
    pytest.importorskip("micrograd")
    calls = []

    def h(a, b):
        calls.append(a)
        return a * b + a

    rec = recorded_engine_call(h, (2, 3.0))
    assert len(calls) == 1 and len(rec.queries) == 1
    assert [(n.label, n.value) for n in rec.nodes.values()][:2] == [("v0_leaf", 2.0), ("v1_leaf", 3.0)]
    with pytest.raises(TypeError, match="returned a float, not a Value: nothing to call backward"):
        recorded_engine_call(lambda a: 1.0, (2.0,))

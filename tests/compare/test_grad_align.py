"""An engine's running ``.grad`` per node, read from its recorded writes (``compare/grad_align.py``)."""

from adtrace.compare.grad_align import engine_running_grads
from adtrace.compare.traced_engine_call import trace_engine_call
from value_classes import MiniValue


def test_running_grads_start_before_the_first_write():
    call = trace_engine_call(lambda a: a * a * a, (2.0,), engine=MiniValue)
    running, read = engine_running_grads(call.recording.query_events(1))
    assert running["v0_leaf"] == [0.0, 4.0, 8.0, 12.0] and read["v0_leaf"] == 12.0
    assert running["v2_mul"] == [1.0]  # the output: its seed

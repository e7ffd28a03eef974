"""The statements of an engine's own backward(), read from its source, and the callbacks each makes."""

import inspect
import linecache

from micrograd.engine import Value as MicroValue

from adtrace.recording.micrograd import attach
from adtrace.recording.micrograd.code import PASS, SEED, VISIT, WRITE, backward_statements
from value_classes import EventLog, MiniValue, Value


def outline(cls):
    return [("  " * s.depth + s.text, s.callbacks) for s in backward_statements(cls)]


def test_micrograd_backward_statements():
    assert outline(MicroValue) == [
        ("def backward(self):", PASS),
        ("  topo = []", ()),
        ("  visited = set()", ()),
        ("  def build_topo(v):", ()),
        ("    if v not in visited:", ()),
        ("      visited.add(v)", ()),
        ("      for child in v._prev:", ()),
        ("        build_topo(child)", ()),
        ("      topo.append(v)", ()),
        ("  build_topo(self)", ()),
        ("  self.grad = 1", SEED),
        ("  for v in reversed(topo):", ()),
        ("    v._backward()", VISIT),
    ]


def test_lines_are_the_engine_source_file_lines():
    path = inspect.getsourcefile(MicroValue)
    for statement in backward_statements(MicroValue):
        assert linecache.getline(path, statement.line).strip().startswith(statement.text)


def test_the_course_video_class_and_a_zeroing_backward():
    assert [c for _, c in outline(Value) if c] == [PASS, SEED, VISIT]

    class Zeroing(MiniValue):
        def backward(self, seed=1.0):
            topo = self.topological_order()
            for v in topo:
                v.grad = 0.0
            self.grad = seed
            try:
                for v in reversed(topo):
                    v._backward()
            finally:
                topo.clear()

    assert outline(Zeroing) == [
        ("def backward(self, seed=1.0):", PASS),
        ("  topo = self.topological_order()", ()),
        ("  for v in topo:", ()),
        ("    v.grad = 0.0", WRITE),
        ("  self.grad = seed", SEED),
        ("  try:", ()),
        ("    for v in reversed(topo):", ()),
        ("      v._backward()", VISIT),
        ("    topo.clear()", ()),
    ]


def test_a_hooked_class_gives_its_own_statements():
    before = backward_statements(MicroValue)
    with attach(MicroValue, EventLog()):
        assert backward_statements(MicroValue) == before


class LambdaValue(MiniValue):
    backward = lambda self: [v._backward() for v in MiniValue.topological_order(self)[::-1]]  # noqa: E731


def test_a_backward_written_as_a_lambda_is_one_statement_and_is_recorded():
    import adtrace

    assert outline(LambdaValue) == [
        ("backward = lambda self: [v._backward() for v in MiniValue.topological_order(self)[::-1]]", PASS + VISIT)]
    with adtrace.record(engine=LambdaValue) as rec:
        x = LambdaValue(3.0)
        y = x * x
        y.grad = 1.0
        y.backward()
    assert x.grad == 6.0 and [e.kind for e in rec.of_kind("vjp")] == ["vjp", "vjp"]

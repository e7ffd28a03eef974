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


# ---- engine_code read once per class and source text

ENGINE_FILE = '''
class FileValue:
    def __init__(self, data, _children=(), _op=''):
        self.data, self.grad, self._backward, self._prev, self._op = data, 0.0, lambda: None, set(_children), _op

    def __mul__(self, other):
        out = FileValue(self.data * other.data, (self, other), '*')

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def backward(self):
        topo, seen = [], set()

        def build(v):
            if v not in seen:
                seen.add(v)
                for child in v._prev:
                    build(child)
                topo.append(v)
        build(self)
        self.grad = 1.0
        for v in reversed(topo):
            v._backward()
'''


def _load(path, name):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_engine_code_is_read_once_per_class_and_again_when_its_file_changes(tmp_path):
    import os

    from adtrace.recording.micrograd.code import engine_code

    path = tmp_path / "file_engine.py"
    path.write_text(ENGINE_FILE)
    cls = _load(path, "file_engine").FileValue
    first = engine_code(cls)
    assert engine_code(cls) is first  # (the same text: not read again)
    assert engine_code(cls, relative_to=str(tmp_path)) is not first  # (another location: its own)
    assert "    self.grad = 1.0" in first.lines
    path.write_text(ENGINE_FILE.replace("self.grad = 1.0", "self.grad = 1.0  # the seed"))
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # (a later mtime: linecache checks it)
    changed = engine_code(cls)
    assert changed is not first and "    self.grad = 1.0  # the seed" in changed.lines


def test_engine_code_cached_for_a_class_goes_with_the_class(tmp_path):
    import gc
    import weakref

    from adtrace.recording.micrograd import code

    path = tmp_path / "dropped_engine.py"
    path.write_text(ENGINE_FILE)
    module = _load(path, "dropped_engine")
    cls = module.FileValue
    code.engine_code(cls)
    gone = weakref.ref(cls)
    assert gone() in code._MADE
    del cls, module
    gc.collect()
    assert gone() is None


def test_engine_code_of_a_backward_replaced_is_read_again():
    from adtrace.recording.micrograd.code import engine_code

    class Replaced(MiniValue):
        pass

    before = engine_code(Replaced)
    Replaced.backward = LambdaValue.backward
    after = engine_code(Replaced)
    assert after is not before and after.lines == engine_code(LambdaValue).lines

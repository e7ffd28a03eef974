"""rewrite.py: which classes are recompiled (every statement of theirs of the forms the deferred hooks read) and
which keep the descriptors; the recompiled methods run as the originals, at the user's own lines."""

import traceback

import pytest
from micrograd.engine import Value as MicroValue

import adtrace
import learner_shapes
import value_classes
from adtrace.recording.micrograd.engine import engine_for
from adtrace.recording.value_class.rewrite import HELPERS, instrument
from restored import assert_restored


def rewritten(cls):
    return instrument(engine_for(cls).shape)


def test_micrograd_is_recompiled_each_write_and_visit_a_helper_call():
    found = rewritten(MicroValue)
    assert found is not None
    assert set(found.codes) == {"__add__", "__mul__", "__pow__", "relu", "backward"}
    helpers = {name for code in found.own for name in code.co_freevars} & set(HELPERS)
    assert helpers == {"_adtrace_add", "_adtrace_set", "_adtrace_visit"}  # (free variables: no global of theirs)
    # each recompiled function at its original's file and first line (a traceback shows the user's code)
    for name, code in found.codes.items():
        original = vars(MicroValue)[name]
        assert (code.co_filename, code.co_firstlineno) == \
            (original.__code__.co_filename, original.__code__.co_firstlineno)


@pytest.mark.parametrize("cls", [value_classes.Value, learner_shapes.MethodValue, learner_shapes.SeedValue,
                                 learner_shapes.SetChildrenValue])
def test_accumulating_classes_are_recompiled(cls):
    assert rewritten(cls) is not None


def test_a_form_not_read_keeps_the_descriptors():
    """``grad = grad + c`` (read, then written otherwise), ``hasattr(v, "_backward")`` (a leaf's visit is a read),
    an array ``.grad`` started as an array: the descriptors see what these do."""
    assert rewritten(value_classes.BuggyValue) is None  # (`=` instead of `+=`: replaced, told by the descriptors)
    assert rewritten(learner_shapes.ParentsValue) is None  # hasattr(v, "_backward")
    assert rewritten(value_classes.ArrayValue) is None  # np.zeros_like(data)


def test_a_class_without_source_keeps_the_descriptors():
    namespace = {}
    exec(compile("class Made:\n"
                 "    def __init__(self, data, _children=(), _op=''):\n"
                 "        self.data, self.grad, self._backward, self._prev, self._op = data, 0, lambda: None, "
                 "tuple(_children), _op\n"
                 "    def __add__(self, other):\n"
                 "        out = Made(self.data + other.data, (self, other), '+')\n"
                 "        def _backward():\n"
                 "            self.grad += out.grad\n"
                 "            other.grad += out.grad\n"
                 "        out._backward = _backward\n"
                 "        return out\n"
                 "    def backward(self):\n"
                 "        self.grad = 1\n"
                 "        self._backward()\n", "<no file>", "exec"), namespace)
    Made = namespace["Made"]
    assert rewritten(Made) is None
    with adtrace.record(engine=Made) as recording:
        x = Made(2.0)
        (x + x).backward()
    assert x.grad == 2 and [e.kind for e in recording.events].count("add_outgrads") == 2


class Raising:
    def __init__(self, data, _children=(), _op=''):
        self.data, self.grad, self._backward, self._prev, self._op = data, 0, lambda: None, tuple(_children), _op

    def __mul__(self, other):
        out = Raising(self.data * other.data, (self, other), '*')

        def _backward():
            self.grad += other.data * out.grad
            other.grad += 1 / 0
        out._backward = _backward
        return out

    def backward(self):
        self.grad = 1
        self._backward()


def test_an_error_in_a_recompiled_closure_shows_the_users_line_and_is_recorded():
    assert rewritten(Raising) is not None
    before = dict(vars(Raising))
    with adtrace.record(engine=Raising) as recording:
        x = Raising(2.0)
        with pytest.raises(ZeroDivisionError) as raised:
            (x * x).backward()
    last = traceback.extract_tb(raised.value.__traceback__)[-1]
    assert (last.filename, last.line) == (__file__, "other.grad += 1 / 0")
    assert [e.kind for e in recording.events][-3:] == ["vjp", "add_outgrads", "backward_end"]
    assert_restored(Raising, before)
    assert not any(hasattr(__import__(__name__), name) for name in HELPERS)


def test_a_graph_built_before_the_recording_runs_the_recompiled_closures():
    """Closures made by the original methods (before ``record()``) are run as recompiled: their writes recorded."""
    x = MicroValue(3.0)
    y = x * x + x
    with adtrace.record(engine="micrograd") as recording:
        y.backward()
    writes = [e for e in recording.events if e.kind == "add_outgrads"]
    assert x.grad == 7.0 and len(writes) == 4


def test_a_method_changed_since_is_read_again():
    class Changing(value_classes.MiniValue):
        pass

    first = rewritten(Changing)
    engine = engine_for(Changing)
    assert engine._rewritten() is engine._rewritten()

    def __mul__(self, other):
        out = Changing(self.data * other.data, (self, other), '*')

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    Changing.__mul__ = __mul__
    again = engine._rewritten()
    assert first is not None and again is not None and again is not first and "__mul__" in again.codes


def test_a_file_edited_since_its_import_keeps_the_descriptors(tmp_path, monkeypatch):
    """The source read must be the code running: a module whose file changed after its import is not recompiled
    from the new text."""
    import importlib
    import linecache

    source = ("class Edited:\n"
              "    def __init__(self, data, _children=(), _op=''):\n"
              "        self.data, self.grad, self._backward, self._prev, self._op = data, 0, lambda: None, "
              "tuple(_children), _op\n"
              "    def __mul__(self, other):\n"
              "        out = Edited(self.data * other.data, (self, other), '*')\n"
              "        def _backward():\n"
              "            self.grad += other.data * out.grad\n"
              "            other.grad += self.data * out.grad\n"
              "        out._backward = _backward\n"
              "        return out\n"
              "    def backward(self):\n"
              "        self.grad = 1\n"
              "        self._backward()\n")
    (tmp_path / "edited_engine.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("edited_engine")
    assert rewritten(module.Edited) is not None
    (tmp_path / "edited_engine.py").write_text(source.replace("self.data * out.grad", "2 * self.data * out.grad"))
    linecache.checkcache()
    engine_for(module.Edited)._rewrite = None
    assert instrument(engine_for(module.Edited).shape) is None
    with adtrace.record(engine=module.Edited) as recording:
        x = module.Edited(3.0)
        (x * x).backward()
    assert x.grad == 6.0 and [e.kind for e in recording.events].count("add_outgrads") == 2


def test_a_recompiled_closure_is_named_as_the_original():
    with adtrace.record(engine="micrograd"):
        x = MicroValue(2.0)
        y = x * x
    assert y._backward.__qualname__ == "Value.__mul__.<locals>._backward"
    assert MicroValue.__mul__.__qualname__ == "Value.__mul__"

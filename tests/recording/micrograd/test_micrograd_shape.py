"""The shape check: micrograd-like classes accepted, every other one refused with one error naming what is missing."""

import pytest
from micrograd.engine import Value as MicroValue

from adtrace.recording.micrograd import ShapeError, attach, check_shape, hooked_classes
import learner_shapes
from restored import assert_restored
from value_classes import ArrayValue, BuggyValue, EventLog, MiniValue, SlotValue, Value


@pytest.mark.parametrize("cls", [MicroValue, Value, BuggyValue, MiniValue, SlotValue, ArrayValue],
                         ids=lambda c: c.__name__)
def test_classes_of_the_shape_are_accepted(cls):
    shape = check_shape(cls)
    assert (shape.cls, shape.children, shape.children_index, shape.children_default) == (cls, "_children", 1, ())


def test_keyword_only_children_are_accepted_and_read_by_keyword():
    class KeywordOnly(MiniValue):
        def __init__(self, data, *, children=(), op=''):
            super().__init__(data, children, op)

        def __mul__(self, other):
            out = KeywordOnly(self.data * other.data, children=(self, other), op='*')
            out._backward = lambda: None
            return out

    assert check_shape(KeywordOnly).children_index is None
    log = EventLog()
    with attach(KeywordOnly, log):
        x = KeywordOnly(2.0)
        y = x * x
    assert log.of("node_created")[1][:3] == (y, (x, x), "*")


class NoBackward:
    def __init__(self, data, _children=(), _op=''):
        self.data, self.grad, self._backward, self._op = data, 0, lambda: None, _op


class NoLocalBackward(MiniValue):
    """No _backward on a leaf nor on what an operation makes, and no method: nothing to call."""

    def __init__(self, data, _children=(), _op=''):
        self.data, self.grad, self._prev, self._op = data, 0, set(_children), _op

    def __mul__(self, other):
        return NoLocalBackward(self.data * other.data, (self, other), '*')


class NoChildren(MiniValue):
    def __init__(self, data):
        super().__init__(data)


class GradProperty(MiniValue):
    @property
    def grad(self):
        return self._grad

    @grad.setter
    def grad(self, value):
        self._grad = value


class StaticBackward(MiniValue):
    @staticmethod
    def backward():
        pass


class CustomSetattr(MiniValue):
    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)


class NeedsScale(MiniValue):
    def __init__(self, data, scale, _children=(), _op=''):
        super().__init__(data * scale, _children, _op)


class SlotsWithoutGrad:
    __slots__ = ("data", "_backward", "_prev", "_op")

    def __init__(self, data, _children=(), _op=''):
        self.data, self._backward, self._prev, self._op = data, lambda: None, set(_children), _op

    def backward(self):
        pass


class NoOp(MiniValue):
    def __init__(self, data, _children=()):
        self.data, self.grad, self._backward, self._prev = data, 0, lambda: None, set(_children)


@pytest.mark.parametrize("cls, missing", [
    (NoBackward, ["no backward() method"]),
    (NoLocalBackward, ["no per-instance _backward"]),
    (NoChildren, ["__init__ takes no children"]),
    (GradProperty, ["grad is a property on the class"]),
    (StaticBackward, ["backward is a staticmethod, not a plain method"]),
    (CustomSetattr, ["a custom __setattr__"]),
    (NeedsScale, ["could not make a leaf NeedsScale(0.0)", "TypeError"]),
    (SlotsWithoutGrad, ["no per-instance grad"]),
], ids=lambda v: v.__name__ if isinstance(v, type) else "")
def test_a_class_not_of_the_shape_gets_one_error_naming_what_is_missing(cls, missing):
    with pytest.raises(ShapeError) as error:
        check_shape(cls)
    message = str(error.value)
    assert message.startswith(f"{cls.__qualname__} is not of micrograd's shape")
    assert all(text in message for text in missing), message
    assert message.count("\n  - ") == 1, message  # exactly the one thing missing


def test_everything_missing_is_named_in_one_error():
    class Bare:
        def __init__(self, data):
            self.data = data

    with pytest.raises(ShapeError) as error:
        check_shape(Bare)
    lines = [line for line in str(error.value).splitlines() if line.startswith("  - ")]
    assert [line.split(":")[0].split(" (")[0] for line in lines] == [
        "  - __init__ takes no children", "  - no backward() method", "  - no per-instance grad",
        "  - no per-instance _backward"]


def test_a_class_without_an_init_is_told_the_one_to_write():
    class NoInit:
        def backward(self):
            pass

    with pytest.raises(ShapeError) as error:
        check_shape(NoInit)
    assert "  - no __init__(self, data, _children=(), _op='')" in str(error.value).splitlines()


def test_not_a_class():
    with pytest.raises(ShapeError, match="is not a class"):
        check_shape(MicroValue(1.0))


def test_attach_refuses_before_touching_the_class():
    before = dict(vars(GradProperty))
    with pytest.raises(ShapeError, match="grad is a property"):
        attach(GradProperty, EventLog())
    assert dict(vars(GradProperty)) == before and hooked_classes() == ()


class FloatValue(float):
    """A value that is a float (its data), of micrograd's shape otherwise."""

    def __new__(cls, data, _children=(), _op=''):
        return super().__new__(cls, data)

    def __init__(self, data, _children=(), _op=''):
        self.data, self.grad, self._backward, self._prev, self._op = data, 0.0, lambda: None, set(_children), _op

    def __mul__(self, other):
        out = FloatValue(self.data * other.data, (self, other), '*')

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def backward(self):
        self.grad = 1.0
        self._backward()


def test_a_float_subclass_is_not_refused_for_floats_own_attribute_access():
    import adtrace

    check_shape(FloatValue)
    with adtrace.record(engine=FloatValue) as rec:
        x = FloatValue(3.0)
        (x * x).backward()
    assert x.grad == 6.0 and len(rec.of_kind("add_outgrads")) == 2


def test_a_custom_getattribute_of_the_users_is_still_refused():
    class Guarded(MiniValue):
        def __getattribute__(self, name):
            return super().__getattribute__(name)

    with pytest.raises(ShapeError, match="custom __getattribute__"):
        check_shape(Guarded)


def test_a_subclass_whose_operations_make_its_base_is_refused_saying_what_to_pass():
    """micrograd's operations make ``Value(...)``: only the leaves made as the subclass would be recorded."""
    import adtrace

    class Sub(MicroValue):
        pass

    with pytest.raises(ShapeError, match=r"make Value values, not Sub ones: record\(engine=micrograd.engine.Value\)"):
        adtrace.record(engine=Sub)
    assert hooked_classes() == ()

    class Own(MiniValue):  # its operations make type(self): recorded fully
        pass

    with adtrace.record(engine=Own) as rec:
        x = Own(3.0)
        (x * x).backward()
    assert len(rec.of_kind("node")) == 2 and x.grad == 6.0


# ---- learners' classes of every common shape (tests/learner_shapes.py), with no configuration

@pytest.mark.parametrize("cls, children, index", [
    (learner_shapes.SlotsValue, "_children", 1), (learner_shapes.ParentsValue, "parents", 1),
    (learner_shapes.DataclassValue, "_prev", 3), (learner_shapes.MethodValue, "inputs", 1),
    (learner_shapes.SeedValue, "prev", 1),
    (learner_shapes.EdgeValue, "parents", 1)], ids=lambda v: v.__name__ if isinstance(v, type) else "")
def test_every_common_shape_is_accepted_with_its_children_parameter(cls, children, index):
    shape = check_shape(cls)
    assert (shape.children, shape.children_index, shape.children_default) == (children, index, ())
    assert check_shape(learner_shapes.BUGGY[cls]).children == children


def events_of(engine, f, *args):
    """What ``record(engine=engine)`` records of ``f(*args).backward()`` (a class, or a declared
    engine), order-free where siblings may come in either order (a set's iteration): the kinds in
    order, every node, visit and write; and the leaves' gradients."""
    import adtrace
    from adtrace.recording.registry import engine_named

    adapter = engine_named(engine)
    before = dict(vars(adapter.cls))
    with adtrace.record(engine=engine) as rec:
        leaves = [adapter.leaf(a) for a in args]
        adapter.backward(f(*leaves))
    assert_restored(adapter.cls, before)
    return ([e.kind for e in rec.events],
            sorted((e.label, e.primitive, len(e.argnums), e.value) for e in rec.of_kind("node")),
            sorted((e.node, e.outgrad, tuple(sorted(e.ingrads))) for e in rec.of_kind("vjp")),
            sorted((e.node, e.parent, e.previous, e.contribution, e.result, e.replaced)
                   for e in rec.of_kind("add_outgrads")),
            [(e.end, e.seed) for e in rec.of_kind("backward_start")]), [adapter.grad(leaf) for leaf in leaves]


@pytest.mark.parametrize("cls", learner_shapes.SHAPES, ids=lambda c: c.__name__)
def test_every_common_shape_is_recorded_with_micrographs_events(cls):
    def f(a, b):  # one valid order only (up to the leaves); no value twice in one op (a set keeps it once)
        return (a + b) * a

    expected, grads = events_of(Value, f, 3.0, 4.0)
    assert events_of(cls, f, 3.0, 4.0) == (expected, grads) and grads == [10.0, 3.0]
    buggy, _ = events_of(learner_shapes.BUGGY[cls], f, 3.0, 4.0)
    # v2_add's write into v0_leaf replaced (the edge style's bug is in its one loop: every write assigns)
    assert [w[-1] for w in buggy[3]] == [True] * (4 if cls is learner_shapes.EdgeValue else 1) + [False] * (
        0 if cls is learner_shapes.EdgeValue else 3)
    assert buggy[3][0][:2] == ("v2_add", "v0_leaf")


def test_a_class_without_an_op_is_recorded_each_op_one_adtrace_has_no_rule_for():
    """No ``_op`` (a minimal class, the edge style's ``Var``): accepted, every value's op is ``''``."""
    def f(a, b):
        return (a + b) * a

    assert check_shape(NoOp).op == "_op"
    (kinds, nodes, vjps, writes, starts), grads = events_of(learner_shapes.OplessEdgeValue, f, 3.0, 4.0)
    assert [(label, primitive) for label, primitive, _, _ in nodes] == [
        ("v0_leaf", ""), ("v1_leaf", ""), ("v2_op", ""), ("v3_op", "")]
    assert grads == [10.0, 3.0] and not any(w[-1] for w in writes)


class OpValue(MiniValue):
    """micrograd's class with its op kept as ``self.op`` (another tutorial's name), not ``self._op``."""

    def __init__(self, data, _children=(), op=''):
        self.data, self.grad, self._backward = data, 0.0, lambda: None
        self._prev, self.op = set(_children), op


def test_an_op_kept_as_op_is_found_without_a_declaration():
    def f(a, b):
        return (a + b) * a

    assert check_shape(OpValue).op == "op" and check_shape(MiniValue).op == "_op"
    (_, nodes, _, _, _), grads = events_of(OpValue, f, 3.0, 4.0)
    assert [primitive for _, primitive, _, _ in nodes] == ["", "", "+", "*"] and grads == [10.0, 3.0]


def test_a_leaf_without_a_local_backward_is_visited_once_per_pass():
    """``backward()`` reads a leaf's ``_backward`` (None, or no attribute) and calls nothing: one
    visit with nothing written, as micrograd's no-op closure makes; however many times it is read."""
    import adtrace

    class ReadTwice(MiniValue):
        def __init__(self, data, _children=(), _op=''):
            super().__init__(data, _children, _op)
            self._backward = None

        def backward(self):
            self.grad = 1.0
            for v in (self, *self._prev, *self._prev):
                if v._backward is not None and v._backward is not None:
                    v._backward()

    with adtrace.record(engine=ReadTwice) as rec:
        x = ReadTwice(3.0)
        (x + x).backward()
    assert rec.visit_order(1) == ["v1_add", "v0_leaf"] and x.grad == 2.0
    assert [e.ingrads for e in rec.of_kind("vjp")] == [(1.0, 1.0), ()]


# ---- a class adtrace cannot read, declared

def test_a_class_of_its_own_names_is_told_the_declaration_to_write_with_what_it_has():
    with pytest.raises(ShapeError) as error:
        check_shape(learner_shapes.Scalar)
    assert str(error.value).splitlines()[-6:] == [
        "If Scalar keeps them under other names, describe it (each an attribute of the class; children: "
        "__init__'s parameter taking the operation's inputs):",
        "    from adtrace.recording.micrograd import declare",
        "    engine = declare(Scalar, data=..., grad=..., children=..., local_backward=..., backward=..., op=...)",
        "    with adtrace.record(engine=engine): ...",
        "  (a leaf Scalar(0.0) has: backprop, g, kids, kind, value)",
        "  (__init__ takes: value, kids, kind)"]


def test_the_declaration_shown_fills_in_what_was_found():
    class Renamed(MiniValue):  # micrograd's shape but for the gradient, kept as `g`
        def __init__(self, data, _children=(), _op=''):
            self.data, self.g, self._backward, self._prev, self._op = data, 0.0, lambda: None, set(_children), _op

    with pytest.raises(ShapeError) as error:
        check_shape(Renamed)
    assert ("    engine = declare(Renamed, data='data', grad=..., children='_children', local_backward='_backward', "
            "backward='backward', op='_op')") in str(error.value).splitlines()
    assert check_shape(Renamed, grad="g").grad == "g"


def test_what_a_declaration_names_is_checked_too():
    with pytest.raises(ShapeError) as error:
        check_shape(learner_shapes.Scalar, **dict(learner_shapes.SCALAR_NAMES, children="inputs", grad="gradient"))
    missing = [line for line in str(error.value).splitlines() if line.startswith("  - ")]
    assert missing == ["  - __init__ has no parameter 'inputs' (positional or keyword)",
                       "  - no per-instance gradient (set self.gradient in __init__)"]
    with pytest.raises(TypeError, match="not children_name"):
        check_shape(learner_shapes.Scalar, children_name="kids")


def test_a_declared_class_is_recorded_with_micrographs_events():
    from adtrace.recording.micrograd import declare

    def f(a, b):
        return (a + b) * a

    expected, grads = events_of(Value, f, 3.0, 4.0)
    engine = declare(learner_shapes.Scalar, **learner_shapes.SCALAR_NAMES)
    assert events_of(engine, f, 3.0, 4.0) == (expected, grads) and grads == [10.0, 3.0]
    assert events_of(learner_shapes.Scalar, f, 3.0, 4.0) == (expected, grads)  # the class's engine from then on
    buggy, _ = events_of(declare(learner_shapes.BuggyScalar, **learner_shapes.SCALAR_NAMES), f, 3.0, 4.0)
    assert [w[-1] for w in buggy[3]] == [True, False, False, False]


def test_the_readme_declares_the_class_as_the_tests_do():
    import re

    from readme import readme

    keywords = re.search(r"engine = declare\(Scalar, (.*?)\)", " ".join(readme().split())).group(1)
    assert eval(f"dict({keywords})") == learner_shapes.SCALAR_NAMES


def test_the_readmes_edge_style_class_runs_and_is_recorded_as_the_tests_class_is(tmp_path):
    """The README's example of a shape other than micrograd's (the edge style) runs as a file and prints
    what it says; its events are those of ``learner_shapes.EdgeValue`` on the same expression."""
    import inspect
    import re
    import subprocess
    import sys

    import adtrace
    from readme import readme

    block = readme().split("The edge\nstyle, for one", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    printed = next(line[2:] for line in block.splitlines() if line.startswith("# "))
    source = re.sub(r'\n    """.*?"""\n\n', "\n", inspect.getsource(learner_shapes.EdgeValue), flags=re.S)
    assert block.split("\n\nwith ")[0] == source.strip()  # the tests' class, its docstring left out
    (tmp_path / "edge.py").write_text("import adtrace\n\n\n" + block)
    out = subprocess.run([sys.executable, "edge.py"], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0 and out.stdout == printed + "\n", out.stderr
    with adtrace.record(engine=learner_shapes.EdgeValue) as rec:
        x = learner_shapes.EdgeValue(3.0)
        (x * x + x).backward()
    assert printed == f"{x.grad} {[(e.node, e.parent, e.contribution) for e in rec.of_kind('add_outgrads')]}"


def test_the_edge_style_whose_loop_cannot_be_read_is_named_as_what_it_is():
    """The autodidact's style (``parents`` of ``(value, local derivative)`` pairs) is recorded when a loop
    of ``backward()`` over ``v.parents`` writes ``.grad``: the read of ``v.parents`` there is ``v``'s visit.
    Without one (the multiplying done elsewhere) it is refused, without a declaration that would not help."""

    def propagate(v):
        for parent, local in v.parents:
            parent.grad += local * v.grad

    class Var(learner_shapes.EdgeValue):
        def __mul__(self, other):
            return Var(self.data * other.data, [(self, other.data), (other, self.data)], '*')

        def backward(self):
            self.grad = 1.0
            propagate(self)

    with pytest.raises(ShapeError) as error:
        check_shape(Var)
    assert str(error.value).splitlines()[1:] == [
        "  - no _backward: its values keep (value, local derivative) pairs in parents, and no loop of a readable "
        "backward() over v.parents writes a .grad"]
    assert check_shape(learner_shapes.EdgeValue).edges == "parents"

"""The user's variable names of nodes, from the assignment on the line that made each."""

import importlib.util
import math
import textwrap

import autograd.numpy as np
import pytest
from autograd import grad

import adtrace
from adtrace.recording.names import named_site, variable_names

PROGRAM = '''
import autograd.numpy as np

def loss(params, x):
    W = params["W"]
    h = np.tanh(W @ x)
    for _ in range(2):
        h = np.sin(h)
    g = np.tanh(np.tanh(h))
    a, b = h[0], h[1]
    h += a * b
    total = (np.sum(h)
             + np.sum(g))
    return total * 2.0
'''


def names_of(tmp_path, program=PROGRAM, module_name="model_for_names"):
    path = tmp_path / "model.py"
    path.write_text(textwrap.dedent(program))
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    params, x = {"W": np.array([[0.5, -0.2], [0.1, 0.3]])}, np.array([1.0, 2.0])
    with adtrace.record(capture="full", sites=True) as rec:
        grad(module.loss)(params, x)
    names = variable_names(rec)
    return {label: (rec.nodes[label].primitive, names.get(label)) for label in rec.nodes if label != "v0_root"}


@pytest.fixture(scope="module")
def found(tmp_path_factory):
    """The program's names, from one file (two files shown alike name nothing: the last test)."""
    return names_of(tmp_path_factory.mktemp("names"))


def test_the_value_of_the_assignment_is_named_not_its_inner_operations(found):
    assert found["v1_container_take"] == ("container_take", "W")
    assert found["v2_matmul"] == ("matmul", None) and found["v3_tanh"] == ("tanh", "h")


def test_a_loop_line_names_each_of_its_nodes(found):
    assert [name for primitive, name in found.values() if primitive == "sin"] == ["h", "h"]


def test_an_operation_nested_in_itself_names_the_outer_one(found):
    assert [found[label] for label in ("v6_tanh", "v7_tanh")] == [("tanh", None), ("tanh", "g")]


def test_an_operation_nested_in_itself_through_another_names_only_the_outer_one(tmp_path):
    program = "import autograd.numpy as np\n\ndef loss(params, x):\n    s = np.tanh(np.sin(np.tanh(params['W'])))\n" \
              "    return np.sum(s)\n"
    found = names_of(tmp_path, program, module_name="nested_for_names")
    assert [found[label] for label in ("v2_tanh", "v3_sin", "v4_tanh")] == [("tanh", None), ("sin", None),
                                                                              ("tanh", "s")]


def test_tuple_targets_and_returns_name_nothing_and_augmented_and_long_statements_do(found):
    assert [name for primitive, name in found.values() if primitive == "ArrayBox.__getitem__"] == [None, None]
    assert [(p, n) for p, n in found.values() if n in ("h", "total") and p in ("add", "multiply")] == [
        ("add", "h"), ("add", "total")]
    assert [name for primitive, name in found.values() if primitive == "multiply"] == [None, None]


def test_a_named_site_reads_name_at_line():
    assert named_site("h", "model.py:4") == "h@model.py:4" and named_site(None, "model.py:4") == "model.py:4"


def test_two_files_shown_alike_name_nothing_they_could_be_either(tmp_path, found):
    other = PROGRAM.replace("g = np.tanh", "q = np.tanh").replace("np.sum(g)", "np.sum(q)")  # another name, same lines
    assert names_of(tmp_path, other, module_name="model_for_names") == {
        label: (primitive, None) for label, (primitive, _) in found.items()}


# -------------------- value classes: micrograd, a learner's class, a class of numpy arrays --------------------

MICROGRAD = '''
def loss(w, x, b):
    h = (w * x).relu()
    out = h * b + x
    d = out - w
    q = d / b
    n = -q
    for _ in range(2):
        n = n * w
    total = sum([n, q, d])
    return total ** 2
'''


def engine_names(tmp_path, program, engine, *args, module_name="engine_model_for_names"):
    """(op, name) of each operation ``program``'s ``loss(*args)`` made, in order (``engine`` known to it)."""
    path = tmp_path / f"{module_name}.py"
    path.write_text(textwrap.dedent(program))
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    module.__dict__[getattr(engine, "__name__", "Value")] = engine
    spec.loader.exec_module(module)
    with adtrace.record(engine=engine, capture="full", sites=True) as rec:
        module.loss(*args).backward()
    names = variable_names(rec)
    return [(rec.nodes[label].primitive, names.get(label)) for label in rec.nodes
            if getattr(rec.nodes[label], "primitive", "")]


def test_micrograd_names_the_value_of_each_assignment_of_the_ops_it_builds(tmp_path):
    from micrograd.engine import Value
    found = engine_names(tmp_path, MICROGRAD, "micrograd", Value(2.0), Value(3.0), Value(-1.5))
    assert found == [("*", None), ("ReLU", "h"),  # h = (w * x).relu()
                     ("*", None), ("+", "out"),  # out = h * b + x
                     ("*", None), ("+", "d"),  # d = out - w: out + (w * -1)
                     ("**-1", None), ("*", "q"),  # q = d / b: d * b**-1
                     ("*", "n"),  # n = -q: q * -1
                     ("*", "n"), ("*", "n"),  # a loop's line: each run
                     ("+", None), ("+", None), ("+", "total"),  # sum(): 0 + n + q + d
                     ("**2", None)]  # a return names nothing


LEARNER = '''
def loss(a, b, c):
    out = a * b + c
    for _ in range(2):
        out = out * a + b
    return out * c
'''


@pytest.mark.parametrize("shape", ["SlotsValue", "MethodValue", "DataclassValue", "EdgeValue"])
def test_a_learners_class_names_the_outermost_operation(tmp_path, shape):
    import learner_shapes
    cls = getattr(learner_shapes, shape)
    found = engine_names(tmp_path, LEARNER, cls, cls(2.0), cls(3.0), cls(-1.5), module_name=f"learner_{shape}")
    assert found == [("*", None), ("+", "out")] + [("*", None), ("+", "out")] * 2 + [("*", None)]


ARRAYS = '''
def loss(x, w):
    h = (x @ w).tanh()
    z = h.relu()
    return z.sum()
'''


def test_a_class_of_numpy_arrays_names_method_calls(tmp_path):
    from learner_arrays import Tensor
    found = engine_names(tmp_path, ARRAYS, Tensor, Tensor(np.array([[1.0, -2.0]])), Tensor(np.array([[0.5], [0.3]])),
                         module_name="arrays_model_for_names")
    assert found == [("@", None), ("tanh", "h"), ("ReLU", "z"), ("sum", None)]


class ExpTanh:
    """A learner's class whose ``tanh`` is made of its other ops (``*``, ``exp``, ``+``, ``**-1``) on the user's
    line: a ``*`` inside it is not the value of ``h = x.tanh() * w``."""

    def __init__(self, data, _children=(), _op=''):
        self.data, self.grad, self._backward, self._prev, self._op = data, 0.0, lambda: None, tuple(_children), _op

    def _made(self, data, children, op, partials):
        out = ExpTanh(data, children, op)

        def _backward():
            for child, partial in zip(children, partials):
                child.grad += partial * out.grad
        out._backward = _backward
        return out

    def __add__(self, other):
        other = other if isinstance(other, ExpTanh) else ExpTanh(other)
        return self._made(self.data + other.data, (self, other), '+', (1.0, 1.0))

    def __mul__(self, other):
        other = other if isinstance(other, ExpTanh) else ExpTanh(other)
        return self._made(self.data * other.data, (self, other), '*', (other.data, self.data))

    def __pow__(self, k):
        return self._made(self.data ** k, (self,), f'**{k}', (k * self.data ** (k - 1),))

    def exp(self):
        return self._made(math.exp(self.data), (self,), 'exp', (math.exp(self.data),))

    def tanh(self):  # (e^2x - 1) / (e^2x + 1)
        e = (self * 2.0).exp()
        return (e + -1.0) * (e + 1.0) ** -1

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


AMBIGUOUS = '''
def loss(x, w):
    h = x.tanh() * w
    for _ in range(2):
        g = x.exp().exp()
    k = ExpTanh((x * w).data) * w
    return h + g + k
'''


def test_a_line_whose_inner_operations_can_make_its_op_names_only_its_last_node(tmp_path):
    found = engine_names(tmp_path, AMBIGUOUS, ExpTanh, ExpTanh(0.5), ExpTanh(2.0), module_name="ambiguous_for_names")
    named = [(op, name) for op, name in found if name]
    assert named == [("*", "h"), ("exp", "g"), ("*", "k")]  # the tanh's own '*'s and the first runs' exps: no name
    assert [name for op, name in found if op == "*"][-4:] == [None, "h", None, "k"]  # (x * w).data left the trace

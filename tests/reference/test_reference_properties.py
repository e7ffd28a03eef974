"""Property tests: random expression DAGs with fan-out and broadcasting.

A program is a list of operations over a pool of values that starts with the
inputs (shapes (), (3,) and (2, 3), which all broadcast together); each operation
picks its operands anywhere in the pool, so earlier results are reused and nodes
fan out. The reference engine must equal autograd on every input, both engines'
visit orders must be valid reverse topological orders of the same graph, and
forward mode must pass the dot-product test against reverse mode.
"""

import warnings

import autograd
import autograd.numpy as anp
import numpy as np
from hypothesis import event, given, settings
from hypothesis import strategies as st

import adtrace.reference as ref
from reference_corpus import autograd_graph

SHAPES = [(), (3,), (2, 3)]
C2 = np.array([0.5, -1.0])

UNARY = {
    "sin": anp.sin,
    "cos": anp.cos,
    "tanh": anp.tanh,
    "negative": anp.negative,
    "exp_sin": lambda a: anp.exp(anp.sin(a)),
    "log_1p_square": lambda a: anp.log(1.0 + a * a),
    "sqrt_1p_square": lambda a: anp.sqrt(a * a + 1.0),
    "abs": anp.abs,
    "square": lambda a: a**2,
}
BINARY = {
    "add": anp.add,
    "subtract": anp.subtract,
    "multiply": anp.multiply,
    "divide": lambda a, b: a / (1.5 + b * b),
    "maximum": anp.maximum,
    "power": lambda a, b: (a * a + 0.5) ** anp.tanh(b),
    # b is used by a node and by that node's user: here the lecture's depth-first
    # order and autograd's toposort visit a and b in different orders
    "shared_operand": lambda a, b: b * (a * b),
}


def reduce_op(a):
    """A shape-changing operation that stays inside SHAPES."""
    if anp.ndim(a) == 2:
        return anp.sum(a, axis=0) if np.size(a) % 2 == 0 else a[1]
    if anp.ndim(a) == 1:
        return anp.mean(a) if a.shape[0] == 3 else anp.dot(C2, a)
    return a * 1.0


def matrix_op(a, b):
    """dot / matmul when shapes allow, otherwise a product."""
    if anp.ndim(a) == 2 and anp.ndim(b) == 1:
        return anp.dot(C2, a @ b)
    if anp.ndim(a) == 1 and anp.ndim(b) == 1:
        return anp.dot(a, b)
    if anp.ndim(a) == 2 and anp.ndim(b) == 2:
        return anp.reshape(a @ anp.transpose(b) @ a, (2, 3)) * 0.3
    return a * b


OPS = [("unary", n) for n in UNARY] + [("binary", n) for n in BINARY] + [("reduce", ""), ("matrix", "")]


def evaluate(program, inputs):
    pool = list(inputs)
    for (kind, name), i, j in program:
        a, b = pool[i % len(pool)], pool[j % len(pool)]
        if kind == "unary":
            pool.append(UNARY[name](a))
        elif kind == "binary":
            pool.append(BINARY[name](a, b))
        elif kind == "reduce":
            pool.append(reduce_op(a))
        else:
            pool.append(matrix_op(a, b))
    s1, s2 = anp.sum(pool[-1]), anp.sum(pool[len(pool) // 2])
    return s2 * (s1 * s2)  # the shared_operand pattern again, on the two sums


programs = st.lists(
    st.tuples(st.sampled_from(OPS), st.integers(0, 63), st.integers(0, 63)), min_size=1, max_size=10
)
input_shapes = st.lists(st.sampled_from(SHAPES), min_size=1, max_size=3)


def make_inputs(shapes, seed):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1.5, 1.5, size=s) if s else float(rng.uniform(-1.5, 1.5)) for s in shapes]


def traced_from_first(program, inputs):
    """A function of the first input in which every input is traced: the others
    become ``c + 0.1 * sum(x)`` (same shape as ``c``), so the whole DAG is one graph."""
    constants = inputs[1:]
    return lambda x: evaluate(program, [x] + [c + 0.1 * anp.sum(x) for c in constants])


def assert_equal_to_autograd(actual, expected):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape
    scale = 1.0 + np.max(np.abs(expected), initial=0.0)
    np.testing.assert_allclose(actual, expected, rtol=1e-12, atol=1e-13 * scale)


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(program=programs, shapes=input_shapes, seed=st.integers(0, 2**16))
def test_random_dags_reference_equals_autograd(program, shapes, seed):
    inputs = make_inputs(shapes, seed)
    f = lambda *xs: evaluate(program, xs)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Output seems independent of input")
        for argnum in range(len(inputs)):
            assert_equal_to_autograd(ref.grad(f, argnum)(*inputs), autograd.grad(f, argnum)(*inputs))


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(program=programs, shapes=input_shapes, seed=st.integers(0, 2**16))
def test_random_dags_both_orders_are_valid(program, shapes, seed):
    inputs = make_inputs(shapes, seed)
    f0 = traced_from_first(program, inputs)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Output seems independent of input")
        graph = ref.trace_graph(f0, inputs[0])
        if graph.out is None:
            return
        parents, autograd_order, _ = autograd_graph(f0, inputs[0])
    mine = [n.label for n in ref.reverse_topo_order(graph.out)]
    event("orders differ" if mine != autograd_order else "orders equal")
    assert ref.parent_labels(graph) == parents
    assert ref.is_reverse_topological(mine, parents)
    assert ref.is_reverse_topological(autograd_order, parents)
    run = ref.run_gradient(f0, inputs[0])
    assert list(run.order) == mine and run.own + run.borrowed == len(mine) - 1


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(program=programs, shapes=input_shapes, seed=st.integers(0, 2**16))
def test_random_dags_forward_and_reverse_pass_the_dot_product_test(program, shapes, seed):
    inputs = make_inputs(shapes, seed)
    x = inputs[0]
    f = lambda x: traced_from_first(program, inputs)(x) * anp.cos(x)  # output shaped like x
    rng = np.random.default_rng(seed + 1)
    u, v = rng.standard_normal(np.shape(x)), rng.standard_normal(np.shape(x))
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Output seems independent of input")
        vjp, _ = ref.make_vjp(f)(x)
        _, Jv = ref.make_jvp(f)(x)(v)
    lhs, rhs = np.sum(u * Jv), np.sum(vjp(u) * v)
    np.testing.assert_allclose(lhs, rhs, rtol=1e-10, atol=1e-10 * (1.0 + abs(rhs)))


SCALAR_OPS = [op for op in OPS if op[0] in ("unary", "binary")]


@settings(max_examples=100, deadline=None, derandomize=True, database=None)
@given(
    program=st.lists(st.tuples(st.sampled_from(SCALAR_OPS), st.integers(0, 63), st.integers(0, 63)),
                     min_size=1, max_size=6),
    x=st.floats(-1.2, 1.2),
)
def test_random_scalar_dags_second_derivative_equals_autograd(program, x):
    f = lambda x: evaluate(program, [x, anp.sin(x) + 0.3])
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Output seems independent of input")
        expected = autograd.grad(autograd.grad(f))(x)
        assert_equal_to_autograd(ref.grad(ref.grad(f))(x), expected)

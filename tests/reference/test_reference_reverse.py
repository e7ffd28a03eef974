"""Reverse mode: the lecture's ``gradient``, its step log and the public functions."""

import warnings

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from autograd.tracer import isbox

import adtrace.reference as ref
from adtrace.reference.graph import trace_graph
from adtrace.reference.reverse import gradient, sum_partial_adjoints


def seed_f(x, y):
    """The seed notebook's first example: f(x, y) = sin(x y) + exp(x)."""
    return anp.sin(x * y) + anp.exp(x)


def seed_g(x, y):
    """The seed notebook's second example: g(x, y) = -(sin x * sin y)."""
    return -(anp.sin(x) * anp.sin(y))


def test_seed_notebook_first_example():
    x, y = 0.5, 3.0
    dfdx, dfdy = ref.grad(seed_f, 0)(x, y), ref.grad(seed_f, 1)(x, y)
    assert dfdx == pytest.approx(1.860933, abs=1e-6)
    assert dfdy == pytest.approx(0.035369, abs=1e-6)
    assert dfdx == pytest.approx(y * np.cos(x * y) + np.exp(x), rel=1e-14)
    assert dfdy == pytest.approx(x * np.cos(x * y), rel=1e-14)


def test_seed_notebook_second_example():
    x, y = 1.0, 2.0
    dgdx, dgdy = ref.grad(seed_g, 0)(x, y), ref.grad(seed_g, 1)(x, y)
    assert dgdx == pytest.approx(-0.491295, abs=1e-6)
    assert dgdy == pytest.approx(0.350175, abs=1e-6)
    assert dgdx == pytest.approx(-np.cos(x) * np.sin(y), rel=1e-14)
    assert dgdy == pytest.approx(-np.sin(x) * np.cos(y), rel=1e-14)


def test_seed_notebook_backward_trace():
    """The notebook prints v3 -> v2 += 0.070737 and v2 -> x += 0.212212 for df/dx."""
    run = ref.run_gradient(lambda x: seed_f(x, 3.0), 0.5)
    by_label = {step.label: step for step in run.steps}
    assert [s.label for s in run.steps] == ["v4_add", "v3_exp", "v2_sin", "v1_multiply", "v0_root"]
    assert by_label["v2_sin"].contributions[0].value == pytest.approx(0.070737, abs=1e-6)
    assert by_label["v1_multiply"].contributions[0].value == pytest.approx(0.212212, abs=1e-6)
    assert by_label["v3_exp"].contributions[0].value == pytest.approx(1.648721, abs=1e-6)
    root = by_label["v0_root"]
    assert len(root.partial_adjoints) == 2 and root.v_i_bar == pytest.approx(1.860933, abs=1e-6)


def test_square_step_log_has_two_partial_adjoints_for_the_root():
    run = ref.run_gradient(lambda x: x * x, 3.0)
    multiply, root = run.steps
    assert multiply.label == "v1_multiply" and multiply.rule == "own"
    assert [(c.position, c.argnum, c.parent) for c in multiply.contributions] == [
        (0, 0, "v0_root"),
        (1, 1, "v0_root"),
    ]
    assert [float(c.value) for c in multiply.contributions] == [3.0, 3.0]
    assert root.label == "v0_root" and root.rule == "root" and root.contributions == ()
    assert [float(p) for p in root.partial_adjoints] == [3.0, 3.0]
    assert float(root.v_i_bar) == float(run.adjoint) == 6.0
    assert run.order == ("v1_multiply", "v0_root") and run.own == 1 and run.borrowed == 0
    assert run.parents == {"v0_root": (), "v1_multiply": ("v0_root", "v0_root")}


def test_argnum_records_which_argument_a_position_is():
    run = ref.run_gradient(lambda x: 3.0 * x - x, 2.0)
    by_label = {step.label: step for step in run.steps}
    (c,) = by_label["v1_multiply"].contributions
    assert (c.position, c.argnum, c.parent, float(c.value)) == (0, 1, "v0_root", 3.0)
    assert [float(c.value) for c in by_label["v2_subtract"].contributions] == [1.0, -1.0]
    assert float(run.adjoint) == 2.0


def test_each_partial_adjoint_is_summed_at_the_visit():
    run = ref.run_gradient(lambda x: anp.sum(x * x + x * x + x * x), np.array([1.0, 2.0]))
    root = run.steps[-1]
    assert len(root.partial_adjoints) == 6
    np.testing.assert_array_equal(root.v_i_bar, sum(root.partial_adjoints))
    np.testing.assert_array_equal(run.adjoint, [6.0, 12.0])


def test_sum_partial_adjoints_keeps_the_first_value_exactly():
    assert np.signbit(sum_partial_adjoints([np.array(-0.0)]))
    assert not np.signbit(sum([np.array(-0.0)]))  # what Python's sum would do


def test_gradient_is_callable_many_times_on_one_graph():
    graph = trace_graph(lambda x: anp.sin(x) * x, np.array([0.5, 1.0]))
    first, _ = gradient(graph, np.array([1.0, 0.0]))
    second, _ = gradient(graph, np.array([0.0, 1.0]))
    expected = autograd.jacobian(lambda x: anp.sin(x) * x)(np.array([0.5, 1.0]))
    np.testing.assert_array_equal(np.stack([first, second]), expected)


def test_grad_with_argnum_and_several_arguments():
    f = lambda x, y, z: x * anp.sin(y) + z**2 * y
    for argnum in range(3):
        assert ref.grad(f, argnum)(1.0, 2.0, 3.0) == autograd.grad(f, argnum)(1.0, 2.0, 3.0)


def test_make_vjp_returns_vjp_and_value_like_autograd():
    f = lambda x, W: anp.tanh(anp.dot(W, x))
    x, W = np.array([0.3, -0.2]), np.arange(6.0).reshape(3, 2)
    vjp, ans = ref.make_vjp(f, 1)(x, W)
    ag_vjp, ag_ans = autograd.make_vjp(f, 1)(x, W)
    u = np.array([1.0, -2.0, 0.5])
    np.testing.assert_array_equal(ans, ag_ans)
    np.testing.assert_allclose(vjp(u), ag_vjp(u), rtol=1e-12)


def test_output_independent_of_input_gives_zeros_of_the_input_space():
    x = np.array([1.0, 2.0])
    with pytest.warns(UserWarning, match="Output seems independent of input"):
        result = ref.grad(lambda x: 4.0)(x)
    np.testing.assert_array_equal(result, np.zeros(2))
    with pytest.warns(UserWarning):
        run = ref.run_gradient(lambda x: anp.sum(np.ones(3)), x)
    assert run.steps == () and run.order == ()
    np.testing.assert_array_equal(run.adjoint, np.zeros(2))


def test_grad_requires_a_scalar_output():
    with pytest.raises(TypeError, match="scalar-output"):
        ref.grad(lambda x: x * 2.0)(np.array([1.0, 2.0]))


def test_grad_of_grad_equals_autograd_second_derivative():
    f = lambda x: anp.tanh(x) * anp.exp(-x * x) + x**3
    assert ref.grad(ref.grad(f))(0.7) == pytest.approx(autograd.grad(autograd.grad(f))(0.7), rel=1e-12)
    assert ref.grad(ref.grad(ref.grad(f)))(0.7) == pytest.approx(
        autograd.grad(autograd.grad(autograd.grad(f)))(0.7), rel=1e-12
    )


def test_the_inner_backward_pass_extends_the_outer_graph():
    """Under grad(grad(f)) the inner adjoints are boxes of the outer trace; the outer
    graph then contains the operations of the inner backward pass."""
    seen = {}

    def inner_grad(x):
        vjp, _ = ref.make_vjp(lambda x: anp.sin(x) * x)(x)
        adjoint = vjp(1.0)
        seen["adjoint_is_box"] = isbox(adjoint)
        return adjoint

    outer = ref.run_gradient(inner_grad, 0.4)
    assert seen["adjoint_is_box"]
    assert float(outer.adjoint) == pytest.approx(2 * np.cos(0.4) - 0.4 * np.sin(0.4), rel=1e-12)
    assert outer.labels == (
        "v0_root", "v1_sin", "v2_multiply",  # the inner forward pass, seen by the outer trace
        "v3_multiply", "v4_multiply", "v5_cos", "v6_multiply", "v7_add",  # the inner backward pass
    )
    assert outer.parents["v7_add"] == ("v4_multiply", "v6_multiply")  # sum of the root's adjoints
    assert float(outer.adjoint) == pytest.approx(2 * np.cos(0.4) - 0.4 * np.sin(0.4), rel=1e-12)


def test_step_log_holds_raw_values_under_an_outer_trace():
    seen = {}

    def inner(x):
        seen["run"] = ref.run_gradient(lambda x: anp.sin(x) * x, x)
        return ref.grad(lambda x: anp.sin(x) * x)(x)

    assert ref.grad(inner)(0.4) == pytest.approx(autograd.grad(autograd.grad(lambda x: anp.sin(x) * x))(0.4))
    run = seen["run"]
    values = [run.value, run.adjoint] + [
        v for s in run.steps for v in (s.v_i_bar, *s.partial_adjoints, *(c.value for c in s.contributions))
    ]
    assert values and not any(isbox(v) for v in values)
    assert float(run.adjoint) == pytest.approx(np.cos(0.4) * 0.4 + np.sin(0.4), rel=1e-14)


def test_notrace_primitive_is_a_constant():
    x = np.array([1.0, 7.0, 3.0])
    run = ref.run_gradient(lambda x: x[anp.argmax(x)] * 2.0, x)
    assert not any("argmax" in label for label in run.labels)
    np.testing.assert_array_equal(run.adjoint, [0.0, 2.0, 0.0])


def test_elementwise_grad_like_autograd():
    f = lambda x: anp.tanh(x) * 2.0
    x = np.array([-1.0, 0.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(ref.elementwise_grad(f)(x), autograd.elementwise_grad(f)(x))


def test_package_docstring_worked_example_runs():
    import doctest

    assert doctest.testmod(ref).failed == 0


def test_partial_adjoints_of_containers_are_summed_in_their_vector_space():
    """Python's + concatenates tuples (three 3-tuples into a 9-tuple) and cannot add dicts."""
    pair = (np.array([1.0, 2.0]), 3.0, np.array([[1.0]]))
    total = sum_partial_adjoints([pair, pair, pair])
    assert isinstance(total, tuple) and len(total) == 3
    np.testing.assert_array_equal(total[0], [3.0, 6.0])
    assert total[1] == 9.0 and total[2].shape == (1, 1)
    total = sum_partial_adjoints([{"w": np.ones(2)}, {"w": np.ones(2)}])
    np.testing.assert_array_equal(total["w"], [2.0, 2.0])


def test_partial_adjoints_of_arrays_are_summed_with_plus_bit_for_bit():
    a, b, c = np.array([0.1, 0.7]), np.array([0.2, 1e-17]), np.array([0.3, -0.7])
    np.testing.assert_array_equal(sum_partial_adjoints([a, b, c]), (a + b) + c)
    assert sum_partial_adjoints([0.1, 0.2, 0.3]) == (0.1 + 0.2) + 0.3


def test_container_valued_nodes_get_the_gradient_autograd_gives():
    """flatten's unflatten makes tuple- and list-valued nodes even from one flat vector."""
    from autograd.misc.flatten import flatten

    params = [(np.array([[0.5, -1.0]]), np.array([0.2, 0.1])), (np.array([[1.5], [2.0]]), np.array([0.3]))]
    flat, unflatten = flatten(params)

    def loss(v):
        (W1, b1), (W2, b2) = unflatten(v)
        return anp.sum(anp.tanh(anp.dot(anp.tanh(anp.dot(anp.ones((1, 1)), W1) + b1), W2) + b2) ** 2)

    np.testing.assert_allclose(ref.grad(loss)(flat), autograd.grad(loss)(flat), rtol=1e-12)


def test_container_arguments_get_the_gradient_autograd_gives():
    params = {"w": np.array([0.5, -1.0]), "layers": [(np.array([2.0, 1.0]), 0.5)]}

    def loss(p):
        W, b = p["layers"][0]
        return anp.sum(anp.sin(p["w"] * W) + b * p["w"])

    expected, actual = autograd.grad(loss)(params), ref.grad(loss)(params)
    np.testing.assert_allclose(actual["w"], expected["w"], rtol=1e-12)
    np.testing.assert_allclose(actual["layers"][0][0], expected["layers"][0][0], rtol=1e-12)
    assert actual["layers"][0][1] == pytest.approx(expected["layers"][0][1], rel=1e-12)


def _textbook_steps(graph, seed):
    """The lecture's loop, each node's partial adjoints from ``rules.partial_adjoints`` and its step from
    ``record_step``: what ``gradient`` computes with its own rules' common case taken inline."""
    from adtrace.reference.order import reverse_topo_order
    from adtrace.reference.reverse import record_step
    from adtrace.reference.rules import partial_adjoints

    node_to_grad, steps = {graph.out: [seed]}, []
    for i in reverse_topo_order(graph.out):
        partials = node_to_grad.pop(i)
        v_i_bar = sum_partial_adjoints(partials)
        bars = partial_adjoints(i, v_i_bar) if i.parents else ()
        for v_k, bar in zip(i.parents, bars):
            node_to_grad.setdefault(v_k, []).append(bar)
        steps.append(record_step(i, partials, v_i_bar, bars))
    return steps


@pytest.mark.parametrize("f, x", [
    (lambda x: anp.sin(x) * x * 1.5 + anp.exp(-x), 0.3),  # own rules, one and two boxed arguments
    (lambda x: anp.sum(anp.tanh(x[1:]) * x[:-1]) + anp.max(x), np.linspace(-1, 1, 5)),  # indexing: borrowed rules
    (lambda x: anp.sum(anp.dot(x, x.T) ** 2), np.arange(6.0).reshape(2, 3)),
])
def test_gradient_makes_the_steps_of_the_textbook_loop(f, x):
    graph = trace_graph(f, x)
    seed = 1.0
    got = gradient(graph, seed)[1]
    want = _textbook_steps(trace_graph(f, x), seed)
    assert [(s.label, s.primitive, s.rule) for s in got] == [(s.label, s.primitive, s.rule) for s in want]
    assert {s.rule for s in got} >= {"own", "root"}
    for a, b in zip(got, want):
        assert [(c.position, c.argnum, c.parent) for c in a.contributions] == [
            (c.position, c.argnum, c.parent) for c in b.contributions]
        for u, v in [(a.v_i_bar, b.v_i_bar), *zip(a.partial_adjoints, b.partial_adjoints),
                     *((c.value, d.value) for c, d in zip(a.contributions, b.contributions))]:
            assert type(u) is type(v) and np.array_equal(u, v), (a.label, u, v)

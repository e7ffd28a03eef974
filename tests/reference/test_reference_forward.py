"""Forward mode: tangents pushed through the captured graph, node by node."""

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import adtrace.reference as ref


def test_worked_example_tangents_node_by_node():
    steps = ref.run_tangents(lambda x: x * x + anp.sin(x), 3.0, 1.0)
    assert [(s.label, s.rule) for s in steps] == [
        ("v0_root", "root"), ("v1_multiply", "own"), ("v2_sin", "own"), ("v3_add", "own")
    ]
    tangents = [float(s.tangent) for s in steps]
    assert tangents == [1.0, 6.0, np.cos(3.0), 6.0 + np.cos(3.0)]


def test_make_jvp_signature_and_value_like_autograd():
    f = lambda x, y: anp.exp(x) * anp.sum(y * x)
    x, y = np.array([0.5, 1.0]), np.array([2.0, -1.0])
    v = np.array([1.0, 0.5])
    value, tangent = ref.make_jvp(f, 1)(x, y)(v)
    ag_value, ag_tangent = autograd.make_jvp(f, 1)(x, y)(v)
    np.testing.assert_array_equal(value, ag_value)
    np.testing.assert_allclose(tangent, ag_tangent, rtol=1e-12)


def test_broadcasting_tangents_take_the_results_shape():
    A = np.ones((2, 3))
    _, tangent = ref.make_jvp(lambda r: A + r)(np.zeros(3))(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(tangent, [[1, 2, 3], [1, 2, 3]])
    _, tangent = ref.make_jvp(lambda s: A - s)(0.0)(2.0)
    np.testing.assert_array_equal(tangent, -2.0 * A)


def test_output_independent_of_input_has_zero_tangent():
    with pytest.warns(UserWarning, match="independent"):
        value, tangent = ref.make_jvp(lambda x: np.ones(2))(1.0)(1.0)
    np.testing.assert_array_equal(tangent, [0.0, 0.0])
    with pytest.warns(UserWarning):
        assert ref.run_tangents(lambda x: 1.0, 1.0, 1.0) == ()


def test_one_capture_many_tangents():
    graph = ref.trace_graph(lambda x: anp.sin(x) * x, np.array([0.2, 0.4]))
    t1 = ref.tangents(graph, np.array([1.0, 0.0]))[graph.out]
    t2 = ref.tangents(graph, np.array([0.0, 1.0]))[graph.out]
    expected = autograd.jacobian(lambda x: anp.sin(x) * x)(np.array([0.2, 0.4]))
    np.testing.assert_allclose(np.stack([t1, t2], axis=-1), expected)


def test_forward_over_reverse_gives_the_second_derivative():
    f = lambda x: anp.tanh(x) * x**3
    _, second = ref.make_jvp(ref.grad(f))(0.6)(1.0)
    assert second == pytest.approx(autograd.grad(autograd.grad(f))(0.6), rel=1e-12)


def test_borrowed_jvp_rule_is_used_and_tagged():
    steps = ref.run_tangents(lambda x: anp.max(x * 2.0), np.array([1.0, 4.0, 2.0]), np.array([1.0, 1.0, 1.0]))
    assert steps[-1].rule == "borrowed" and float(steps[-1].tangent) == 2.0

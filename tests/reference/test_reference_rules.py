"""The engine's rule table: own rules, borrowing autograd's, clear errors, counting."""

import re

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from autograd.core import SparseObject, vspace
from autograd.extend import primitive

import adtrace.reference as ref
from adtrace.reference import rules
from primitives import cube
from readme import readme

REQUIRED_OWN = [
    anp.add, anp.subtract, anp.multiply, anp.divide, anp.true_divide, anp.negative, anp.power,
    anp.sin, anp.cos, anp.tan, anp.tanh, anp.exp, anp.log, anp.sqrt, anp.abs, anp.absolute,
    anp.maximum, anp.dot, anp.matmul, anp.sum, anp.reshape, anp.transpose,
    autograd.numpy.numpy_wrapper._primitive_mean, autograd.numpy.numpy_boxes.ArrayBox.__getitem__,
]


@pytest.mark.parametrize("fun", REQUIRED_OWN, ids=lambda f: f.__name__)
def test_required_primitives_have_own_rules_in_both_modes(fun):
    assert fun in ref.primitive_vjps and fun in ref.primitive_jvps
    assert rules.vjp_source(fun) == rules.jvp_source(fun) == "own"


def own_rule_names(table):
    return {f.__name__.strip("_") for f in table}


def test_the_readme_lists_the_own_rules():
    """The README's list of the engine's own rules is the rule table, both ways."""
    text = " ".join(readme().split())
    (listed,) = re.findall(r"`matrix_rules.py`\) covers (.+?), with its own unbroadcast", text)
    names = re.split(r", | and ", re.sub(r" \(.*?\)", "", listed))
    assert len(names) == len(set(names)) and set(names) == own_rule_names(ref.primitive_vjps)


def test_every_own_vjp_rule_has_its_own_jvp_rule():
    """An own VJP without an own JVP would borrow autograd's in forward mode, unseen (the corpus test
    asks only that each own rule present be exercised)."""
    assert own_rule_names(ref.primitive_vjps) == own_rule_names(ref.primitive_jvps)
    assert set(ref.primitive_vjps) == set(ref.primitive_jvps)


def test_rule_table_is_a_dict_beside_its_defvjp():
    @primitive
    def double(x):
        return 2.0 * x

    try:
        ref.defvjp(double, lambda ans, x: lambda g: 2.0 * g)
        ref.defjvp(double, lambda g, ans, x: 2.0 * g)
        assert ref.grad(double)(3.0) == 2.0 and ref.make_jvp(double)(3.0)(1.0) == (6.0, 2.0)
        assert rules.vjp_source(double) == "own"
    finally:
        del ref.primitive_vjps[double], ref.primitive_jvps[double]


def test_engine_uses_its_own_rule_not_autograds(monkeypatch):
    """Change the engine's sin rule and only the engine's gradient changes."""
    monkeypatch.setitem(ref.primitive_vjps, anp.sin, {0: lambda ans, x: lambda g: g * 100.0})
    assert ref.grad(anp.sin)(0.3) == 100.0
    assert autograd.grad(anp.sin)(0.3) == np.cos(0.3)


def test_primitive_without_own_rule_borrows_autograds():
    run = ref.run_gradient(lambda x: cube(anp.sin(x)), 0.5)
    assert {s.label: s.rule for s in run.steps} == {"v2_cube": "borrowed", "v1_sin": "own", "v0_root": "root"}
    assert (run.own, run.borrowed) == (1, 1)
    assert float(run.adjoint) == pytest.approx(3 * np.sin(0.5) ** 2 * np.cos(0.5), rel=1e-14)


@primitive
def mystery(x):
    return x + 1.0


def test_primitive_without_any_rule_is_a_clear_error():
    message = "reference engine: no VJP rule for primitive 'mystery' \\(own or autograd's\\)"
    with pytest.raises(NotImplementedError, match=message):
        ref.grad(lambda x: mystery(x) * 2.0)(1.0)
    with pytest.raises(NotImplementedError, match="no JVP rule for primitive 'mystery'"):
        ref.make_jvp(mystery)(1.0)(1.0)


def test_own_rule_missing_an_argnum_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(ref.primitive_vjps, anp.multiply, {0: ref.primitive_vjps[anp.multiply][0]})
    with pytest.raises(NotImplementedError, match="'multiply' wrt argnum 1"):
        ref.grad(lambda x: 2.0 * x)(1.0)


def test_borrowed_generator_vjp_is_materialised():
    """einsum with three boxed operands: autograd's defvjp returns a generator."""
    x = np.array([1.0, 2.0, 3.0])
    run = ref.run_gradient(lambda x: anp.einsum("i,i,i->", x, x, x), x)
    (einsum, root) = run.steps
    assert einsum.rule == "borrowed" and len(einsum.contributions) == 3
    np.testing.assert_array_equal(run.adjoint, 3 * x**2)


def test_sparse_contributions_are_made_dense():
    vs = vspace(np.zeros(3))
    sparse = SparseObject(vs, lambda A: (A.__setitem__(1, 5.0), A)[1])
    np.testing.assert_array_equal(rules.densify(sparse), [0.0, 5.0, 0.0])
    dense = np.ones(2)
    assert rules.densify(dense) is dense


def test_tally_counts_own_and_borrowed_per_block():
    with ref.tally_rules() as outer:
        ref.grad(lambda x: cube(x) * anp.sin(x))(0.2)  # multiply, sin own; cube borrowed
        with ref.tally_rules() as inner:
            ref.make_jvp(anp.sin)(0.2)(1.0)
    assert (outer.own, outer.borrowed) == (3, 1)
    assert (inner.own, inner.borrowed) == (1, 0)
    assert outer.borrowed_share == pytest.approx(0.25)
    assert anp.sin in outer.own_vjps_used and anp.sin in outer.own_jvps_used
    assert ref.RuleTally().borrowed_share == 0.0


def test_where_condition_gets_a_zero_adjoint():
    f = lambda x: anp.where(x, x, 1.0) * 3.0  # x also sits in the condition position
    assert ref.grad(f)(2.0) == autograd.grad(f)(2.0) == 3.0
    assert ref.make_jvp(f)(2.0)(1.0)[1] == 3.0

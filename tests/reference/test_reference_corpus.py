"""The reference engine against autograd and finite differences on the whole corpus.

Every case of ``tests/corpus.py`` plus ``tests/reference_corpus.py``'s extras:
the reference result equals autograd's (rtol 1e-12; bit for bit where both engines
visit the graph in the same order), agrees with central finite differences, and
forward mode agrees with reverse mode by the dot-product test. Tuple and dict inputs are
differentiated along autograd's flattening of their vector space (``autograd.misc.flatten``).
"""

import re
import warnings

import numpy as np
import pytest
from autograd.core import vspace
from autograd.misc import flatten as vspace_flatten
from autograd.util import toposort

import adtrace.reference as ref
from corpus import CASES, bit_identical, flatten, run
from readme import readme, stated
from reference_corpus import ALL_CASES, EXTRA_CASES, numeric_result, run_reference

FIRST_ORDER_REVERSE = ("grad", "elementwise_grad", "jacobian")


def case_params():
    """A list, not a generator: pytest 9 deprecates parametrizing over an iterator."""
    return [pytest.param(case, id=case.name) for case in ALL_CASES]


def same_visit_order(case):
    """Whether the lecture's order and autograd's toposort agree on the case's graph."""
    graph = ref.trace_graph(case.fun, case.x)
    return [n.label for n in ref.reverse_topo_order(graph.out)] == [n.label for n in toposort(graph.out)]


def assert_all_close(actual, expected, **tolerances):
    a, e = flatten(actual), flatten(expected)
    assert len(a) == len(e)
    for x, y in zip(a, e):
        assert x.shape == y.shape
        np.testing.assert_allclose(x, y, **tolerances)


def test_corpus_is_large_enough():
    assert len(CASES) == 36
    assert len(ALL_CASES) == 62 and {"tuple_input", "dict_input"} <= {c.name for c in ALL_CASES}
    assert len({c.name for c in ALL_CASES}) == len(ALL_CASES)


def test_the_readme_states_how_many_cases_run():
    """"Tested on N cases": N is how many of these tests' cases run, not skipped."""
    run = [p for p in case_params() if not p.marks]
    assert stated(r"Tested on (\d+) cases of the test corpora") == len(run)


@pytest.mark.parametrize("case", case_params())
def test_equals_autograd(case):
    expected, actual = run(case), run_reference(case)
    assert_all_close(actual, expected, rtol=1e-12, atol=1e-300)
    if case.operator == "make_jvp" or (case.operator in FIRST_ORDER_REVERSE and same_visit_order(case)):
        assert bit_identical(actual, expected), "same partial adjoints in the same order: same bits"


@pytest.mark.parametrize("case", case_params())
def test_agrees_with_finite_differences(case):
    assert_all_close(run_reference(case), numeric_result(case), rtol=1e-5, atol=1e-6)


def differentiated_fun(case):
    """The function the case differentiates once more at the end (grad(f) for second order)."""
    return ref.grad(case.fun) if case.operator in ("grad_of_grad", "hessian") else case.fun


def random_like(value, rng):
    """A random vector of ``value``'s vector space (a container: of the same structure)."""
    if isinstance(value, (tuple, list, dict)):
        flat, unflatten = vspace_flatten(value)
        return unflatten(rng.standard_normal(flat.size))
    return rng.standard_normal(np.shape(value)) if np.ndim(value) else float(rng.standard_normal())


def inner(a, b):
    """``<a, b>`` of two vectors of one vector space (containers flattened as autograd does)."""
    return np.dot(vspace_flatten(a)[0], vspace_flatten(b)[0])


@pytest.mark.parametrize("case", case_params())
def test_forward_and_reverse_pass_the_dot_product_test(case):
    """<u, J v> (one forward pass) equals <J^T u, v> (one reverse pass)."""
    rng = np.random.default_rng(sum(map(ord, case.name)))
    fun = differentiated_fun(case)
    vjp, ans = ref.make_vjp(fun)(case.x)
    u, v = random_like(ans, rng), random_like(case.x, rng)
    if "custom" in case.tags:  # defvjp only: no JVP rule, here or in autograd
        with pytest.raises(NotImplementedError, match="reference engine: no JVP rule for primitive"):
            ref.make_jvp(fun)(case.x)(v)
        return
    _, Jv = ref.make_jvp(fun)(case.x)(v)
    JTu = vjp(u)
    assert vspace(Jv) == vspace(ans) and vspace(JTu) == vspace(case.x)
    np.testing.assert_allclose(inner(u, Jv), inner(JTu, v), rtol=1e-10, atol=1e-12)


def test_orders_differ_case_really_has_two_orders():
    case = next(c for c in EXTRA_CASES if c.name == "orders_differ")
    assert not same_visit_order(case)
    assert_all_close(run_reference(case), run(case), rtol=1e-12)


def exercise_corpus():
    """Every supported case with its operator, and forward mode on the function it
    differentiates (forward over reverse for second-order cases)."""
    for case in ALL_CASES:
        run_reference(case)
        if "custom" not in case.tags:
            ref.make_jvp(differentiated_fun(case))(case.x)(random_like(case.x, np.random.default_rng(0)))


def test_corpus_exercises_every_own_rule():
    with ref.tally_rules() as tally:
        exercise_corpus()
    name = lambda funs: sorted(getattr(f, "__name__", str(f)) for f in funs)
    assert name(set(ref.primitive_vjps) - tally.own_vjps_used) == []
    assert name(set(ref.primitive_jvps) - tally.own_jvps_used) == []


# Measured on this corpus (autograd 1.9.1): 25 of 786 visited nodes, 3.2%, borrow a rule: array
# construction (anp.array), max, einsum, the two custom primitives and the containers' indexing.
BORROWED_SHARE_BOUND = 0.05


def test_borrowed_share_on_corpus(record_property):
    with ref.tally_rules() as tally:
        exercise_corpus()
    share = tally.borrowed_share
    message = f"reference engine on the corpus: {tally.own} own, {tally.borrowed} borrowed nodes ({share:.1%} borrowed)"
    print(message)
    record_property("borrowed_share", share)
    warnings.warn(message, UserWarning)  # shows in the warnings summary without -s
    assert tally.own > 0 and tally.borrowed > 0
    assert share < BORROWED_SHARE_BOUND


def test_the_readme_states_the_borrowed_share():
    """"(N% borrowed on the test corpus)": N is the share this corpus measures, to its one decimal."""
    with ref.tally_rules() as tally:
        exercise_corpus()
    stated_share = re.findall(r"\((\d+\.\d)% borrowed on the test corpus\)", " ".join(readme().split()))
    assert stated_share == [f"{tally.borrowed_share:.1%}"[:-1]]

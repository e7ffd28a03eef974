"""Node-by-node alignment of autograd's running outgrads with the lecture's node_to_grad."""

from dataclasses import replace

import autograd.numpy as anp
import numpy as np
from autograd import grad

import adtrace
import adtrace.reference as ref
from adtrace.compare.align import (CLOSE, DIFFERS, EXACT, MISSING, NOT_COMPARED, align, compare, first_divergence,
                                   magnitude)
from adtrace.recording.values import ArraySummary
from user_vspace import Pair


def test_square_aligns_exactly():
    with adtrace.record() as rec:
        grad(lambda x: x * x)(3.0)
    rows = align(rec, 1, ref.run_gradient(lambda x: x * x, 3.0))
    root = rows[-1]
    assert (root.label, root.partial_adjoints, root.v_i_bar, root.popped) == ("v0_root", (3.0, 3.0), 6.0, 6.0)
    assert [r[1] if r else None for r in root.running] == [None, False, True]
    assert {r.status for r in rows} == {EXACT} and first_divergence(rows) is None


def test_fan_out_in_different_orders_still_agrees():
    f = lambda x: (lambda a, b: b * (a * b))(x * x, anp.sin(x))
    with adtrace.record() as rec:
        grad(f)(0.7)
    rows = align(rec, 1, ref.run_gradient(f, 0.7))
    assert all(r.status in (EXACT, CLOSE) for r in rows)


def test_compare_statuses():
    assert compare(np.array([1.0, 2.0]), np.array([1.0, 2.0]))[0] == EXACT
    assert compare(1.0, 1.0 + 1e-13)[0] == CLOSE
    status, difference = compare(1.0, 1.1)
    assert status == DIFFERS and abs(difference - 0.1) < 1e-12
    assert compare(np.zeros(2), np.zeros(3)) == (DIFFERS, None)
    assert compare(None, 1.0) == (DIFFERS, None)
    summary = ArraySummary((100,), "float64", 0.0, 99.0, 49.5)
    assert compare(summary, np.arange(100.0))[0] == CLOSE
    assert compare(summary, np.arange(100.0) * 2)[0] == DIFFERS
    assert compare(summary, np.arange(100.0).reshape(10, 10)) == (DIFFERS, None)  # same numbers, other shape
    assert compare(summary, np.arange(100.0).astype(np.float32)) == (DIFFERS, None)


def test_close_means_within_rtol_1e_9():
    """"close" is rounding-level agreement: a difference a rule could make is "differs"."""
    assert compare(1.0, 1.0 + 5e-10)[0] == CLOSE
    assert compare(1.0, 1.0005)[0] == DIFFERS and compare(1.0, 1.0 + 1e-8)[0] == DIFFERS
    assert compare(np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-7]))[0] == DIFFERS
    assert compare(np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-9]))[0] == CLOSE
    assert compare((1.0, {"w": 3.0}), (1.0, {"w": 3.0 + 3e-8}))[0] == DIFFERS
    summary = ArraySummary((3,), "float64", 0.0, 2.0, 1.0)
    assert compare(summary, np.array([0.0, 1.0, 2.0 + 1e-6]))[0] == DIFFERS
    # near zero, the atol is 1e-12 of the terms summed (the partial adjoints): no absolute floor
    assert compare(0.0, 1e-13, scale=1.0)[0] == CLOSE and compare(0.0, 1e-10, scale=1.0)[0] == DIFFERS
    assert compare(0.0, 1e-13)[0] == DIFFERS and compare(1e-300, 2e-300)[0] == DIFFERS
    assert compare(np.array([1e-300, 0.0]), np.array([2e-300, 0.0]))[0] == DIFFERS
    assert compare(1e-300, 1e-300 * (1 + 1e-10))[0] == CLOSE


def test_first_divergence_names_a_missing_node_too():
    f = lambda x: anp.sin(x) * x
    with adtrace.record() as rec:
        grad(f)(0.7)
    rows = align(rec, 1, ref.run_gradient(f, 0.7))
    assert first_divergence(rows) is None
    for i in range(len(rows)):
        for status in (MISSING, DIFFERS):
            changed = rows[:i] + [replace(rows[i], status=status)] + rows[i + 1:]
            assert first_divergence(changed) == rows[i].label
    later = rows[:1] + [replace(rows[1], status=CLOSE), replace(rows[2], status=MISSING)] + rows[3:]
    assert first_divergence(later) == rows[2].label


def test_reference_labels_follow_the_recorder_under_higher_order():
    from adtrace.compare.traced_call import trace_call

    call = trace_call(grad(lambda x: x * x * x), (2.0,))
    assert all(c.passed for c in call.checks)
    outer = [e.label for e in call.recording.events if e.kind in ("root", "node") and e.level == 0]
    assert list(call.reference.labels) == outer and {r.status for r in call.alignment} == {EXACT}


def test_containers_compare_leaf_by_leaf():
    params = [(np.array([[1.0, 2.0]]), np.array([0.5])), (np.array([3.0]), 4.0)]
    same = [(np.array([[1.0, 2.0]]), np.array([0.5])), (np.array([3.0]), 4.0)]
    assert compare(params, same) == (EXACT, 0.0)
    assert compare({"w": np.ones(2), "b": 1.0}, {"w": np.ones(2), "b": 1.0 + 1e-13})[0] == CLOSE
    assert compare(params, [(np.array([[1.0, 2.0]]), np.array([0.5])), (np.array([3.0]), 4.5)]) == (DIFFERS, None)
    assert compare((1.0, 2.0), (1.0, 2.0, 3.0)) == (DIFFERS, None)
    assert compare({"w": 1.0}, {"v": 1.0}) == (DIFFERS, None)


def test_a_users_vector_space_compares_by_value_not_identity():
    assert compare(Pair(1.0, 2.0), Pair(1.0, 2.0)) == (EXACT, 0.0)
    assert compare(Pair(1.0, 2.0), Pair(1.0, 2.0 + 1e-13))[0] == CLOSE
    assert compare(Pair(1.0, 2.0), Pair(1.0, 2.5)) == (DIFFERS, 0.5)


def test_a_users_vector_space_is_compared_relative_to_its_size():
    """rtol 1e-9 of the values' norm, at any magnitude: 1e-4 apart is close at 2e6, and 2e-12
    apart differs at 2e-6 (as arrays do)."""
    assert compare(Pair(1e6, 2e6), Pair(1e6, 2e6 + 1e-4))[0] == CLOSE
    assert compare(Pair(1e-6, 2e-6), Pair(1e-6, 2e-6 + 2e-12))[0] == DIFFERS
    assert compare(np.array([1e6, 2e6]), np.array([1e6, 2e6 + 1e-4]))[0] == CLOSE
    assert compare(np.array([1e-6, 2e-6]), np.array([1e-6, 2e-6 + 2e-12]))[0] == DIFFERS


def test_container_gradients_align_with_the_reference_engine():
    from adtrace.compare.traced_call import trace_call

    params = {"W": np.array([[0.5, -1.0], [2.0, 0.1]]), "b": (np.array([0.2, 0.3]), 0.7)}

    def loss(p):
        b, c = p["b"]
        return anp.sum(anp.tanh(anp.dot(p["W"], b)) * c + p["W"])

    call = trace_call(loss, (params,))
    assert {r.status for r in call.alignment} == {EXACT} and all(c.passed for c in call.checks)


def test_a_container_summary_is_compared_leaf_by_leaf():
    from adtrace.recording.autograd.capture import Keeper
    from adtrace.recording.values import resolve

    params = [(np.arange(6.0).reshape(2, 3), np.ones(3)), (np.ones((3, 2)), np.zeros(2))]
    kept = resolve(Keeper("auto", 4)(params))
    assert compare(kept, params)[0] == CLOSE
    changed = [(params[0][0], params[0][1]), (params[1][0] * 2, params[1][1])]
    assert compare(kept, changed)[0] == DIFFERS  # one leaf's statistics differ
    assert compare(kept, params[:1])[0] == DIFFERS  # another structure
    assert compare(kept, {"a": params})[0] == DIFFERS
    many = [np.full(2, float(i)) for i in range(80)]
    assert compare(resolve(Keeper("auto", 4)(many)), many)[0] == NOT_COMPARED  # 16 leaves past the limit


def test_real_scalars_compare_as_their_arrays_do():
    """The scalar fast path (a scalar program's every node) decides as numpy's array_equal and allclose."""
    values = [0.0, -0.0, 1.0, 1.0 + 1e-10, 1.0 + 1e-8, 1e-13, -1e-12, 3.5, 1e300, -1e308, np.inf, -np.inf, np.nan]
    for a in values:
        for b in values:
            for kinds in ((float, float), (np.float64, float), (float, np.float64)):
                fast = compare(kinds[0](a), kinds[1](b))
                with np.errstate(all="ignore"):
                    slow = compare(np.array([a]), np.array([b]))
                assert fast[0] == slow[0] and (fast[1] == slow[1] or np.isnan(fast[1]) and np.isnan(slow[1])), (a, b)


def test_a_scalar_against_an_array_differs_by_shape():
    """A real scalar is compared as a number only against another real scalar: against an array
    (even of one element) the shapes differ."""
    assert compare(3.0, np.array([3.0, 3.0])) == (DIFFERS, None)
    assert compare(np.float64(3.0), np.array([3.0])) == (DIFFERS, None)
    assert compare(np.array([3.0]), 3.0) == (DIFFERS, None)
    assert compare(3.0, np.float64(3.0)) == (EXACT, 0.0)


def test_values_numpy_cannot_subtract_compare_by_equality():
    """Boolean arrays have no subtraction in numpy: they are compared by value."""
    assert compare(np.array([True, False]), np.array([True, False])) == (EXACT, 0.0)
    assert compare(np.array([True, False]), np.array([True, True]))[0] == DIFFERS


def test_a_container_summary_names_its_leaves_and_keeps_other_leaves_by_type():
    """A summarized container's leaves are matched by count and path (another nesting or another
    key differs), and a leaf that is not a number is kept by its type only: the same type is not
    compared, another type differs."""
    from adtrace.recording.autograd.capture import Keeper
    from adtrace.recording.values import resolve

    params = {"a": np.ones(3), "b": np.zeros(3), "activation": "relu"}
    kept = resolve(Keeper("auto", 4)(params))
    assert compare(kept, params)[0] == NOT_COMPARED
    assert compare(kept, {"a": np.ones(3), "b": (np.zeros(3), 0.0), "activation": "relu"}) == (DIFFERS, None)
    assert compare(kept, {"a": np.ones(3), "c": np.zeros(3), "activation": "relu"}) == (DIFFERS, None)
    assert compare(kept, {"a": np.ones(3), "b": np.zeros(3), "activation": None}) == (DIFFERS, None)


def test_values_kept_as_summaries_are_said_to_be_compared_by_statistics():
    """Under capture auto, arrays above the inline size are kept as summaries: the engines' check
    says how many nodes it compared by summary statistics only; under capture full, none."""
    from adtrace.compare.traced_call import trace_call

    def f(x):
        return anp.sum(anp.sin(x) * x)

    def engines_agree(call):
        return next(c for c in call.checks if c.name == "reference engine vs autograd, per node")

    x = np.linspace(0.0, 1.0, 5000)
    auto = engines_agree(trace_call(f, (x,)))
    assert auto.passed and "3 compared by summary statistics only" in auto.detail, auto
    full = engines_agree(trace_call(f, (x,), capture="full"))
    assert full.passed and "summary statistics" not in full.detail, full


def test_a_scalar_node_s_status_is_compare_s_with_its_partial_adjoint_s_scale():
    """A scalar program's rows (compared inline, without ``compare``'s calls) say what ``compare`` says, for sums
    that agree, agree to rounding, differ, or are not finite."""
    f = lambda x: anp.sin(anp.cos(anp.sin(anp.cos(anp.sin(x) * 1.5) * 2.0) * 0.5) * 3.0) * 1.25
    with adtrace.record() as rec:
        grad(f)(0.3)
    run = ref.run_gradient(f, 0.3)
    bent = [1.0, 1.0 + 3e-13, 1.1, float("nan"), float("inf"), 1.0 + 5e-9, -1.0, 1.0, 1.0 + 1e-6, 0.0, 1.0]
    steps = tuple(replace(s, v_i_bar=s.v_i_bar * k) for s, k in zip(run.steps, bent))
    rows = align(rec, 1, replace(run, steps=steps))
    assert len(rows) == len(steps) == len(bent)
    assert {r.status for r in rows} == {EXACT, CLOSE, DIFFERS}
    for r in rows:
        want = compare(r.popped, r.v_i_bar, magnitude(r.partial_adjoints[0]))
        assert (r.status, r.difference) == want or (r.difference != r.difference and want[1] != want[1]), r

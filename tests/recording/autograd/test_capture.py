"""Capture ``auto`` of an accumulated parameter list: summarized again only where it changed."""

import autograd.numpy as anp
import numpy as np
import pytest
from autograd import grad
from autograd.misc import flatten

import adtrace
from adtrace.recording import values
from adtrace.recording.autograd import backward, capture, nodes
from adtrace.recording.values import ArraySummary, ContainerSummary, plain, resolve

RNG = np.random.default_rng(0)
WEIGHTS = [RNG.standard_normal((8, 8)) for _ in range(6)]
PAIRS = [(RNG.standard_normal((8, 8)), RNG.standard_normal(8)) for _ in range(4)]
INPUTS = RNG.standard_normal((3, 8))


def mlp(ws):
    h = INPUTS
    for w in ws:
        h = anp.tanh(anp.dot(h, w))
    return anp.sum(h * h)


def mlp_pairs(params):
    h = INPUTS
    for w, b in params:
        h = anp.tanh(anp.dot(h, w) + b)
    return anp.sum(h * h)


def reads_twice_and_from_the_end(ws):
    return anp.sum(anp.dot(ws[0], ws[-1]) * ws[0]) + anp.sum(ws[2] * ws[-4])


def slices(ws):
    return anp.sum(ws[1:3][0] * ws[0])


def dict_keys_of_one_path(ps):
    """Two dict keys that leaf_paths names alike (``[0][<tuple>]``): their statistics must not swap."""
    return anp.sum(ps[1] ** 2) + anp.sum(ps[0][("W", 0)] * ps[0][("W", 1)])


TWIN_KEYS = [{("W", 0): RNG.standard_normal(4), ("W", 1): 10 + RNG.standard_normal(4)}, RNG.standard_normal(4)]

PROGRAMS = [
    ("two leaves of one path", grad(dict_keys_of_one_path), TWIN_KEYS),
    ("list of arrays", grad(mlp), WEIGHTS),
    ("tuple of arrays", grad(mlp), tuple(WEIGHTS)),
    ("list of (W, b)", grad(mlp_pairs), PAIRS),
    ("same element twice, negative index", grad(reads_twice_and_from_the_end), WEIGHTS),
    ("a slice", grad(slices), WEIGHTS),
    ("grad of grad", grad(lambda ws: anp.sum(grad(mlp)(ws)[0])), WEIGHTS),
]


def recorded(run, args, inline_size):
    with adtrace.record(capture="auto", inline_size=inline_size) as rec:
        result = run(args)
    return rec, result


@pytest.mark.parametrize("inline_size", [2, 64])
@pytest.mark.parametrize("name, run, args", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_events_are_those_of_a_whole_summary(name, run, args, inline_size, monkeypatch):
    """Every event is the same as when each accumulated list is summarized whole."""
    fast, fast_result = recorded(run, args, inline_size)
    assert fast.failure is None
    monkeypatch.setattr(backward, "summary_after_sparse_add", lambda *a: None)
    whole, whole_result = recorded(run, args, inline_size)
    assert [repr(e) for e in fast.events] == [repr(e) for e in whole.events]
    assert np.array_equal(flatten(fast_result)[0], flatten(whole_result)[0])


def test_the_list_is_summarized_again_only_where_it_changed(monkeypatch):
    calls = []
    summary = capture.stored_summary
    monkeypatch.setattr(capture, "stored_summary", lambda a: calls.append(a.shape) or summary(a))
    rec, g = recorded(grad(mlp), WEIGHTS, 2)
    into_list = [e for e in rec.of_kind("add_outgrads") if e.parent == "v0_root"]
    assert len(into_list) == 6
    last = plain(into_list[-1].result[0])
    assert isinstance(last, ContainerSummary) and [p for p, _ in last.leaves] == [f"[{i}]" for i in range(6)]
    for (path, leaf), gradient in zip(last.leaves, g):
        assert (leaf.min, leaf.max) == (gradient.min(), gradient.max()) and np.isclose(leaf.mean, gradient.mean())
    # against summarizing the whole list: each of the 5 later additions summarizes 1 leaf, not 6
    fast = calls.count((8, 8))
    calls.clear()
    monkeypatch.setattr(backward, "summary_after_sparse_add", lambda *a: None)
    recorded(grad(mlp), WEIGHTS, 2)
    assert fast == calls.count((8, 8)) - 5 * (6 - 1)


def test_an_array_seeding_two_open_passes_stays_protected_until_both_end():
    """Under capture full a seed the user owns is kept as a copy while a pass it seeds runs; an
    array seeding two passes at once (an outer and a nested one) stays so after the inner one ends."""
    keep = capture.Keeper("full")
    seed = np.ones(3)
    assert keep(seed) is seed  # not a seed: kept by reference
    keep.protect(seed)
    keep.protect(seed)
    keep.unprotect(seed)  # the nested pass ends
    kept = keep(seed)
    assert kept is not seed and np.array_equal(kept, seed)
    keep.unprotect(seed)  # the outer one ends
    assert keep(seed) is seed


def test_only_scalars_and_scalars_boxed_by_outer_traces_are_immutable():
    from autograd.numpy.numpy_boxes import ArrayBox

    assert capture.is_immutable(3.0) is True and capture.is_immutable(ArrayBox(2.5, 1, None)) is True
    assert capture.is_immutable(np.zeros(2)) is False and capture.is_immutable(ArrayBox(np.zeros(2), 1, None)) is False


MANY = [RNG.standard_normal((2, 2)) / 2 for _ in range(capture.MAX_LEAVES + 6)]  # more leaves than a summary keeps


def test_a_list_of_arrays_is_summarized_as_the_leaf_walk_summarizes_it(monkeypatch):
    """A flat list of arrays (a model's parameters) skips the walk of its leaves: the same leaves,
    named ``[i]``, the first ``MAX_LEAVES`` of them, the rest counted; every event as with the walk."""
    kept = resolve(capture.Keeper("auto")(MANY))
    assert isinstance(kept, ContainerSummary) and (kept.length, kept.more) == (len(MANY), 6)
    assert [path for path, _ in kept.leaves] == [f"[{i}]" for i in range(capture.MAX_LEAVES)]
    assert kept.leaves[5][1].max == MANY[5].max()
    def loss(ws):  # each parameter read once: one sparse addition into the list's gradient each
        return sum(anp.sum(anp.tanh(w) * w) for w in ws)

    fast, fast_result = recorded(grad(loss), MANY, 2)
    monkeypatch.setattr(capture, "_flat_leaves", lambda value, reuse: None)
    monkeypatch.setattr(backward, "summary_after_sparse_add", lambda *a: None)
    assert resolve(capture.Keeper("auto")(MANY)) == kept
    walked, walked_result = recorded(grad(loss), MANY, 2)
    assert [repr(e) for e in fast.events] == [repr(e) for e in walked.events]
    assert np.array_equal(flatten(fast_result)[0], flatten(walked_result)[0])


def test_a_value_twice_in_one_local_vjp_output_is_summarized_once(monkeypatch):
    """``y + y`` passes its g to both arguments: one summary for both (nothing runs between them)."""
    calls = []
    summary = capture.stored_summary
    monkeypatch.setattr(values, "_twin", None)  # (the twin is called directly, own_summary without it: counted)
    monkeypatch.setattr(capture, "stored_summary", lambda a: calls.append(a.shape) or summary(a))
    for module in (capture, nodes, backward):  # (the hot callbacks summarize arrays themselves)
        monkeypatch.setattr(module, "own_summary", lambda a: calls.append(a.shape) or summary(a))
    with adtrace.record(capture="auto") as rec:
        g = grad(lambda x: anp.sum((lambda y: y + y)(anp.sin(x))))(np.linspace(0, 1, 100))
    assert np.allclose(g, 2 * np.cos(np.linspace(0, 1, 100)))
    (add,) = [e for e in rec.of_kind("vjp") if e.node.endswith("_add")]
    first, second = add.ingrads
    assert isinstance(first, ArraySummary) and first == second and first.shape == (100,)
    # the values of sin and add, the trace's input; then the sum's ones, the add's g (once), the sum
    # of its two contributions, sin's gradient
    assert calls == [(100,)] * 7

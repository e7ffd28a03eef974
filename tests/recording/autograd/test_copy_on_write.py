"""Copy-on-write: recorded values stay true while autograd and the user write in place."""

import json
import warnings

import autograd.numpy as anp
import numpy as np
import pytest
from autograd import grad, hessian, make_jvp, make_vjp
from autograd.extend import defvjp, primitive

import adtrace
from adtrace.recording.autograd.capture import array_leaves
from adtrace.recording.autograd.copy_on_write import CopyOnWrite
from adtrace.recording.values import History, Sparse, plain, kept_arrays, resolve
from adtrace.report.export import events_json
import compiled_twins
from corpus import CASES, run

# every test here runs once with the compiled wrappers (when built: under capture full they keep the common values
# and note what is held by reference themselves), once with the pure-Python callbacks
way = compiled_twins.fixture("wrappers")
pytestmark = pytest.mark.usefixtures("way")


def record_grad(f, x, **options):
    with adtrace.record(**options) as rec:
        result = grad(f)(x)
    return rec, result


@pytest.mark.parametrize("capture", ["auto", "full"])
def test_aliasing_trap_history_stays_true(capture):
    rec, g = record_grad(lambda x: anp.sum(x * x + x * x + x * x), np.array([1.0, 2.0]), capture=capture)
    to_root = [e for e in rec.of_kind("add_outgrads") if e.parent == "v0_root"]
    assert [r.result[0].tolist() for r in to_root] == [[1, 2], [2, 4], [3, 6], [4, 8], [5, 10], [6, 12]]
    assert [r.result[1] for r in to_root] == [False, True, True, True, True, True]
    assert [r.previous[0].tolist() for r in to_root[1:]] == [[1, 2], [2, 4], [3, 6], [4, 8], [5, 10]]
    assert g.tolist() == [6, 12]


@pytest.mark.parametrize("inner", ["auto", "full"])
@pytest.mark.parametrize("outer", ["structure", "auto", "full"])
def test_aliasing_trap_history_stays_true_in_nested_recordings(outer, inner):
    """Two recordings at once (the fan-out path of the add_outgrads wrapper): each that keeps
    values keeps ``previous`` as it was before autograd wrote into it in place."""
    f = lambda x: anp.sum(x * x + x * x + x * x)
    with adtrace.record(capture=outer) as first:
        with adtrace.record(capture=inner) as second:
            g = grad(f)(np.array([1.0, 2.0]))
    assert g.tolist() == [6, 12]
    for rec in (first, second) if outer != "structure" else (second,):
        to_root = [e for e in rec.of_kind("add_outgrads") if e.parent == "v0_root"]
        assert [plain(r.result[0]).tolist() for r in to_root] == [[1, 2], [2, 4], [3, 6], [4, 8], [5, 10], [6, 12]]
        assert [plain(r.previous[0]).tolist() for r in to_root[1:]] == [[1, 2], [2, 4], [3, 6], [4, 8], [5, 10]]
        assert [r.result[1] for r in to_root] == [False, True, True, True, True, True]


def test_gradient_changed_by_the_user_leaves_the_recording_true():
    rec, g = record_grad(lambda x: anp.sum(x * x + x * x + x * x), np.array([1.0, 2.0]))
    g *= 0  # the user owns the returned array
    assert rec.gradient(1).tolist() == [6, 12]
    assert rec.of_kind("add_outgrads")[-1].result[0].tolist() == [6, 12]
    assert rec.of_kind("vjp")[-1].outgrad.tolist() == [6, 12]


@pytest.mark.parametrize("capture", ["auto", "full"])
def test_input_changed_by_the_user_leaves_views_true(capture):
    """reshape's value is a view of the user's input (held by the user: full copies it, as it does not
    a view whose base nothing else holds)."""
    x = np.array([1.0, 2.0, 3.0, 4.0])
    rec, _ = record_grad(lambda v: anp.sum(anp.reshape(v, (2, 2)) * 2.0), x, capture=capture)
    x[:] = -1.0
    reshaped = next(e for e in rec.of_kind("node") if e.primitive == "reshape")
    assert reshaped.value.tolist() == [[1, 2], [3, 4]]
    assert rec.of_kind("trace")[0].input.tolist() == [1, 2, 3, 4]


def test_higher_order_accumulators_recorded_at_creation():
    f = lambda x: anp.sum(x * x + x * x + x * x)
    with adtrace.record() as rec:
        h = grad(lambda x: anp.sum(grad(f)(x)))(np.array([1.0, 2.0]))
    assert h.tolist() == [6, 6]
    accumulated = [e.value.tolist() for e in rec.of_kind("node") if e.primitive in ("VSpace.add", "VSpace.mut_add")]
    assert accumulated == [[2, 4], [3, 6], [4, 8], [5, 10], [6, 12]]


# -------------------- the accumulation oracle (independent of how values were kept) --------------------


def _dense(v):
    v = plain(v)
    if isinstance(v, (list, tuple)):
        return [_dense(x) for x in v]
    if isinstance(v, dict):
        return {k: _dense(x) for k, x in sorted(v.items())}
    return np.asarray(v)


def _close(a, b):
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    return np.allclose(a, b, rtol=1e-12, atol=1e-12)


def _zeros_like(a):
    if isinstance(a, list):
        return [_zeros_like(x) for x in a]
    if isinstance(a, dict):
        return {k: _zeros_like(v) for k, v in a.items()}
    return np.zeros_like(a)


def _add(a, b):
    if isinstance(a, list):
        return [_add(x, y) for x, y in zip(a, b)]
    if isinstance(a, dict):
        return {k: _add(a[k], b[k]) for k in a}
    return a + b


def assert_accumulation_consistent(rec):
    """Every recorded add_outgrads result is previous + contribution; every accumulator node of an
    inner backward pass holds the sum of its parents' recorded values; the nodes table is the
    events' own."""
    for e in rec.of_kind("add_outgrads"):
        result = _dense(e.result[0])
        if isinstance(e.contribution, Sparse) and e.contribution.dense is None:  # x[i] into a container
            expected = _zeros_like(result) if e.previous is None else _dense(e.previous[0])
            key = e.contribution.index if isinstance(expected, dict) else int(e.contribution.index)
            key = key.strip("'") if isinstance(key, str) else key
            expected[key] = expected[key] + _dense(e.contribution.value)
        else:
            contribution = _dense(e.contribution)
            expected = contribution if e.previous is None else _add(_dense(e.previous[0]), contribution)
        assert _close(result, expected), e
    values = {e.label: e.value for e in rec.of_kind("node")}
    for e in rec.of_kind("node"):
        if e.primitive in ("VSpace.add", "VSpace.mut_add") and all(p in values for p in e.parents):
            parents = [_dense(values[p]) for p in e.parents]
            assert _close(_dense(e.value), parents[0] + parents[1] if len(parents) == 2 else parents[0]), e
    for label, event in rec.nodes.items():
        assert any(e is event for e in rec.events), f"nodes[{label}] is not the recorded event"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_accumulation_oracle_on_the_corpus(case):
    with adtrace.record(capture="full") as rec:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            run(case)
    assert_accumulation_consistent(rec)


@pytest.mark.parametrize("f", [
    lambda x: anp.sum(x * x * x),
    lambda x: x[1] ** 2 + anp.sum(anp.sin(x)),  # dense first, then sparse: vs.mut_add(None, prev)
    lambda x: x[1] * anp.sum(x * 2.0),
    lambda x: anp.sum(x * x * x) + x[2] * x[0],
], ids=["cubic", "dense_then_sparse", "sparse_then_dense", "mixed"])
def test_accumulation_oracle_under_higher_order(f):
    outer = lambda x: anp.sum(grad(f)(x) * np.array([1.0, 10.0, 100.0]))
    x = np.array([1.0, 2.0, 3.0])
    with adtrace.record(capture="full") as rec:
        r = grad(outer)(x)
        h = hessian(f)(x)
    assert np.array_equal(r, grad(outer)(x)) and np.array_equal(h, hessian(f)(x))
    assert_accumulation_consistent(rec)


# -------------------- values the user owns --------------------


def test_seed_and_arguments_changed_by_the_user_leave_the_recording_true():
    x = np.array([1.0, 2.0, 3.0])
    seed = np.ones(3)
    with adtrace.record() as rec:
        vjp, _ = make_vjp(lambda v: anp.sin(v) * 2.0)(x)
        vjp(seed)
        grad(lambda v: anp.sum(anp.atleast_1d(v) * 2.0))(x)  # atleast_1d returns its argument
    seed[:] = 7.0
    x += 100.0
    assert rec.of_kind("backward_start")[0].seed.tolist() == [1, 1, 1]
    assert next(e for e in rec.of_kind("vjp")).outgrad.tolist() == [1, 1, 1]
    assert next(e for e in rec.of_kind("node") if e.primitive == "atleast_1d").value.tolist() == [1, 2, 3]


def test_seed_passed_through_by_the_end_node_and_changed_by_the_user():
    """The end node (an add) returns the seed itself as its ingrads: they are the seed's copy too."""
    with adtrace.record(capture="full") as rec:
        vjp, _ = make_vjp(lambda x: (x + 1.0) * 2.0 + x)(np.array([0.5, 1.5]))
        seed = np.ones(2)
        vjp(seed)
        seed += 5.0
    end = next(e for e in rec.of_kind("vjp") if e.node == "v3_add")
    assert end.outgrad.tolist() == [1, 1] and [g.tolist() for g in end.ingrads] == [[1, 1], [1, 1]]


def test_a_seed_added_into_an_accumulator_in_place_and_changed_by_the_user_after_its_pass():
    """add's VJP hands the seed on to both parents: under full it is a step of an accumulator's History (added in
    place), made when the pass hands the seed back, before the user changes it; forward mode's tangent seed
    likewise (a rule whose JVPs hand it on, summed in place)."""
    from autograd.extend import defjvp

    @primitive
    def add4(a, b, c, d):
        return a + b + c + d

    defjvp(add4, *[lambda g, ans, *args: g] * 4)
    runs = {}
    for capture in ("full", "auto"):
        seed, tangent = np.full(3, 1.0), np.ones(3)
        with adtrace.record(capture=capture, inline_size=10 ** 6) as rec:
            vjp, _ = make_vjp(lambda x: x + x + x + x + x)(np.ones(3))
            vjp(seed)
            make_jvp(lambda x: add4(x, x, x, x))(np.ones(3))(tangent)
        seed += 1000.0
        tangent += 1000.0
        runs[capture] = json.loads(events_json(rec))["events"]
    assert runs["full"] == runs["auto"]
    assert [plain(e.result[0])[0] for e in rec.of_kind("add_outgrads") if e.result[1]] == [2, 3, 4, 5, 2, 3, 4]


def test_a_failing_recorder_keeps_what_it_recorded_true(monkeypatch):
    from adtrace.recording.autograd.recorder import Recorder
    from adtrace.recording.fanout import guarded

    original, calls = Recorder.on_toposort, []  # (its guard written out: fanout.guards_itself)

    def fails_on_fourth(self, node):
        calls.append(node)
        if len(calls) == 4:
            raise RuntimeError("bug")
        return original(self, node)

    monkeypatch.setattr(Recorder, "on_toposort", guarded(fails_on_fourth))
    with pytest.warns(adtrace.RecorderWarning):
        rec, g = record_grad(lambda x: anp.sum(x * x + x * x + x * x), np.array([1.0, 2.0]))
    assert g.tolist() == [6, 12]
    to_root = [e for e in rec.of_kind("add_outgrads") if e.parent == "v0_root"]
    assert [e.result[0].tolist() for e in to_root] == [[1, 2], [2, 4]][:len(to_root)]


def test_full_capture_of_a_parameter_list_keeps_linear_memory():
    """x[i] into a list writes one element: only that element is copied, not the whole list."""
    k = 30
    weights = [np.full((20, 20), 0.01 * (i + 1)) for i in range(k)]

    def loss(ws):
        h = np.ones(20)
        for w in ws:
            h = anp.tanh(anp.dot(w, h))
        return anp.sum(h)

    with adtrace.record(capture="full") as rec:
        g = grad(loss)(weights)
    kept = {id(a): a.nbytes for e in rec.events for a in kept_arrays(e)}
    assert sum(kept.values()) < 12 * k * weights[0].nbytes  # quadratic would be about k times more
    assert_accumulation_consistent(rec)
    assert len(g) == k



def test_a_parameter_list_read_during_its_pass_stays_true():
    """x[i] into a list keeps the list's other elements through their Versions; once the events are read
    (every Version frozen) they are shared again, and the additions after the read still show each state."""
    weights = [np.full(3, i + 1.0) for i in range(4)]
    seen = []

    def loss(ws):
        h = ws[0] * ws[1]  # ws[1] read twice: its element written into in place
        for i in range(1, len(ws)):
            h = h * (_read(seen, ws[i]) if i == 2 else ws[i])  # the events read between additions into the list
        return anp.sum(h)

    with adtrace.record(capture="full") as rec:
        seen.append(rec)
        grad(loss)(weights)
    assert len([e for e in rec.of_kind("add_outgrads") if isinstance(e.contribution, Sparse)]) >= 4
    assert_accumulation_consistent(rec)


@primitive
def _read(recordings, x):
    return x


defvjp(_read, None, lambda ans, recordings, x: lambda g: (recordings[0].events, g)[1])


def test_events_read_during_the_recording_stay_true():
    f = lambda x: anp.sum(x * x + x * x + x * x)
    with adtrace.record() as rec:
        grad(f)(np.array([1.0, 2.0]))
        early = [e.result[0].tolist() for e in rec.of_kind("add_outgrads") if e.parent == "v0_root"]
        grad(f)(np.array([1.0, 2.0]))  # autograd goes on accumulating after the read
    to_root = [e.result[0].tolist() for e in rec.of_kind("add_outgrads") if e.parent in ("v0_root",)]
    assert early == [[1, 2], [2, 4], [3, 6], [4, 8], [5, 10], [6, 12]] == to_root[:6]


# -------------------- values handed to the user: the events holding them keep copies --------------------


def _frozen(rec):
    """Every value of every event, copied: to compare a recording before and after the user writes."""
    return [[np.array(a, copy=True) for a in kept_arrays(e)] for e in rec.events]


def _same(before, after):
    return all(len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b)) for a, b in zip(before, after))


@pytest.mark.parametrize("capture", ["auto", "full"])
def test_gradient_passed_through_a_chain_and_changed_by_the_user(capture):
    """add's VJP returns g itself: the returned array is the outgrad and ingrad of every add."""
    with adtrace.record(capture=capture) as rec:
        r = grad(lambda x: anp.sum((x + 1.0) + 2.0))(np.array([1.0, 2.0]))
        expected = _frozen(rec)
        r += 1000.0
    assert _same(expected, _frozen(rec))
    assert all(np.array_equal(e.outgrad, [1, 1]) for e in rec.of_kind("vjp") if e.node != "v3_sum")


@pytest.mark.parametrize("capture", ["auto", "full"])
def test_end_value_of_make_vjp_changed_by_the_user(capture):
    with adtrace.record(capture=capture) as rec:
        _, value = make_vjp(lambda x: anp.sin(x) * 2.0)(np.array([1.0, 2.0]))
        expected = _frozen(rec)
        value += 100.0
    assert _same(expected, _frozen(rec))
    assert np.allclose(rec.nodes["v2_multiply"].value, 2 * np.sin([1.0, 2.0]))


@pytest.mark.parametrize("capture", ["auto", "full"])
def test_value_and_tangent_of_make_jvp_changed_by_the_user(capture):
    """The tangent passes through add's JVP unchanged: two nodes hold the array make_jvp returns."""
    with adtrace.record(capture=capture) as rec:
        value, tangent = make_jvp(lambda x: anp.sin(x) * 2.0 + 1.0)(np.array([1.0, 2.0]))(np.array([1.0, 1.0]))
        expected = _frozen(rec)
        value += 100.0
        tangent += 100.0
    assert _same(expected, _frozen(rec))
    nodes = rec.of_kind("jvp_node")
    assert nodes[-1].tangent is not tangent and np.allclose(nodes[-1].tangent, 2 * np.cos([1.0, 2.0]))


@pytest.mark.parametrize("capture", ["auto", "full"])
def test_views_handed_to_the_user_leave_their_bases_true(capture):
    """reshape's and transpose's VJPs return views of a cotangent, a slice is a view of a value:
    the user writes through them into arrays the events hold."""
    x, c = np.array([1.0, 2.0, 3.0]), np.array([[1.0], [2.0], [3.0]])
    with adtrace.record(capture=capture) as rec:
        g = grad(lambda x: anp.sum(anp.reshape(x, (3, 1)) * c))(x)
        _, v = make_vjp(lambda x: (x * 2.0)[1:])(x)
        w = grad(lambda m: anp.sum(anp.transpose(m) * np.arange(6.0).reshape(3, 2)))(np.ones((2, 3)))
        expected = _frozen(rec)
        g += 100.0
        v += 100.0
        w += 100.0
    assert g.base is not None and v.base is not None and w.base is not None
    assert _same(expected, _frozen(rec))


def test_forward_over_reverse_accumulators_are_recorded_at_creation():
    """make_jvp(grad(f)): the inner pass's VSpace.add / mut_add are JVP nodes, and the next mut_add
    writes into the array the VSpace.add node made."""
    x = np.array([1.0, 2.0, 3.0])
    with adtrace.record(capture="full") as rec:
        value, _ = make_jvp(grad(lambda x: anp.sum(x * x + x)))(x)(np.ones(3))
        expected = _frozen(rec)
        value += 100.0
    accumulators = [e for e in rec.of_kind("jvp_node") if e.primitive.startswith("VSpace")]
    assert [e.value.tolist() for e in accumulators] == [[2, 3, 4], [3, 5, 7]]
    assert _same(expected, _frozen(rec))


def test_container_end_values_handed_to_the_user():
    from autograd.builtins import list as alist, tuple as atuple
    from autograd.differential_operators import grad_and_aux

    x = np.array([1.0, 2.0, 3.0])
    with adtrace.record() as rec:
        _, (s, c) = make_vjp(lambda x: atuple((anp.sin(x), anp.cos(x))))(x)
        (e, d), _ = make_jvp(lambda x: alist([anp.exp(x), x * 2.0]))(x)(np.ones(3))
        _, aux = grad_and_aux(lambda x: (anp.sum(x * x), x * 3.0))(x)
        expected = _frozen(rec)
        for array in (s, c, e, d, aux):
            array[:] = -1.0
    assert _same(expected, _frozen(rec))


def test_container_inputs_and_seeds_and_a_passed_through_tangent_seed():
    from autograd.builtins import list as alist

    u, w = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    t1, t2, s1, s2, seed = np.ones(2), np.ones(2), np.ones(2), np.ones(2), np.ones(3)
    with adtrace.record() as rec:
        grad(lambda t: anp.sum(t[0] * t[1]))((u, w))  # input tuple
        make_jvp(lambda t: t[0] * t[1])((np.ones(2), np.ones(2)))((t1, t2))  # tangent tuple
        vjp, _ = make_vjp(lambda t: alist(t))([np.ones(2), np.ones(2)])
        vjp([s1, s2])  # a seed list, its parts passed through
        make_jvp(lambda x: (x + 1.0) * 2.0)(np.zeros(3))(seed)  # add's JVP passes the seed through
        expected = _frozen(rec)
    for array in (u, w, t1, t2, s1, s2, seed):
        array += 100.0
    assert _same(expected, _frozen(rec))


@pytest.mark.parametrize("case", [c for c in CASES if not isinstance(c.x, (float, int))], ids=lambda c: c.name)
def test_auto_holds_copies_only(case):
    """Under auto every array an event holds is the recorder's own: no input, result or live
    accumulator is shared, so nothing needs copy-on-write (and nothing is noted for it)."""
    session = adtrace.record()  # the default capture, auto
    with session as rec:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = run(case)
        versions_live = session._recorder.copy_on_write.live  # before close() freezes them
    kept = [a for event in rec.events for a in kept_arrays(event)]
    assert kept, "the case records no exact array"
    assert not any(np.shares_memory(a, b) for a in kept for b in array_leaves((case.x, result)))
    assert not versions_live



def test_a_rule_writing_into_its_cotangent_is_recorded_as_it_ran():
    """A VJP that clips g in place and returns it: under auto its ingrad is what it returned, its
    outgrad what it received (so a per-node check points at this rule, not at its neighbours)."""
    from autograd.extend import defvjp, primitive

    @primitive
    def clip_grad(x):
        return x

    def clip_vjp(ans, x):
        def vjp(g):
            np.clip(g, -1.0, 1.0, out=g)
            return g
        return vjp

    defvjp(clip_grad, clip_vjp)
    with adtrace.record() as rec:
        grad(lambda x: anp.sum(clip_grad(x * 1.0) * 5.0))(np.array([1.0, 2.0]))
    vjps = {e.node: e for e in rec.of_kind("vjp")}
    clip = next(e for label, e in vjps.items() if label.endswith("clip_grad"))
    assert np.array_equal(clip.outgrad, [5, 5]) and np.array_equal(clip.ingrads[0], [1, 1])
    times_five = next(e for label, e in vjps.items() if label.startswith("v3_"))
    assert np.array_equal(times_five.ingrads[0], [5, 5])  # not the clipped array it became later


def test_full_copies_a_container_node_value_holding_the_input():
    from autograd.builtins import list as alist

    x = np.array([1.0, 2.0])
    with adtrace.record(capture="full") as rec:
        grad(lambda x: anp.sum(alist([x, x * 2.0])[0]))(x)
    x += 1000.0
    node = next(e for e in rec.of_kind("node") if e.primitive == "make_sequence")
    assert np.array_equal(node.value[0], [1, 2])


def test_full_detaches_a_node_value_whose_array_the_end_value_holds():
    from autograd.builtins import dict as adict

    with adtrace.record(capture="full") as rec:
        _, value = make_vjp(lambda x: adict({"a": x * 2.0}))(np.array([1.0, 2.0]))
        expected = _frozen(rec)
    value["a"][:] = -1.0
    assert _same(expected, _frozen(rec))


@pytest.mark.parametrize("capture", ["auto", "full"])
def test_a_recorder_that_fails_in_a_pass_leaves_no_live_array_in_its_events(capture, monkeypatch):
    from adtrace.recording.autograd.recorder import Recorder
    from adtrace.recording.fanout import guarded

    def fail_at_the_end(self, result, error):
        raise RuntimeError("simulated internal error")

    monkeypatch.setattr(Recorder, "end_query", guarded(fail_at_the_end))
    x = np.array([1.0, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with adtrace.record(capture=capture) as rec:
            g = grad(lambda x: anp.sum(anp.sin(x)))(x)
    assert rec.failure
    expected = _frozen(rec)
    g += 100.0
    x += 100.0
    assert _same(expected, _frozen(rec))


@pytest.mark.parametrize("capture", ["auto", "full"])
def test_an_ndarray_subclass_seed_is_copied(capture):
    class Tagged(np.ndarray):
        pass

    seed = np.ones(2).view(Tagged)
    with adtrace.record(capture=capture) as rec:
        vjp, _ = make_vjp(lambda x: anp.sin(x))(np.array([1.0, 2.0]))
        vjp(seed)
    seed[:] = 42.0
    assert np.array_equal(rec.of_kind("backward_start")[0].seed, [1, 1])


def test_held_positions_for_few_and_for_many_ids():
    from adtrace.recording.autograd.copy_on_write import held_positions

    held = [101, 0, 7, 5, 101, 9, 5, 12]  # ids 101, 7, 101, 5 at positions 0, 5, 9, 12 (an id equal to a position)
    assert sorted(held_positions(held, {101})) == [0, 9]
    assert held_positions(held, {5}) == [12]  # the 5 at an odd index is a position, not an id
    many = set(range(1000, 1020)) | {7, 5}
    assert sorted(held_positions(held, many)) == [5, 12]


def test_auto_tangent_is_the_last_sum_and_a_custom_jvp_maker_is_captured_as_it_ended():
    """Under auto a node's tangent reuses the copy its last add_outgrads result got when autograd's
    own JVP maker built it (it returns sum_outgrads(...) and does nothing after); a custom maker
    that writes into that sum afterwards gets its tangent captured as it ended."""
    from autograd.core import defjvp_argnums, sum_outgrads
    from autograd.extend import primitive

    @primitive
    def scaled(x):
        return 2.0 * x

    def halve_after_summing(argnums, gs, ans, args, kwargs):
        total = sum_outgrads([2.0 * gs[0]])  # (sum_outgrads calls the hooked add_outgrads)
        total *= 0.5  # after its last add_outgrads
        return total

    defjvp_argnums(scaled, halve_after_summing)
    x = np.array([1.0, 2.0])
    with adtrace.record() as rec:
        _, tangent = make_jvp(lambda x: anp.sin(scaled(x)))(x)(np.ones(2))
    nodes = {e.primitive: e for e in rec.of_kind("jvp_node")}
    adds = {e.node: e for e in rec.of_kind("add_outgrads")}
    assert np.array_equal(nodes["scaled"].tangent, [1, 1])  # as the node kept it
    assert np.array_equal(adds[nodes["scaled"].label].result[0], [2, 2])  # as add_outgrads returned it
    sin = nodes["sin"]
    assert sin.tangent is adds[sin.label].result[0]  # the same copy, taken once
    assert np.array_equal(sin.tangent, tangent) and not np.shares_memory(sin.tangent, tangent)


def test_a_jvp_maker_that_registers_another_while_it_runs_is_judged_by_its_own_code():
    """Whether a tangent can reuse the last sum is decided from the maker JVPNode looked up, not
    from whatever is registered when the node is finished."""
    from autograd.core import defjvp, defjvp_argnums, sum_outgrads
    from autograd.extend import primitive

    @primitive
    def scaled(x):
        return 2.0 * x

    def registers_then_halves(argnums, gs, ans, args, kwargs):
        defjvp(scaled, lambda g, ans, x: 2.0 * g)  # a first-use registration, say
        total = sum_outgrads([2.0 * gs[0]])
        total *= 0.5
        return total

    defjvp_argnums(scaled, registers_then_halves)
    with adtrace.record() as rec:
        make_jvp(lambda x: anp.sin(scaled(x)))(np.array([1.0, 2.0]))(np.ones(2))
    node = next(e for e in rec.of_kind("jvp_node") if e.primitive == "scaled")
    assert np.array_equal(node.tangent, [1, 1])


def test_a_recording_that_ends_inside_its_trace_keeps_copies_of_a_container_it_returns():
    """The block ends while make_vjp's trace is still open, so nothing will detach its events at
    the trace's end: the recorder copies the arrays they hold, inside containers too (a list of
    views of a node's value), before the user writes into what the trace returns."""
    recordings = []

    def f(x):
        with adtrace.record(capture="full") as rec:
            parts = anp.split(x * 2.0, 2)
        recordings.append(rec)
        return parts

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _, parts = make_vjp(f)(np.array([1.0, 2.0, 3.0, 4.0]))
    parts[0][:] = 99.0  # a view of the multiply node's value
    rec = recordings[0]
    assert rec.failure is None
    values = {e.primitive: plain(e.value) for e in rec.of_kind("node")}
    assert values["multiply"].tolist() == [2, 4, 6, 8]
    assert [a.tolist() for a in values["split"]] == [[2, 4], [6, 8]]


def test_versions_of_zeros_keep_their_bits_and_a_detached_gradient_its_values():
    """A Version of an accumulator of zero bits keeps fresh zeros (no copy read), one holding -0.0
    keeps its signs; a list gradient handed to the user and changed leaves every event true."""
    from adtrace.recording.autograd.copy_on_write import CopyOnWrite

    cow = CopyOnWrite()
    zeros, signed = np.zeros((2, 3)), np.array([0.0, -0.0, 0.0])
    kept = [cow.share(a, a) for a in (zeros, signed)]
    cow.before_writing([zeros, signed])
    zeros += 1.0
    signed += 1.0
    assert kept[0].array.tolist() == [[0.0] * 3] * 2 and kept[0].array.shape == (2, 3)
    assert np.signbit(kept[1].array).tolist() == [False, True, False]

    weights = [np.full(3, i + 1.0) for i in range(3)]
    with adtrace.record(capture="full") as rec:
        g = grad(lambda ws: anp.sum(ws[0] * ws[1] * ws[2]))(weights)
    before = [[plain(e.result)[i].tolist() for i in range(3)] for e in rec.of_kind("backward_end")]
    for a in g:
        a *= 100.0
    assert [[plain(e.result)[i].tolist() for i in range(3)] for e in rec.of_kind("backward_end")] == before
    assert before == [[[6.0] * 3, [3.0] * 3, [2.0] * 3]]


def test_a_version_keeps_its_accumulators_bits_whatever_its_first_element():
    """The copy taken before a write looks at the first element before reading the whole array for zero
    bits: a zero first element with nonzero ones after it, a -0.0 first, a nonzero first, an empty array
    each keep exactly what the array held."""
    from adtrace.recording.autograd.copy_on_write import CopyOnWrite

    arrays = [np.array([0.0, 2.5, 0.0]), np.array([-0.0, 0.0]), np.array([1.5, 0.0]), np.zeros(0),
              np.zeros((2, 2))]
    expected = [a.copy() for a in arrays]
    cow = CopyOnWrite()
    kept = [cow.share(a, a) for a in arrays]
    cow.before_writing(arrays)
    for a in arrays:
        a += 7.0
    for version, want in zip(kept, expected):
        assert version.array.shape == want.shape and version.array.tobytes() == want.tobytes()


# -------------------- Histories: an accumulator's states made from its first and the contributions --------------------


def _recurrence(steps=12):
    """A weight read at every step of a recurrence (its gradient added into once per step: dense, in place) and
    each step's gates sliced from one product (x[i] of a basic index: sparse, in place)."""
    rng = np.random.default_rng(0)
    W, xs = rng.standard_normal((6, 8)), rng.standard_normal((steps, 3, 3))

    def loss(W):
        h = anp.zeros((3, 3))
        for t in range(steps):
            z = anp.dot(anp.concatenate([xs[t], h], axis=1), W)
            h = anp.tanh(z[:, 0:3]) * anp.tanh(z[:, 3:6]) + z[:, 6:8].sum() * 0.1
        return anp.sum(h * h)
    return loss, W


def test_full_records_the_bits_auto_copies_at_each_step():
    """capture full (Versions, Histories made when read, views of node values by reference, accumulators
    autograd let go of kept without a copy) records exactly what capture auto records copying every array
    at once (an inline size above every array)."""
    loss, W = _recurrence()
    recordings = {}
    for capture, size in (("full", 64), ("auto", 10 ** 6)):
        with adtrace.record(capture=capture, inline_size=size) as rec:
            g = grad(loss)(W)
        recordings[capture] = json.loads(events_json(rec))["events"]
    assert len(recordings["full"]) > 500 and recordings["full"] == recordings["auto"]
    assert np.array_equal(g, grad(loss)(W))


def test_histories_keep_one_copy_per_accumulator_and_make_each_state_when_read(monkeypatch):
    from adtrace.recording.autograd import copy_on_write

    copies, made = [], []
    monkeypatch.setattr(copy_on_write, "_copy", lambda a, copy=copy_on_write._copy: copies.append(a) or copy(a))
    make = History.make

    def counted(history):
        if history.start is not None:  # (its first make)
            made.append(len(history.versions))
        make(history)
    monkeypatch.setattr(History, "make", counted)
    loss, W = _recurrence(steps=12)
    with adtrace.record(capture="full") as rec:
        grad(loss)(W)
    writes_into_w = 12 - 2  # (the first contribution is the entry itself, the second a new sum: vs.add)
    # the weight's accumulator once, each step's gates' once, and the gradient handed to the user (its last state)
    assert [a.shape for a in copies] == [(3, 8)] * 3 + [(6, 8)] + [(3, 8)] * 9 + [(6, 8)]
    assert not made
    results = [e.result[0] for e in rec.of_kind("add_outgrads") if e.result[1]]  # (read: every state made)
    assert sorted(made) == [2] * 12 + [writes_into_w]
    assert all(type(result) is np.ndarray for result in results)


def _added(cow, live, g):
    """What add_outgrads does to a mutable entry, with the copy-on-write's note before it: vs.mut_add's x += g, or
    sparse_add's g.mut_add(x) (untake's np.add.at)."""
    cow.before_adding(live, g)
    if isinstance(g, np.ndarray):
        live += g
    else:
        g.mut_add(live)


def test_a_history_gives_each_state_its_own_array_with_the_bits_of_the_live_one():
    from autograd.core import vspace
    from autograd.numpy.numpy_vjps import untake

    cow = CopyOnWrite()
    live = np.zeros((2, 3))
    steps = [np.full((2, 3), 0.1), untake(np.array([1.0, 2.0, 3.0]), (1, slice(None)), vspace(live)),
             np.array([[1e-17, 0.0, -0.0]] * 2), untake(np.array([[5.0], [7.0]]), (slice(None), slice(0, 1)),
                                                         vspace(live))]
    states, versions = [], []
    for g in steps:
        versions.append(cow.share(live, live))
        states.append(live.copy())
        _added(cow, live, g)
    history = versions[0].array
    assert type(history) is History and all(v.array is history for v in versions)
    made = [resolve(v) for v in versions]
    assert all(v.array is a for v, a in zip(versions, made)) and history.start is None
    assert [a.tobytes() for a in made] == [state.tobytes() for state in states]
    assert len({id(a) for a in made}) == len(made)
    history.make()  # (made once: nothing changes)
    assert all(v.array is a for v, a in zip(versions, made))


def test_a_write_no_history_can_add_again_copies_and_ends_the_history():
    """A sparse add at an index array (which the program may change after): the Version keeps a copy at once, and
    the next write begins another History; a write while no Version holds the array ends its History too."""
    from autograd.core import vspace
    from autograd.numpy.numpy_vjps import untake

    cow = CopyOnWrite()
    live = np.zeros(4)
    first = cow.share(live, live)
    _added(cow, live, np.ones(4))
    second = cow.share(live, live)
    _added(cow, live, untake(np.array([1.0, 2.0, 3.0]), np.array([0, 0, 3]), vspace(live)))
    assert type(second.array) is np.ndarray and second.array.tolist() == [1, 1, 1, 1]
    third = cow.share(live, live)
    _added(cow, live, np.ones(4))  # another History begins: its first state copied
    _added(cow, live, np.ones(4))  # no Version holds the state this adds into: the History ends
    fourth = cow.share(live, live)
    _added(cow, live, np.full(4, 2.0))
    assert [resolve(v).tolist() for v in (first, second, third, fourth)] == [
        [0, 0, 0, 0], [1, 1, 1, 1], [4, 1, 1, 4], [6, 3, 3, 6]]
    assert live.tolist() == [8, 5, 5, 8]


def test_a_step_handed_to_the_user_is_added_into_the_states_before_the_user_writes_into_it():
    """add's VJP gives its g to both parents: one parent's gradient (the user's, when it is the end of the pass)
    can be a step of the other's History. detach makes the states that add it before the user gets it; a step that
    is a view of what the user gets too."""
    for handed, step in ((np.array([1.0, 2.0]),) * 2, (np.array([[1.0, 2.0]]),) * 2):
        cow = CopyOnWrite()
        live = np.zeros(2)
        kept = [cow.share(live, live)]
        for g in (np.ones(2), step if step.ndim == 1 else step[0]):
            _added(cow, live, g)
            kept.append(cow.share(live, live))
        cow.detach(None, [], handed)  # (no event holds it here: no writer needed)
        assert type(kept[0].array) is np.ndarray  # made
        handed += 1000.0
        assert [resolve(v).tolist() for v in kept] == [[0, 0], [1, 1], [2, 3]] and resolve(kept[2]) is live


def test_views_of_node_values_are_kept_by_reference_and_copied_when_the_user_gets_their_base():
    """z[:, 0:2] of a node's value is kept as it is (as true as that value); a slice of the user's input is copied
    at once; the events holding a view of the end value make_vjp hands back keep copies when the user writes."""
    x = np.arange(6.0).reshape(2, 3)
    with adtrace.record(capture="full") as rec:
        grad(lambda m: anp.sum(anp.tanh(m * 2.0)[:, 0:2]) + anp.sum(m[0:1]))(x)
    nodes = rec.of_kind("node")
    tanh = next(e for e in nodes if e.primitive == "tanh")
    sliced = [e for e in nodes if e.primitive == "ArrayBox.__getitem__"]
    assert sliced[0].value.base is tanh.value
    assert sliced[1].value.base is None and sliced[1].value.tolist() == [[0, 1, 2]]  # (the user's x: a copy)

    def f(m):
        product = m * 2.0
        product[0:1]  # (a node holding a view of the end value)
        return product

    with adtrace.record(capture="full") as rec:
        _, end = make_vjp(f)(x)
        expected = _frozen(rec)
        end += 100.0
    assert next(e for e in rec.of_kind("node") if e.primitive == "ArrayBox.__getitem__").value.tolist() == [[0, 2, 4]]
    assert _same(expected, _frozen(rec))


def test_an_accumulator_nothing_else_holds_is_kept_without_a_copy_when_the_recording_ends():
    import weakref

    cow = CopyOnWrite()
    held = np.ones(3)
    kept_held, kept_dropped = cow.version(held), cow.version(np.full(3, 2.0))
    dropped = weakref.ref(kept_dropped.array)
    cow.freeze_all()
    assert kept_dropped.array is dropped()  # (only its Version holds it: no one can write into it)
    assert kept_held.array is not held and kept_held.array.tolist() == [1, 1, 1]


def test_a_rule_writing_into_its_cotangent_shows_under_full_in_the_states_made_from_it():
    """add's VJP gives g to both parents; the clip rule of one writes into it after the other's accumulator added
    it: under auto every field is as it ran; under full the contribution shows what the rule wrote, and so does
    the accumulator's state made from it when read (previous + contribution still holds)."""
    @primitive
    def clip_grad(x):
        return x

    defvjp(clip_grad, lambda ans, x: lambda g: np.clip(g, -1.0, 1.0, out=g))

    def f(x):
        d = x * 1.0
        first = anp.sum(d * 11.0)  # (d's last contribution: its accumulator written into after the rule ran)
        k = clip_grad(x * 2.0) + d
        return first + anp.sum(k * 5.0) + anp.sum(d * 3.0) + anp.sum(d * 7.0)

    added = {}
    for capture in ("auto", "full"):
        with adtrace.record(capture=capture) as rec:
            grad(f)(np.array([0.5, 1.5]))
        added[capture] = [(plain(e.contribution)[0], plain(e.result[0])[0]) for e in rec.of_kind("add_outgrads")
                          if e.parent == "v1_multiply"]
    assert added["auto"] == [(7, 7), (3, 10), (5, 15), (11, 26)]
    assert added["full"] == [(7, 7), (3, 10), (1, 11), (11, 26)]

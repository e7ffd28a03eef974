"""The hook points: recording changes no result, and each is patched where autograd looks."""

import ast
import gc
import inspect
import sys
import traceback
import warnings

import autograd.core as core
import autograd.numpy as anp
import autograd.util as util
import numpy as np
import pytest
from autograd import grad, make_jvp, make_vjp
from autograd.extend import def_linear, defjvp, defvjp, primitive
from autograd.test_util import check_grads

import adtrace
from adtrace.compare.align import EXACT, compare
from adtrace.recording import compiled, events
from adtrace.recording.autograd import hooks, wrappers
from adtrace.recording.values import plain
from adtrace.report.export import events_json
import compiled_twins
from corpus import CASES, Case, bit_identical, run
from primitives import fails_in_its_vjp


def quietly(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Output seems independent of input" and friends
        return run(case)


def test_corpus_is_wide_enough():
    assert len(CASES) >= 25
    tags = {t for c in CASES for t in c.tags}
    assert {"array", "scalar", "broadcast", "fan_out", "sparse", "generator_vjp", "notrace", "higher_order",
            "queries", "forward", "custom", "container"} <= tags
    assert {c.operator for c in CASES} == {"grad", "grad_of_grad", "hessian", "jacobian", "make_jvp",
                                           "elementwise_grad"}


@pytest.mark.parametrize("capture", ["auto", "full", "structure"])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_results_bit_identical_with_and_without_recording(case, capture):
    plain = quietly(case)
    with adtrace.record(capture=capture) as rec:
        recorded = quietly(case)
    assert bit_identical(plain, recorded)
    assert rec.failure is None
    assert rec.events, "the recording saw nothing"


REVERSE = [c for c in CASES if c.operator != "make_jvp"]


@pytest.mark.parametrize("case", REVERSE, ids=[c.name for c in REVERSE])
def test_every_query_replays_to_its_result(case):
    """The snapshots' last row returns what the query's own backward_end says it returned."""
    with adtrace.record(capture="full") as rec:
        quietly(case)
    assert rec.queries, "a reverse-mode case ran no backward pass"
    for query in rec.queries:
        rows = rec.snapshots(query)
        assert rows[0].statement.startswith("outgrads = ") and rows[-1].statement == "return outgrad[0]"
        assert rows[-1].outgrads == {}, "every outgrads entry is popped by the end of a pass"
        popped = [r.outgrad for r in rows if r.statement == "outgrad = outgrads.pop(node)"]
        assert all(p is not None for p in popped), "a visited node had no entry to pop"
        end = [e for e in rec.query_events(query) if e.kind == "backward_end"]
        assert len(end) == 1 and compare(rows[-1].outgrad, plain(end[0].result))[0] == EXACT


def test_forward_mode_cases_run_no_backward_pass():
    forward = [c for c in CASES if c.operator == "make_jvp"]
    assert forward
    for case in forward:
        with adtrace.record(capture="full") as rec:
            quietly(case)
        assert rec.queries == [] and any(e.kind == "jvp_node" for e in rec.events), case.name


def test_each_hook_point_has_a_reason_and_exists():
    assert len({p.name for p in hooks.HOOK_POINTS}) == len(hooks.HOOK_POINTS)
    for point in hooks.HOOK_POINTS:
        assert point.reason and point.attribute in vars(point.owner)


def test_every_hook_point_has_its_wrapper_in_wrappers_and_every_wrapper_a_hook_point():
    made = {name for name, f in vars(wrappers).items() if name.startswith("wrap_") and inspect.isfunction(f)}
    assert all(point.wrap.__module__ == wrappers.__name__ for point in hooks.HOOK_POINTS)
    assert sorted(point.wrap.__name__ for point in hooks.HOOK_POINTS) == sorted(made)


def test_every_callback_is_called_by_a_wrapper():
    """A callback declared in ``Callbacks`` (the recorder implements it, the fan-out relays it) that no
    wrapper calls records nothing, and nothing else fails."""
    declared = {name for name, f in vars(hooks.Callbacks).items() if inspect.isfunction(f) and not name.startswith("_")}
    called = {node.attr for node in ast.walk(ast.parse(inspect.getsource(wrappers)))
              if isinstance(node, ast.Attribute)}  # (called, or handed on: recorder.on_toposort)
    assert declared and declared - called == set()


def test_every_event_kind_comes_from_one_hook_point():
    """The self-test expects each hook point's kinds: a point declaring none would pass it vacuously, a
    kind no point declares is never expected."""
    kinds = [kind for point in hooks.HOOK_POINTS for kind in point.events]
    assert all(point.events for point in hooks.HOOK_POINTS)
    assert len(kinds) == len(set(kinds)) and set(kinds) == {t.kind for t in events.EVENT_TYPES}


def test_a_function_is_hooked_or_relied_on_not_both():
    """Drift watches each once: a function that becomes a hook point leaves ``RELIED_ON``."""
    hooked = {point.defined for point in hooks.HOOK_POINTS}
    assert hooked & {defined for defined, _ in hooks.RELIED_ON} == set()


def test_toposort_must_be_patched_in_core_not_util(monkeypatch):
    """backward_pass reads autograd.core.toposort: a patch of its definition site is not seen."""
    seen = []
    original = util.toposort

    def spy(end_node, *args, **kwargs):
        seen.append(end_node)
        return original(end_node, *args, **kwargs)

    monkeypatch.setattr(util, "toposort", spy)
    grad(lambda x: x * x)(3.0)
    assert seen == []
    monkeypatch.setattr(core, "toposort", spy)
    grad(lambda x: x * x)(3.0)
    assert len(seen) == 1


def test_wrappers_keep_names_and_point_to_originals():
    originals = {point.name: vars(point.owner)[point.attribute] for point in hooks.HOOK_POINTS}
    with adtrace.record():
        for point in hooks.HOOK_POINTS:
            wrapper = vars(point.owner)[point.attribute]
            assert wrapper.__name__ == point.attribute
            assert wrapper is not originals[point.name] and wrapper.__wrapped__ is originals[point.name]


def test_a_thread_in_a_copy_of_the_recording_context_is_left_out_and_said_once():
    """Threads running in copies of the block's context (``contextvars.copy_context().run``, as
    ``asyncio.to_thread`` does) reached its recorder and mixed their nodes, visits and accumulations
    into the entering thread's passes (a pass of 76 visits where 61 were run): they are not recorded
    (one ``RecorderWarning``), every pass of the entering thread is exactly its own, in reverse and
    forward mode and nested, and a ``record()`` entered in such a thread records that thread."""
    import contextlib
    import contextvars
    import threading

    import autograd.numpy as anp
    from autograd import make_jvp

    from adtrace.recording.recorder import RecorderWarning

    def f(x):
        for _ in range(20):
            x = anp.sin(x) * 1.01
        return x

    results, inner = {}, {}

    def work(x, rounds, own=False):
        with adtrace.record() if own else contextlib.nullcontext() as rec:
            for _ in range(rounds):
                results[x] = (grad(f)(x), make_jvp(f)(x)(1.0)[1], grad(grad(f))(x))
        inner[x] = rec

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with adtrace.record() as rec:
            threads = [threading.Thread(target=contextvars.copy_context().run, args=(work, x, 20, x == 0.5))
                       for x in (0.3, 0.5)]
            for thread in threads:
                thread.start()
            work(0.7, 10)
            for thread in threads:
                thread.join()
    told = [w for w in caught if issubclass(w.category, RecorderWarning)]
    assert len(told) == 1 and "not recorded" in str(told[0].message)
    assert results == {x: (grad(f)(x), make_jvp(f)(x)(1.0)[1], grad(grad(f))(x)) for x in (0.3, 0.5, 0.7)}
    for recording, x, rounds in ((rec, 0.7, 10), (inner[0.5], 0.5, 20)):
        first = {float(plain(e.value)) for e in recording.of_kind("node") if e.primitive == "sin"}
        assert {float(anp.sin(y)) in first for y in (0.3, 0.5, 0.7)} == {True, False}  # (no other thread's input)
        assert float(anp.sin(x)) in first
        assert len(recording.queries) == 3 * rounds  # grad, and grad(grad)'s two passes
        with adtrace.record() as alone:
            work(x, 1)
        sizes = sorted(len(recording.visit_order(q)) for q in alone.queries)
        assert sorted(len(recording.visit_order(q)) for q in recording.queries) == sorted(sizes * rounds)


# -------------------- the recorded VJP both ways: compiled (_wrappers.c) and pure Python --------------------

TWIN = compiled.twin("adtrace.recording.autograd._wrappers")
binding = compiled_twins.fixture("wrappers")  # each test once with the compiled paths (when built), once without


def recorded(case, capture, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with adtrace.record(capture=capture, **options) as rec:
            run(case)
    return events_json(rec)


@compiled_twins.needs("wrappers")
@pytest.mark.parametrize("capture", ["structure", "auto", "full"])
def test_compiled_and_pure_python_record_the_same_events(capture):
    compiled_events, pure_events = compiled_twins.both_ways(lambda: [recorded(case, capture) for case in CASES],
                                                            "wrappers")
    for case, a, b in zip(CASES, compiled_events, pure_events):
        assert a == b, case.name


HOT = ("on_vjp_node", "on_toposort", "on_vjp_called", "after_add_outgrads")  # written in C under structure (and auto)


def called_while(case, capture, watched=HOT, **options):
    """The recorder's callbacks of ``watched`` Python ran while ``case`` was recorded, and its events."""
    called = set()

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_name in watched:
            called.add(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        events = recorded(case, capture, **options)
    finally:
        sys.setprofile(None)
    return called, events


def again(callback):
    """Another function calling ``callback``, of its name (the profile sees it called): a callback replaced. (The very
    function put on the class again is the one the C registered: it still writes its events itself.)"""
    def replaced(self, *args):
        return callback(self, *args)
    replaced.__code__ = replaced.__code__.replace(co_name=callback.__name__)
    return replaced


@compiled_twins.needs("wrappers")
def test_under_capture_structure_the_compiled_wrappers_write_the_per_node_events(monkeypatch):
    """The common case's node, visit, VJP and accumulation events are written by the C wrappers, no Python
    callback run (on_vjp_node for the first node of each primitive: it names the primitive); the Python
    callbacks write the same (the pure-Python wrappers); a callback replaced on the recorder's class (the
    benchmarks' no-op floor, a test's failing one) is called instead, the others still written in C,
    interleaved in one log: the same events again."""
    from adtrace.recording.autograd.backward import BackwardQueries
    from adtrace.recording.autograd.recorder import Recorder

    cases = [c for c in CASES if c.name in ("tanh_chain", "square", "rational", "dot_tanh")
             or c.operator == "grad_of_grad"]
    assert len(cases) >= 5
    compiled_runs, pure_runs = compiled_twins.both_ways(
        lambda: [called_while(case, "structure") for case in cases], "wrappers")
    assert all(called <= {"on_vjp_node"} for called, _ in compiled_runs)  # (for a primitive's first node only)
    assert all(called == set(HOT) for called, _ in pure_runs)
    monkeypatch.setattr(Recorder, "on_toposort", again(BackwardQueries.on_toposort))  # (on the class)
    mixed_runs = [called_while(case, "structure") for case in cases]
    assert all(called - {"on_vjp_node"} == {"on_toposort"} for called, _ in mixed_runs)
    monkeypatch.undo()
    on_vjp_called = BackwardQueries.on_vjp_called

    def on_vjp_called_again(self, *args):  # (a spy on the mixin defining the callback, as a user would set it)
        return on_vjp_called(self, *args)
    monkeypatch.setattr(BackwardQueries, "on_vjp_called", on_vjp_called_again)
    spied_runs = [called_while(case, "structure", HOT + ("on_vjp_called_again",)) for case in cases]
    assert all(called - {"on_vjp_node"} == {"on_vjp_called", "on_vjp_called_again"} for called, _ in spied_runs)
    for case, (_, a), (_, b), (_, c), (_, d) in zip(cases, compiled_runs, pure_runs, mixed_runs, spied_runs):
        assert a == b == c == d, case.name


KEEPING = HOT + ("before_add_outgrads",)  # written in C under auto, their common values kept there too


def called_keeping(case, inline_size):
    """The callbacks of ``KEEPING`` Python ran while ``case`` was recorded under capture auto, and its events."""
    return called_while(case, "auto", KEEPING, inline_size=inline_size)


@compiled_twins.needs("wrappers", "values")
@pytest.mark.parametrize("inline_size", [64, 2])
def test_under_capture_auto_the_compiled_wrappers_keep_the_common_values(inline_size, monkeypatch):
    """Under capture auto the C wrappers write the same per-node events and keep their common values themselves
    (scalars, an outer trace's boxed scalars under grad(grad(f)), arrays copied, or above the inline size (2 here)
    summarized by the values twin): no Python callback runs but on_vjp_node (a primitive's first node); the Python
    callbacks record the same (the pure-Python wrappers), and so do the C wrappers handing the arrays above the
    inline size back to them when the values twin is not in use; a callback replaced on the recorder's class is
    called instead, the others still in C: the same events again."""
    from adtrace.recording.autograd.backward import BackwardQueries
    from adtrace.recording.autograd.recorder import Recorder

    cases = [c for c in CASES if c.name in ("tanh_chain", "square", "rational", "dot_tanh", "sum_of_squares",
                                            "broadcast_row", "mean_exp", "triple_square_sum")
             or c.operator == "grad_of_grad"]
    assert len(cases) >= 10
    compiled_runs, pure_runs = compiled_twins.both_ways(lambda: [called_keeping(c, inline_size) for c in cases],
                                                        "wrappers")
    assert all(called <= {"on_vjp_node"} for called, _ in compiled_runs)  # (for a primitive's first node only)
    assert all(called >= {"on_vjp_node", "on_toposort", "on_vjp_called", "after_add_outgrads"}
               for called, _ in pure_runs)
    assert any("before_add_outgrads" in called for called, _ in pure_runs)  # (a fan-out: x * x, grad(grad(f)))
    with compiled_twins.pure_python("values"):
        no_twin_runs = [called_keeping(c, inline_size) for c in cases]
    monkeypatch.setattr(Recorder, "on_vjp_called", again(BackwardQueries.on_vjp_called))  # (on the class)
    mixed_runs = [called_keeping(c, inline_size) for c in cases]
    assert all(called - {"on_vjp_node"} == {"on_vjp_called"} for called, _ in mixed_runs)
    for case, (_, a), (_, b), (_, c), (_, d) in zip(cases, compiled_runs, pure_runs, no_twin_runs, mixed_runs):
        assert a == b == c == d, case.name


@compiled_twins.needs("wrappers")
def test_under_capture_full_the_compiled_wrappers_keep_the_common_values_by_reference():
    """Under capture full the C wrappers write the visits and the local VJPs, keep a node's common value (a fresh
    array, a scalar) and an accumulation's by reference themselves, and note what each event holds for the
    copy-on-write (the tests of copy_on_write run both ways): on_toposort and on_vjp_called never run in Python,
    after_add_outgrads only for a sparse cotangent added into a parent's entry, on_vjp_node for a primitive's first
    node and the values it leaves (a view, an accumulator's, an argument); the pure-Python callbacks record the same."""
    cases = [c for c in CASES if c.name in ("tanh_chain", "square", "rational", "dot_tanh", "sum_of_squares",
                                            "broadcast_row", "mean_exp", "triple_square_sum")
             or c.operator == "grad_of_grad" or "sparse" in c.tags]
    assert len(cases) >= 10 and any("sparse" in c.tags for c in cases)
    compiled_runs, pure_runs = compiled_twins.both_ways(
        lambda: [called_while(c, "full", KEEPING) for c in cases], "wrappers")
    assert all(not called & {"on_toposort", "on_vjp_called"} for called, _ in compiled_runs)
    assert all("after_add_outgrads" not in called for case, (called, _) in zip(cases, compiled_runs)
               if "sparse" not in case.tags)
    assert all(called >= {"on_vjp_node", "on_toposort", "on_vjp_called", "after_add_outgrads"}
               for called, _ in pure_runs)
    for case, (_, a), (_, b) in zip(cases, compiled_runs, pure_runs):
        assert a == b, case.name


def parameters_read(ws):
    """A model's parameter list read element by element (``xs[i]``): each read's cotangent is sparse, added into the
    list's accumulator."""
    total = 0.0
    for w in ws:
        total = total + anp.sum(anp.tanh(w) * w)
    return total


PARAMETERS = [np.arange(3.0) + i for i in range(3)]
CONTAINER_CASES = [c for c in CASES if {"container", "sparse"} & set(c.tags)] + [
    Case("parameter_list", parameters_read, PARAMETERS), Case("parameter_tuple", parameters_read, tuple(PARAMETERS))]


@compiled_twins.needs("wrappers", "values")
@pytest.mark.parametrize("inline_size", [64, 2])
def test_under_capture_auto_containers_and_sparse_cotangents_are_kept_from_the_compiled_wrappers(inline_size):
    """A local VJP's and an accumulation's containers and sparse cotangents are kept by the recorder's own keep,
    called from the C wrappers (no Python callback): the same events as the Python callbacks record. The one case
    left to them is a sparse cotangent added into a list or tuple kept as a ContainerSummary (above the inline size:
    only the element written into is summarized again, summary_after_sparse_add); a dict's is kept anew."""
    assert len(CONTAINER_CASES) >= 4
    compiled_runs, pure_runs = compiled_twins.both_ways(
        lambda: [called_keeping(c, inline_size) for c in CONTAINER_CASES], "wrappers")
    for case, (called, recorded_events), (pure_called, pure_events) in zip(CONTAINER_CASES, compiled_runs, pure_runs):
        assert recorded_events == pure_events, case.name
        assert {"on_vjp_called", "after_add_outgrads"} <= pure_called, case.name
        assert "on_vjp_called" not in called, case.name
        summarized = case.name in ("parameter_list", "parameter_tuple") and inline_size == 2
        assert ("after_add_outgrads" in called) == summarized, case.name


@compiled_twins.needs("wrappers", "values")
def test_a_recording_entered_inside_an_outer_trace_keeps_its_unnamed_boxes_from_the_compiled_wrappers():
    """A recording entered inside an outer ``grad``: a local VJP returning a number of the outer trace made before
    the recording (its node never named) is kept by the recorder's keep from the C wrappers, as the callback keeps
    it (its level from the trace): the same events, and no Python callback for the VJP."""
    made_before = []

    @primitive
    def passthrough(y):
        return y

    defvjp(passthrough, lambda ans, y: lambda g: made_before[1])  # (an outer box, not g)

    def outer(x):
        made_before[:] = [x * 2.0, x * 3.0]  # nodes of the outer trace, before the recording
        called, events_seen = called_while(
            Case("inside", lambda y: passthrough(y) * 1.0, 1.5, operator="grad"), "auto")
        runs.append((called, events_seen))
        return made_before[0] * made_before[1]

    runs = []
    grad(outer)(0.7)
    with compiled_twins.pure_python("wrappers"):
        grad(outer)(0.7)
    (called, recorded_events), (pure_called, pure_events) = runs
    assert recorded_events == pure_events
    assert "on_vjp_called" in pure_called and "on_vjp_called" not in called


@compiled_twins.needs("wrappers", "values")
@pytest.mark.parametrize("raised", [ValueError, KeyboardInterrupt])
@pytest.mark.parametrize("where", ["vjp", "accumulation"])
def test_a_keep_that_raises_from_the_compiled_wrappers_fails_as_in_the_callback(raised, where, monkeypatch):
    """A keep called from the C wrappers that raises an Exception leaves the event to the Python callback, which
    meets it again and stops the recorder (recorder.fail): the same events as the Python callbacks. One that is no
    Exception (KeyboardInterrupt, raised once) propagates to the caller as out of the callback: the keep is not
    called again. In a local VJP (a sparse cotangent of ``t[0]``) and in an accumulation (a dict summarized)."""
    from adtrace.recording.autograd import capture

    calls = []
    if where == "vjp":  # a sparse cotangent's space, described in Keeper
        case, inline_size = next(c for c in CASES if c.name == "tuple_input"), 64

        def describe_vspace(vs):
            calls.append(vs)
            if raised is not KeyboardInterrupt or len(calls) == 1:
                raise raised("no keep")
            return "described"

        monkeypatch.setattr(capture, "describe_vspace", describe_vspace)
    else:  # the dict autograd accumulates d["a"] and d["b"] into, above the inline size: a ContainerSummary
        case, inline_size = next(c for c in CASES if c.name == "dict_input"), 2
        summary = capture.container_summary

        def container_summary(value, reuse=None):
            if any(f.f_code.co_name == "backward_pass" for f, _ in traceback.walk_stack(None)):  # (not the input)
                calls.append(value)
                if raised is not KeyboardInterrupt or len(calls) == 1:
                    raise raised("no keep")
            return summary(value, reuse)

        monkeypatch.setattr(capture, "container_summary", container_summary)

    def recorded_or_raised():
        calls.clear()
        try:
            return recorded(case, "auto", inline_size=inline_size)
        except KeyboardInterrupt as exc:
            return repr(exc)

    compiled_run, compiled_calls = recorded_or_raised(), len(calls)
    with compiled_twins.pure_python("wrappers"):
        pure_run, pure_calls = recorded_or_raised(), len(calls)
    assert compiled_run == pure_run
    interrupted = raised is KeyboardInterrupt
    assert (compiled_run == repr(KeyboardInterrupt("no keep"))) == interrupted
    assert pure_calls == 1 and compiled_calls == (1 if interrupted else 2)  # (the callback meets an Exception again)


def reference_growth(recorded, objects):
    """How many references each of ``objects`` gained over two more ``recorded()`` runs after a first (its caches
    made): a reference lost per value kept adds 20 or more a run (each test's loop); anything else in the process
    holding a small int for a while (a warnings registry, a cache) moves a count by one or two, not with the runs."""
    recorded()
    gc.collect()
    before = [sys.getrefcount(o) for o in objects]
    recorded()
    recorded()
    gc.collect()
    return [sys.getrefcount(o) - count for o, count in zip(objects, before)]


def test_capture_auto_leaves_no_reference_behind(binding):
    """A recording dropped leaves every object's reference count as it was: the C wrappers once took a boxed
    scalar's level (a small int) twice, one reference lost per boxed value kept under grad(grad(f)) (seen where
    small ints are counted: Python 3.10 and 3.11)."""
    f = lambda x: anp.sin(x) * x * x

    def recorded():
        with adtrace.record(capture="auto") as rec:
            for _ in range(20):
                grad(grad(f))(1.3)
        assert rec.of_kind("node")  # (recorded)

    assert max(reference_growth(recorded, range(8))) < 10


@primitive
def _scaled(x, y):
    return 2.0 * x * y


defjvp(_scaled, lambda g, ans, x, y: 2.0 * g * y, lambda g, ans, x, y: 2.0 * x * g)
defvjp(_scaled, lambda ans, x, y: lambda g: 2.0 * g * y, lambda ans, x, y: lambda g: 2.0 * x * g)


@primitive
def _tripled(x):
    return 3.0 * x


def_linear(_tripled)  # (defjvp_argnum's maker)
defvjp(_tripled, lambda ans, x: lambda g: _tripled(g))


@primitive
def _no_jvp(x):
    return x


defjvp(_no_jvp, lambda g, ans, x: 1 / 0)  # a JVP rule that raises


def _raised_in_a_jvp_rule(x):
    with pytest.raises(ZeroDivisionError):
        make_jvp(lambda x: _no_jvp(anp.sin(x)))(x)(1.0)
    return make_jvp(anp.cos)(x)(1.0)  # (recorded after it: the frame it left was popped)


# forward-mode programs: make_jvp of scalars and arrays, check_grads' forward mode, a JVP of a VJP, grad of a JVP,
# primitives of defjvp's two arguments and def_linear's, and a JVP rule that raises
FORWARD = {
    "scalar": lambda: make_jvp(lambda x: anp.sin(x) * x + x)(1.3)(1.0),
    "array": lambda: make_jvp(lambda x: anp.tanh(x) * x + anp.exp(x))(np.linspace(0, 1, 5))(np.ones(5)),
    "dot": lambda: make_jvp(lambda x: anp.dot(x, x) + anp.sum(x[1:]))(np.ones(3))(np.ones(3)),
    "check_grads": lambda: check_grads(lambda x: anp.sum(anp.sin(x) * x), modes=["fwd"], order=2)(
        np.linspace(0.1, 1, 4)),
    "jvp_of_vjp": lambda: make_jvp(lambda x: make_vjp(lambda x: anp.sin(x) * x)(x)[0](1.0))(0.4)(1.0),
    "grad_of_jvp": lambda: grad(lambda x: make_jvp(lambda y: anp.sin(y) * y)(x)(1.0)[1])(0.4),
    "raised": lambda: _raised_in_a_jvp_rule(0.3),
    "linear": lambda: check_grads(lambda x, y: _scaled(x, y) + _tripled(x), modes=["fwd", "rev"], order=2)(1.2, 0.7),
    "large": lambda: make_jvp(lambda x: anp.sin(x) + x)(np.linspace(0, 1, 100))(np.ones(100)),
}
COMMON = ("scalar", "dot", "check_grads", "jvp_of_vjp", "grad_of_jvp", "raised")  # all in C (capture auto: 64)
FORWARD_CALLBACKS = ("begin_jvp_node", "end_jvp_node", "add_in_jvp_node", "after_add_outgrads",
                     "before_add_outgrads")


def called_forward(name, capture, **options):
    """The forward-mode callbacks Python ran while ``FORWARD[name]`` was recorded, and its events."""
    called = set()

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_name in FORWARD_CALLBACKS:
            called.add(frame.f_code.co_name)

    np.random.seed(0)  # (check_grads' directions)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sys.setprofile(profile)
        try:
            with adtrace.record(capture=capture, **options) as rec:
                FORWARD[name]()
        finally:
            sys.setprofile(None)
    assert rec.failure is None and rec.of_kind("jvp_node")
    return called, events_json(rec)


@compiled_twins.needs("wrappers", "values")
@pytest.mark.parametrize("capture, inline_size", [("structure", None), ("auto", 64), ("auto", 2)])
def test_the_compiled_wrappers_write_forward_mode(capture, inline_size, monkeypatch):
    """Forward mode's common case (JVPNode.__init__'s frame and node, sum_outgrads' add_outgrads, under capture
    structure and auto) is written by the C wrappers: no Python forward callback runs but begin_jvp_node for a
    primitive's first node (it names it); the Python callbacks record the same (the pure-Python wrappers), and so
    do the C wrappers without the values twin and with add_in_jvp_node replaced on the recorder's class (called
    instead, the rest still in C): the same events all four ways."""
    from adtrace.recording.autograd.forward import ForwardMode
    from adtrace.recording.autograd.recorder import Recorder

    options = {} if inline_size is None else {"inline_size": inline_size}
    compiled_runs, pure_runs = compiled_twins.both_ways(
        lambda: {name: called_forward(name, capture, **options) for name in FORWARD}, "wrappers")
    if inline_size != 2:
        assert all(compiled_runs[name][0] <= {"begin_jvp_node"} for name in COMMON), compiled_runs
    assert all(called >= {"begin_jvp_node", "end_jvp_node", "add_in_jvp_node"} for called, _ in pure_runs.values())
    with compiled_twins.pure_python("values"):
        no_twin_runs = {name: called_forward(name, capture, **options) for name in FORWARD}
    monkeypatch.setattr(Recorder, "add_in_jvp_node", again(ForwardMode.add_in_jvp_node))  # (on the class)
    mixed_runs = {name: called_forward(name, capture, **options) for name in FORWARD}
    if inline_size != 2:
        assert all(mixed_runs[name][0] - {"begin_jvp_node", "before_add_outgrads"}
                   == {"after_add_outgrads", "add_in_jvp_node"} for name in COMMON)
    monkeypatch.undo()
    end_jvp_node = ForwardMode.end_jvp_node

    def end_jvp_node_again(self, *args):  # (a spy on the mixin defining the callback, as a user would set it)
        return end_jvp_node(self, *args)
    monkeypatch.setattr(ForwardMode, "end_jvp_node", end_jvp_node_again)
    spied_runs = {name: called_forward(name, capture, **options) for name in FORWARD}
    if inline_size != 2:
        assert all(spied_runs[name][0] - {"begin_jvp_node"} == {"end_jvp_node"} for name in COMMON)
    for name in FORWARD:
        assert compiled_runs[name][1] == pure_runs[name][1] == no_twin_runs[name][1] == mixed_runs[name][1] \
            == spied_runs[name][1], name


def test_forward_mode_leaves_no_reference_behind(binding):
    """A recording of forward mode dropped leaves the reference counts of the levels and flags its frames and
    events hold as they were (the C wrappers set a frame's slots and take a level from the node table)."""
    f = lambda x: make_jvp(lambda y: anp.sin(y) * y * x)(x)(1.0)[1]

    def recorded():
        with adtrace.record(capture="auto") as rec:
            for _ in range(20):
                grad(f)(1.3)
                make_jvp(lambda x: anp.sin(x) + x)(np.ones(3))(np.ones(3))
        assert rec.of_kind("jvp_node")  # (recorded)

    assert max(reference_growth(recorded, [*range(8), True, False])) < 10


def test_a_node_made_while_recording_holds_the_binding_in_use(binding):
    with adtrace.record(capture="structure"):
        vjp, _ = make_vjp(lambda x: anp.sin(x) * x)(0.5)
    node_vjp = vjp.__closure__  # (make_vjp's vjp closes over its end node)
    ends = [c.cell_contents for c in node_vjp if type(c.cell_contents).__name__ == "VJPNode"]
    assert ends, "make_vjp's closure holds its end node"
    kind = type(ends[0].vjp)
    assert (kind is TWIN.RecordedVJP) if binding == "compiled" else kind.__name__ == "method"
    assert vjp(1.0) == pytest.approx(np.cos(0.5) * 0.5 + np.sin(0.5))  # called with no recorder: the plain vjp
    with adtrace.record(capture="structure"):
        wrapper = core.add_outgrads
        assert (type(wrapper) is TWIN.AddOutgrads) if binding == "compiled" else inspect.isfunction(wrapper)
        assert wrapper.__name__ == "add_outgrads" and wrapper.__adtrace_hook__ == "autograd.core.add_outgrads"
        init = vars(core.VJPNode)["__init__"]
        assert (type(init) is TWIN.NodeInit) if binding == "compiled" else inspect.isfunction(init)
        init = vars(core.JVPNode)["__init__"]
        assert (type(init) is TWIN.JVPNodeInit) if binding == "compiled" else inspect.isfunction(init)


@compiled_twins.needs("wrappers")
@pytest.mark.parametrize("capture", ["structure", "auto"])
def test_a_recorded_node_is_known_by_one_int(capture):
    """The compiled wrapper makes id(node) once per node: the key of its entries in the recorder's tables, and the
    node_id its RecordedVJP keeps and tells (the compiled paths find the node again by that int: a lookup by
    identity). A vjp put on another node is not taken for that node's: the events are the pure-Python path's."""
    session = adtrace.record(capture=capture)
    with session:
        vjp, _ = make_vjp(lambda x: anp.sin(x) * x * x)(0.5)
        end = next(c.cell_contents for c in vjp.__closure__ if type(c.cell_contents).__name__ == "VJPNode")
        labels = session._recorder.nodes.labels
        key = next(k for k in labels if k == id(end))
    assert labels[key] == "v3_multiply" and end.vjp.node_id is key  # (the very int: made once)

    def moved():  # v2's vjp replaced by v3's while a pass runs
        with adtrace.record(capture=capture) as rec:
            vjp, _ = make_vjp(lambda x: anp.sin(x) * x * x)(0.5)
            end = next(c.cell_contents for c in vjp.__closure__ if type(c.cell_contents).__name__ == "VJPNode")
            end.parents[0].vjp = end.vjp
            vjp(1.0)
        return events_json(rec)

    compiled_run, pure_run = compiled_twins.both_ways(moved, "wrappers")
    assert compiled_run == pure_run


@compiled_twins.needs("wrappers")
@pytest.mark.parametrize("capture", ["structure", "auto", "full"])
def test_a_node_is_read_from_its_row_in_the_recording_that_made_it_only(capture):
    """The compiled paths keep the row they write for a node (its label, level and argnums) on its RecordedVJP and
    read it back instead of the node table, for the recording that wrote it only: a graph made in one recording and
    differentiated in the next is named there as the pure-Python wrappers name it (unrecorded: met first there)."""
    def twice():
        with adtrace.record(capture=capture):
            vjp, _ = make_vjp(lambda x: anp.sin(x) * x * x)(0.5)
        with adtrace.record(capture=capture) as rec:
            vjp(1.0)
        return events_json(rec), rec.visit_order(1)

    (compiled_run, visits), (pure_run, _) = compiled_twins.both_ways(twice, "wrappers")
    assert compiled_run == pure_run
    assert len(visits) == 4 and all(label.endswith("_unrecorded") for label in visits)


@compiled_twins.needs("wrappers")
@pytest.mark.parametrize("capture", ["structure", "auto", "full"])
def test_ids_python_reuses_within_a_recording_are_named_as_the_pure_python_names_them(capture):
    """Many small graphs in one recording: Python gives a dead node's id to a new one (the node table's entry under
    that id is overwritten, its levels and argnums only where they differ): the rows the compiled paths keep and the
    table they write give the pure-Python path's events."""
    def many():
        with adtrace.record(capture=capture) as rec:
            for i in range(30):
                grad(grad(lambda x: anp.sin(x) * x * x + anp.exp(-x * x)))(0.1 * i)
                grad(lambda x: anp.tanh(x) * 2.0)(0.2 * i)
        return events_json(rec), len(rec.nodes)

    (compiled_run, nodes), (pure_run, _) = compiled_twins.both_ways(many, "wrappers")
    assert compiled_run == pure_run
    assert nodes > 900


def test_a_vjp_kept_after_its_node_died_is_recorded_under_the_label_its_id_has_then(binding):
    """A node's vjp kept by the program and called after the node died (here from a custom rule, in a later pass):
    the wrappers write labels.get(node_id) as it is then, which is another node's label once Python has given that
    node the id (set here by hand, unless the allocator gives the id to a node of the later pass first: both happen).
    The compiled paths read the row kept on the vjp only for the node just visited (alive), so they write the same."""
    kept, expected = [], []
    marker = 12345.0  # (the kept call's g: its event found by its outgrad, under capture auto)

    @primitive
    def spy(x):
        return x

    def spy_vjp(ans, x):
        def vjp(g):
            expected.append(session._recorder.labels.get(node_id))  # (as it is when the kept vjp is called)
            kept[0](marker)
            return g
        return vjp

    defvjp(spy, spy_vjp)
    session = adtrace.record(capture="auto")
    with session as rec:
        grad(lambda x: anp.sin(x) * x)(0.1)  # sin and multiply named first: the next ones written by the C
        grad(lambda x: kept.append(anp.sin(x) * x) or kept[-1])(0.3)
        kept[0] = kept[0]._node.vjp  # (its node dies with its graph)
        gc.collect()
        node_id = kept[0].node_id if binding == "compiled" else kept[0].__self__[0]
        labels = session._recorder.labels
        assert labels[node_id] == "v5_multiply"
        labels[node_id] = "v99_reused"  # (as when a node made now is given the id)
        grad(lambda x: spy(anp.cos(x) * x))(0.2)
    kept.clear()
    assert [e.node for e in rec.of_kind("vjp") if e.outgrad == marker] == expected
    assert expected != ["v5_multiply"]  # (another node's label: "v99_reused", or the later node's given the id)


def _heads_written(capture="structure"):
    """The heads in the log of a recording of grad(grad(f)), and of each the tag."""
    session = adtrace.record(capture=capture)
    with session:
        grad(grad(lambda x: anp.sin(x) * x * x))(0.7)
    return [v for v in session._recorder.values if type(v) is tuple and len(v) == 4 and v[1] in ("rev", "fwd")]


@compiled_twins.needs("wrappers")
def test_a_head_written_is_the_one_heads_keeps():
    """Each head the compiled paths write is HEADS' own (a new one added as its __missing__ adds it), the same
    object for the same head in a second recording, whose query numbers start at 1 again (found by level and
    number there)."""
    from adtrace.recording.eventlog import HEADS
    first, second = _heads_written(), _heads_written()
    assert first and all(HEADS[h] is h for h in first)
    assert len(first) == len(second) and all(a is b for a, b in zip(first, second))


@compiled_twins.needs("wrappers")
def test_the_heads_follow_another_heads_and_a_missing_replaced():
    """Given another HEADS, the compiled paths write its heads, not those they kept from the last (by level and
    number, or in a way); with its class's __missing__ replaced since, they call it rather than doing what it did."""
    from adtrace.recording import eventlog
    from adtrace.recording.autograd import recorder as autograd_recorder
    from adtrace.recording.autograd.backward import BackwardQueries

    def given(heads):
        TWIN.structure(autograd_recorder.Recorder, BackwardQueries.on_toposort, heads, autograd_recorder.NO_PREVIOUS,
                       autograd_recorder.UNARY)

    VISIT = 1004  # (ToposortYielded's tag: written by the compiled paths alone under capture structure)
    _heads_written()  # (the cells filled from HEADS)
    fresh, missed = eventlog._Heads(), []
    own = eventlog._Heads.__missing__
    try:
        given(fresh)
        visits = [h for h in _heads_written() if h[0] == VISIT]
        assert visits and all(fresh[h] is h for h in visits)

        def missing(self, key):
            missed.append(key[0])
            return own(self, key)

        given(eventlog._Heads())
        eventlog._Heads.__missing__ = missing  # (after: the class is no longer as registered)
        assert [h for h in _heads_written() if h[0] == VISIT] == visits and VISIT in missed
    finally:
        eventlog._Heads.__missing__ = own
        given(eventlog.HEADS)
    assert all(eventlog.HEADS[h] is h for h in _heads_written())


def test_a_node_built_by_keywords_is_recorded_too(binding):
    """autograd passes __init__'s arguments by position; one passed by keywords (someone's subclass, a test)
    takes the pure-Python path of the compiled wrapper, recorded alike."""
    with adtrace.record(capture="structure") as rec:
        root = core.VJPNode.new_root()
        node = core.VJPNode.__new__(core.VJPNode)
        node.__init__(2.0, anp.sin, (1.0,), {}, (0,), parents=[root])
        assert node.vjp(1.0) == (np.cos(1.0),)
    assert [e.label for e in rec.of_kind("node")] == ["v1_sin"]
    assert [(e.node, e.ingrads) for e in rec.of_kind("vjp")] == [("v1_sin", (None,))]


def test_a_vjp_and_add_outgrads_called_by_keywords_are_recorded_as_by_position(binding):
    """autograd calls both by position; called by keywords (as Python allows the pure-Python wrappers) each is
    recorded alike, and a call Python would refuse is refused with its TypeError."""
    seen = []
    for by_keywords in (False, True):
        with adtrace.record(capture="structure") as rec:
            root = core.VJPNode.new_root()
            node = core.VJPNode(2.0, anp.sin, (1.0,), {}, (0,), [root])
            assert (node.vjp(g=1.0) if by_keywords else node.vjp(1.0)) == (np.cos(1.0),)
            flagged = core.add_outgrads(prev_g_flagged=None, g=1.5) if by_keywords else core.add_outgrads(None, 1.5)
            assert flagged == (1.5, False)
            with pytest.raises(TypeError):
                node.vjp(1.0, g=1.0)
            with pytest.raises(TypeError):
                core.add_outgrads(None, 1.5, 2.0)
            with pytest.raises(TypeError):
                core.add_outgrads(None, h=1.5)
        seen.append([(e.kind, getattr(e, "node", None)) for e in rec.events])
    assert seen[0] == seen[1] and ("vjp", "v1_sin") in seen[0] and any(k == "add_outgrads" for k, _ in seen[0])


@compiled_twins.needs("wrappers")
def test_nested_recordings_record_the_same_events_both_ways():
    """Two recorders at once (the fan-out between the wrappers and them): the same events either way."""
    def record():
        seen = []
        for case in CASES:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with adtrace.record(capture="auto") as outer:
                    with adtrace.record(capture="structure") as inner:
                        run(case)
            seen.append((events_json(outer), events_json(inner)))
        return seen

    compiled_events, pure_events = compiled_twins.both_ways(record, "wrappers")
    assert compiled_events == pure_events


def test_a_generator_vjp_is_recorded_as_a_tuple(binding):
    case = next(c for c in CASES if "generator_vjp" in c.tags)
    with adtrace.record(capture="auto") as rec:
        run(case)
    assert all(type(e.ingrads) is tuple for e in rec.of_kind("vjp"))
    assert any(len(e.ingrads) == 3 for e in rec.of_kind("vjp"))


def test_an_error_in_a_vjp_reaches_the_caller(binding):
    fails = fails_in_its_vjp(ZeroDivisionError("in the rule"))
    with adtrace.record(capture="structure"):
        with pytest.raises(ZeroDivisionError, match="in the rule"):
            grad(lambda x: fails(x) * 2.0)(1.0)


def test_the_vjp_and_its_gradients_are_not_leaked(binding):
    g = np.ones(3)
    x = np.arange(3.0)
    for _ in range(3):  # (first-call caches)
        with adtrace.record(capture="structure"):
            make_vjp(lambda x: x * 2.0)(x)[0](g)
    gc.collect()
    before = sys.getrefcount(g), sys.getrefcount(x)
    for _ in range(200):
        with adtrace.record(capture="structure"):
            make_vjp(lambda x: x * 2.0)(x)[0](g)
    gc.collect()
    assert (sys.getrefcount(g), sys.getrefcount(x)) == before


def test_a_jvp_node_built_by_keywords_is_recorded_too(binding):
    """The same for JVPNode.__init__: a call by keywords takes the compiled wrapper's pure-Python path."""
    with adtrace.record(capture="structure") as rec:
        root = core.JVPNode.new_root(1.0)
        node = core.JVPNode.__new__(core.JVPNode)
        node.__init__(np.sin(0.5), anp.sin, (0.5,), {}, (0,), parents=[root])
    assert node.g == pytest.approx(np.cos(0.5))
    assert [(e.label, e.parents) for e in rec.of_kind("jvp_node")] == [("v1_sin", ("v0_root",))]

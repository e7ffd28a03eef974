"""The recorder's events: numbers, levels, modes, queries, copy-on-write, failure cases."""

import warnings

import autograd.numpy as anp
import numpy as np
import pytest
from autograd import grad, jacobian, make_jvp
from autograd.extend import defjvp, defvjp, primitive

import adtrace
from adtrace.recording.fanout import guarded
from adtrace.recording.values import ArraySummary, Boxed, Sparse, plain, kept_arrays
import seed
from primitives import fails_in_its_vjp, recorded_from_inside_a_vjp


def record_grad(f, x, **options):
    with adtrace.record(**options) as rec:
        result = grad(f)(x)
    return rec, result


# -------------------- the seed's x*x --------------------


def test_square_events_follow_backward_pass():
    rec, g = record_grad(lambda x: x * x, 3.0)
    assert g == 6.0
    assert tuple(e.kind for e in rec.events) == seed.EVENTS and seed.is_exact_square(rec)
    node = rec.nodes["v1_multiply"]
    assert (node.primitive, node.argnums, node.parents, node.value) == ("multiply", (0, 1), ("v0_root", "v0_root"), 9.0)
    first, second = rec.of_kind("add_outgrads")
    assert (first.parent, first.previous, first.contribution, first.result) == ("v0_root", None, 3.0, (3.0, False))
    assert (second.previous, second.contribution, second.result) == ((3.0, False), 3.0, (6.0, True))
    assert [(c.position, c.argnum, c.node) for c in (first, second)] == [(0, 0, "v1_multiply"), (1, 1, "v1_multiply")]
    assert rec.visit_order(1) == ["v1_multiply", "v0_root"]
    assert rec.gradient(1) == 6.0
    assert all(e.mode == "rev" and e.level == 0 for e in rec.events)


def test_local_vjp_records_outgrad_and_ingrads():
    rec, _ = record_grad(lambda x: anp.sin(x) * x, 0.5)
    vjps = {e.node: e for e in rec.of_kind("vjp")}
    assert vjps["v2_multiply"].ingrads == (0.5, np.sin(0.5))
    assert vjps["v1_sin"].outgrad == 0.5 and vjps["v1_sin"].ingrads == (0.5 * np.cos(0.5),)
    assert vjps["v0_root"].ingrads == ()


# -------------------- higher order, forward mode, queries --------------------


def test_levels_under_grad_of_grad():
    with adtrace.record() as rec:
        d2 = grad(grad(lambda x: x * x * x))(2.0)
    assert d2 == 12.0
    roots = rec.of_kind("root")
    assert [(r.label, r.level) for r in roots] == [("v0_root", 0), ("v1_root", 1)]
    inner, outer = rec.queries
    assert {e.level for e in rec.query_events(inner)} == {1}
    assert {e.level for e in rec.query_events(outer)} == {0}
    to_root = [e for e in rec.query_events(inner) if e.kind == "add_outgrads" and e.parent == "v1_root"]
    assert all(isinstance(e.contribution, Boxed) and e.contribution.level == 0 for e in to_root)
    assert [plain(e.result[0]) for e in to_root] == [4.0, 8.0, 12.0]
    created_by_inner = [e for e in rec.of_kind("node") if e.query == inner and e.level == 0]
    assert {"VSpace.add", "VSpace.mut_add"} <= {e.primitive for e in created_by_inner}


def test_levels_count_nesting_even_after_autograd_leaks_a_trace():
    from autograd.tracer import trace_stack

    def raises(x):
        raise ValueError("inside a trace")

    before = trace_stack.top
    with pytest.raises(ValueError):
        grad(raises)(1.0)
    assert trace_stack.top == before + 1  # autograd's TraceStack.new_trace has no try/finally
    with adtrace.record() as rec:
        grad(grad(lambda x: x * x * x))(2.0)
    assert [r.level for r in rec.of_kind("root")] == [0, 1]
    boxed = [e.contribution for e in rec.of_kind("add_outgrads") if e.level == 1]
    assert {b.level for b in boxed} == {0}
    trace_stack.top = before  # undo autograd's leak for the tests that follow


def test_forward_mode_is_tagged_fwd():
    with adtrace.record() as rec:
        value, tangent = make_jvp(lambda x: x * x + anp.sin(x))(3.0)(1.0)
    assert tangent == pytest.approx(6 + np.cos(3.0))
    adds = rec.of_kind("add_outgrads")
    assert len(adds) == 5 and all(e.mode == "fwd" and e.query is None for e in adds)
    assert rec.of_kind("jvp_root")[0].tangent == 1.0
    tangents = {e.primitive: e.tangent for e in rec.of_kind("jvp_node")}
    assert tangents["multiply"] == 6.0 and tangents["sin"] == pytest.approx(np.cos(3.0))
    assert tangents["add"] == tangent
    by_node = {}
    for e in adds:
        by_node.setdefault(e.node, []).append((e.position, e.parent))
    assert by_node["v1_multiply"] == [(0, "v0_root"), (1, "v0_root")]
    assert not rec.queries and all(e.mode == "fwd" for e in rec.events)


def test_jacobian_runs_one_query_per_output_row():
    f = lambda x: anp.array([x[0] * x[1], anp.sin(x[2]) + x[0]])
    x = np.array([1.0, 2.0, 0.5])
    with adtrace.record() as rec:
        J = jacobian(f)(x)
    assert len(rec.queries) == 2
    for row, query in zip(J, rec.queries):
        events = rec.query_events(query)
        assert events[0].kind == "backward_start" and events[-1].kind == "backward_end"
        assert np.array_equal(plain(rec.gradient(query)), row)
    seeds = [plain(e.seed).tolist() for e in rec.of_kind("backward_start")]
    assert seeds == [[1, 0], [0, 1]]
    assert len(rec.of_kind("trace")) == 1  # one graph, queried twice


def test_independent_output_recorded_as_such():
    with adtrace.record() as rec:
        with pytest.warns(UserWarning, match="Output seems independent of input"):
            g = grad(lambda x: 3.0)(2.0)
    assert g == 0.0
    (trace,) = rec.of_kind("trace")
    assert trace.independent and trace.end is None and trace.output == 3.0
    assert rec.queries == []


# -------------------- sparse, generator VJP, notrace --------------------


def test_sparse_contributions_densified_without_mutation():
    x = np.array([2.0, 5.0])
    rec, g = record_grad(lambda v: v[0] * v[1] + v[0], x, capture="full")
    assert g.tolist() == [6.0, 2.0]
    to_root = [e for e in rec.of_kind("add_outgrads") if e.parent == "v0_root"]
    assert all(isinstance(e.contribution, Sparse) for e in to_root)
    # toposort visits the later x[0] first: contributions 1*e0, then x[0]*e1, then x[1]*e0
    assert [e.contribution.dense.tolist() for e in to_root] == [[1, 0], [0, 2], [5, 0]]
    assert np.array_equal(sum(e.contribution.dense for e in to_root), g)
    assert [e.result[1] for e in to_root] == [True, True, True]  # sparse_add: mutable from the first
    assert [e.result[0].tolist() for e in to_root] == [[1, 0], [1, 2], [6, 2]]
    assert [e.previous[0].tolist() for e in to_root[1:]] == [[1, 0], [1, 2]]
    assert to_root[0].contribution.vspace == "ArrayVSpace(shape=(2,), dtype=float64)"


def test_generator_vjp_materialised():
    @primitive
    def fma3(a, b, c):
        return a * b + c

    defvjp(fma3, lambda ans, a, b, c: lambda g: g * b, lambda ans, a, b, c: lambda g: g * a,
           lambda ans, a, b, c: lambda g: g)
    rec, g = record_grad(lambda x: fma3(x, x * 2.0, x), 1.5)
    (vjp,) = [e for e in rec.of_kind("vjp") if e.node.endswith("fma3")]
    assert vjp.ingrads == (3.0, 1.5, 1.0)
    assert g == 1.5 * 4 + 1


def test_notrace_primitive_is_not_a_node():
    rec, g = record_grad(lambda x: x[anp.argmax(x)] * 2.0, np.array([1.0, 7.0, 3.0]))
    assert g.tolist() == [0, 2, 0]
    assert "argmax" not in {e.primitive for e in rec.of_kind("node")}


# -------------------- capture levels --------------------


def test_capture_auto_keeps_no_large_array():
    x = np.linspace(0.0, 1.0, 500)
    rec, _ = record_grad(lambda v: anp.sum(anp.tanh(v * v + v) * v), x)
    arrays = [a for e in rec.events for a in kept_arrays(e)]
    assert arrays and all(a.size <= 64 for a in arrays)
    summaries = [e.value for e in rec.of_kind("node") if isinstance(e.value, ArraySummary)]
    assert summaries and summaries[0].shape == (500,) and summaries[0].dtype == "float64"


def test_capture_full_and_structure():
    x = np.linspace(0.0, 1.0, 500)
    rec, _ = record_grad(lambda v: anp.sum(v * v), x, capture="full")
    assert rec.of_kind("node")[0].value.shape == (500,)
    rec, g = record_grad(lambda v: anp.sum(v * v), x, capture="structure")
    assert np.allclose(g, 2 * x)
    assert all(not list(kept_arrays(e)) for e in rec.events)
    assert [e.kind for e in rec.events][:3] == ["root", "node", "node"]
    assert rec.of_kind("add_outgrads")[0].result == (None, False)


def test_capture_rejects_unknown_level():
    with pytest.raises(ValueError, match="capture must be one of auto, full, structure"):
        adtrace.record(capture="everything")



def test_missing_vjp_rule_propagates_and_events_stay_usable():
    @primitive
    def no_rule(x):
        return 2.0 * x

    f = lambda x: no_rule(x * x)
    with pytest.raises(NotImplementedError) as plain_error:
        grad(f)(3.0)
    with pytest.raises(NotImplementedError) as recorded_error:
        with adtrace.record() as rec:
            grad(f)(3.0)
    assert str(recorded_error.value) == str(plain_error.value) == "VJP of no_rule wrt argnums (0,) not defined"
    assert [e.kind for e in rec.events] == ["root", "node"]
    assert rec.graph() == {"v0_root": (), "v1_multiply": ("v0_root", "v0_root")}
    assert rec.queries == [] and rec.failure is None


def test_error_in_a_local_vjp_ends_the_query():
    breaks_backward = fails_in_its_vjp(FloatingPointError("rule failed"))
    with adtrace.record() as rec:
        with pytest.raises(FloatingPointError):
            grad(lambda x: breaks_backward(x * 2.0))(1.0)
        g = grad(lambda x: x * 2.0)(1.0)
    assert g == 2.0
    first, second = rec.queries
    assert rec.query_events(first)[-1].error == "FloatingPointError"
    assert rec.gradient(second) == 2.0


def test_internal_recorder_error_disables_recording_not_the_program(monkeypatch):
    from adtrace.recording.autograd.recorder import Recorder

    def broken(self, node):
        raise KeyError("bug")

    monkeypatch.setattr(Recorder, "on_toposort", guarded(broken))
    with pytest.warns(adtrace.RecorderWarning, match="stopped recording"):
        with adtrace.record() as rec:
            g = grad(lambda x: anp.sin(x) * x)(0.5)
    assert g == np.cos(0.5) * 0.5 + np.sin(0.5)
    assert rec.failure == "KeyError: 'bug'"


@pytest.mark.parametrize("callback", ["on_vjp_node", "on_toposort", "on_vjp_called", "after_add_outgrads"])
@pytest.mark.parametrize("capture", ["auto", "structure"])
def test_each_hot_callback_that_fails_stops_the_recorder_and_the_program_runs_on(monkeypatch, callback, capture):
    """The hot callbacks write their guard out (one frame per call): an internal error inside one
    warns, stops the recorder and leaves the program's result its own."""
    import sys

    from adtrace.recording.autograd.recorder import Recorder

    class Log(list):
        def extend(self, items):  # (every callback writes its event into the log)
            if sys._getframe(1).f_code.co_name == callback:
                raise ZeroDivisionError("recorder bug")
            list.extend(self, items)

    made = Recorder.__init__

    def init(self, *args, **kwargs):
        made(self, *args, **kwargs)
        self.values = Log()  # (what it writes, apart from the recording's log)

    monkeypatch.setattr(Recorder, "__init__", init)
    with pytest.warns(adtrace.RecorderWarning, match="recorder bug"):
        with adtrace.record(capture=capture) as rec:
            g = grad(lambda x: anp.sin(x) * x)(0.5)
    assert g == np.cos(0.5) * 0.5 + np.sin(0.5)
    assert rec.failure == "ZeroDivisionError: recorder bug"


@pytest.mark.parametrize("callback", ["begin_jvp_node", "end_jvp_node"])
@pytest.mark.parametrize("capture", ["auto", "structure"])
def test_each_forward_callback_that_fails_stops_the_recorder_and_the_program_runs_on(monkeypatch, callback, capture):
    """Forward mode's callbacks (once per JVPNode each) write their guard out too: an internal error
    inside one warns, stops the recorder and leaves make_jvp's result its own."""
    import sys

    from adtrace.recording.autograd.recorder import Recorder

    class Log(list):  # (begin_jvp_node pushes its frame, end_jvp_node writes its event)
        def append(self, item):
            self.fail_in(callback)
            list.append(self, item)

        def extend(self, items):
            self.fail_in(callback)
            list.extend(self, items)

        @staticmethod
        def fail_in(name):
            if sys._getframe(2).f_code.co_name == name:
                raise ZeroDivisionError("recorder bug")

    made = Recorder.__init__

    def init(self, *args, **kwargs):
        made(self, *args, **kwargs)
        self.values, self.frames = Log(), Log()
        self.nodes.frames = self.frames  # (the node table reads the same list)

    monkeypatch.setattr(Recorder, "__init__", init)
    with pytest.warns(adtrace.RecorderWarning, match="recorder bug"):
        with adtrace.record(capture=capture) as rec:
            value, tangent = make_jvp(lambda x: anp.sin(x) * x)(0.5)(1.0)
    assert (value, tangent) == (np.sin(0.5) * 0.5, np.cos(0.5) * 0.5 + np.sin(0.5))
    assert rec.failure == "ZeroDivisionError: recorder bug"


def test_one_argnums_tuple_kept_per_distinct_value():
    """autograd makes a fresh argnums tuple per node; a recording keeping each of them made Python's
    collections five times as frequent on autograd's own test_systematic (capture structure)."""
    with adtrace.record(capture="structure") as rec:
        grad(lambda x: anp.sum(anp.sin(x) * x + x * 2.0))(np.ones(3))
        make_jvp(lambda x: anp.sin(x) * x + x * 2.0)(0.5)(1.0)
    nodes = [e for e in rec.events if e.kind in ("node", "jvp_node")]
    assert {e.argnums for e in nodes} == {(0,), (0, 1)}
    assert len({id(e.argnums) for e in nodes}) == 2


def _missing_attribute(self, node):
    return self.no_such_attribute  # (an AttributeError holds its obj: the recorder)


def _key_error(self, node):
    raise KeyError("bug")


@pytest.mark.parametrize("broken", [_key_error, _missing_attribute])
def test_a_failed_recording_is_freed_with_its_last_reference(monkeypatch, broken):
    """The recorder keeps its failure as text: the exception's traceback frames (or an
    AttributeError's obj) hold the recorder, a cycle that kept the recording, and the values in
    those frames, until the cyclic collector ran."""
    import gc
    import weakref

    from adtrace.recording.autograd.recorder import Recorder

    monkeypatch.setattr(Recorder, "on_toposort", guarded(broken))
    gc.collect()
    gc.disable()
    try:
        with pytest.warns(adtrace.RecorderWarning):
            with adtrace.record() as rec:
                grad(lambda x: anp.sin(x) * x)(0.5)
        alive = weakref.ref(rec)
        del rec
        assert alive() is None
    finally:
        gc.enable()


def test_where_warnings_are_errors_the_program_gets_its_result_and_the_block_raises(monkeypatch):
    """-W error: the RecorderWarning is not raised inside autograd's call (the traced program gets
    its result); it is raised when the record() block ends, with the recorder's own traceback as a
    note (Python 3.11+)."""
    from adtrace.recording.autograd.recorder import Recorder

    monkeypatch.setattr(Recorder, "on_toposort", guarded(_key_error))
    results = []
    with warnings.catch_warnings():
        warnings.simplefilter("error", adtrace.RecorderWarning)
        with pytest.raises(adtrace.RecorderWarning, match="stopped recording") as caught:
            with adtrace.record() as rec:
                results.append(grad(lambda x: anp.sin(x) * x)(0.5))
                results.append(grad(lambda x: x * x)(3.0))
    assert results == [np.cos(0.5) * 0.5 + np.sin(0.5), 6.0]
    assert rec.failure == "KeyError: 'bug'"
    if hasattr(caught.value, "add_note"):
        assert "_key_error" in "".join(caught.value.__notes__)
    assert adtrace.recording.session.active_recordings() == 0


def test_labels_survive_id_reuse():
    with adtrace.record() as rec:
        for i in range(30):
            grad(lambda x: anp.sin(x * x) + x)(0.1 * i)
    for query in rec.queries:
        events = rec.query_events(query)
        graph = rec.graph(events[0].end)
        assert set(rec.visit_order(query)) == set(graph)
        assert all(e.parent in graph for e in events if e.kind == "add_outgrads")
    assert len(rec.of_kind("root")) == 30 and len(set(rec.nodes)) == 30 * 4  # root, multiply, sin, add


def test_warnings_from_autograd_pass_through():
    with adtrace.record():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            grad(lambda x: 1.0)(0.0)
    assert any("independent" in str(w.message) for w in caught)


def test_nodes_created_before_recording_are_named_unrecorded():
    from autograd.core import make_vjp

    vjp, _ = make_vjp(lambda x: anp.sin(x) * x, 0.5)
    with adtrace.record() as rec:
        g = vjp(1.0)
    assert g == np.cos(0.5) * 0.5 + np.sin(0.5)
    assert rec.visit_order(1) == ["u0_unrecorded", "u1_unrecorded", "u2_unrecorded"]
    adds = rec.of_kind("add_outgrads")
    assert [(a.node, a.parent) for a in adds][:2] == [("u0_unrecorded", "u1_unrecorded"),
                                                      ("u0_unrecorded", "u2_unrecorded")]
    assert rec.of_kind("vjp") == []  # their local vjp was not wrapped: adtrace leaves them untouched


def test_recording_entered_inside_a_backward_pass_tags_it_reverse():
    rec, g = recorded_from_inside_a_vjp(lambda x, tap: anp.sin(tap(x) * x) * x)
    assert g == grad(lambda x: anp.sin(x * x) * x)(2.0)
    adds = rec.of_kind("add_outgrads")
    assert adds and all(e.mode == "rev" and e.query is None for e in adds)


def test_containers_above_the_inline_size_are_summarized():
    from adtrace.recording.values import ContainerSummary

    weights = [np.full((10, 10), 0.1 * i) for i in range(6)]

    def loss(ws):
        h = np.ones(10)
        for w in ws:
            h = anp.tanh(anp.dot(w, h))
        return anp.sum(h)

    with adtrace.record() as rec:
        g = grad(loss)(weights)
    assert len(g) == 6
    to_root = [e for e in rec.of_kind("add_outgrads") if e.parent == "v0_root"]
    assert len(to_root) == 6
    assert all(isinstance(e.contribution, Sparse) and e.contribution.dense is None for e in to_root)
    assert isinstance(to_root[-1].result[0], ContainerSummary) and to_root[-1].result[0].length == 6
    assert to_root[0].contribution.vspace == "ListVSpace(len=6)"
    assert all(a.size <= 64 for e in rec.events for a in kept_arrays(e))


@pytest.mark.parametrize("capture", ["auto", "full"])
def test_a_failure_when_a_recording_ends_leaves_autograd_restored(monkeypatch, capture):
    from adtrace.recording.autograd.copy_on_write import CopyOnWrite

    def broken(self):
        raise MemoryError("no room")

    with pytest.warns(adtrace.RecorderWarning, match="no room") as caught:
        with adtrace.record(capture=capture) as rec:
            grad(lambda x: anp.sum(x * x))(np.ones(3))
            monkeypatch.setattr(CopyOnWrite, "freeze_all", broken)  # what the recorder does when it stops
    assert [w.filename for w in caught] == [__file__]  # the user's with line
    assert adtrace.recording.session.active_recordings() == 0
    assert not any(adtrace.recording.autograd.hooks.is_patched(p) for p in adtrace.recording.autograd.hooks.HOOK_POINTS)
    assert "no room" in rec.failure and rec.events[-1].kind == "backward_end"  # readable as far as it got


def test_warnings_as_errors_when_recordings_end_still_restore_autograd(monkeypatch):
    """The warning is raised out of the record() blocks, and every recorder is released anyway."""
    from adtrace.recording.autograd.copy_on_write import CopyOnWrite

    def broken(self):
        raise MemoryError("no room")

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(adtrace.RecorderWarning, match="no room"):
            with adtrace.record() as outer:
                with adtrace.record():
                    grad(lambda x: anp.sum(x * x))(np.ones(3))
                    monkeypatch.setattr(CopyOnWrite, "freeze_all", broken)
                    stack = adtrace.recording.registry._STACK.get()
                    # (as leaving the outer one first would: both at once)
                    adtrace.recording.registry.deactivate(stack[0])
    assert all(r.closed for r in stack) and outer.failure is not None
    assert adtrace.recording.session.active_recordings() == 0
    assert not any(adtrace.recording.autograd.hooks.is_patched(p) for p in adtrace.recording.autograd.hooks.HOOK_POINTS)


def test_a_recorder_that_failed_keeps_its_first_failure_when_it_ends(monkeypatch):
    from adtrace.recording.autograd.copy_on_write import CopyOnWrite
    from adtrace.recording.autograd.recorder import Recorder

    def hook_bug(self, node):
        raise KeyError("hook bug")

    def broken(self):
        raise MemoryError("no room")

    with pytest.warns(adtrace.RecorderWarning) as caught:
        with adtrace.record() as rec:
            monkeypatch.setattr(CopyOnWrite, "freeze_all", broken)
            monkeypatch.setattr(Recorder, "on_toposort", guarded(hook_bug))
            grad(lambda x: anp.sum(x * x))(np.ones(3))
    assert len(caught) == 1 and "hook bug" in str(caught[0].message)
    assert rec.failure == "KeyError: 'hook bug'" and adtrace.recording.session.active_recordings() == 0


@primitive
def _product3(a, b, c):
    return a * b * c


defvjp(_product3, lambda ans, a, b, c: lambda g: g * b * c, lambda ans, a, b, c: lambda g: g * a * c,
       lambda ans, a, b, c: lambda g: g * a * b)
defjvp(_product3, lambda g, ans, a, b, c: g * b * c, lambda g, ans, a, b, c: g * a * c,
       lambda g, ans, a, b, c: g * a * b)


@pytest.mark.parametrize("mode", ["rev", "fwd"])
@pytest.mark.parametrize("arity", [2, 3])
def test_a_node_names_parents_from_before_the_recording_in_parent_order(mode, arity):
    # The recording opens inside the traced function: a new node's parents are nodes from before
    # (unrecorded, numbered as first met, in parent order) or from inside. Two parents and more take
    # different paths through the recorder.
    recordings = []

    def f(x):
        sin, exp = anp.sin(x), anp.exp(x)
        with adtrace.record() as rec:
            cos = anp.cos(x)
            out = exp * sin * cos if arity == 2 else _product3(sin, cos, exp)
        recordings.append(rec)
        return out

    if mode == "rev":
        grad(f)(0.5)
    else:
        make_jvp(f)(0.5)(1.0)
    cos, *nodes = recordings[0].of_kind("node" if mode == "rev" else "jvp_node")
    assert cos.parents == ("u0_unrecorded",)  # x, the trace's root
    if arity == 2:
        both_before, mixed = nodes
        assert both_before.parents == ("u1_unrecorded", "u2_unrecorded")  # exp, sin
        assert mixed.parents == (both_before.label, cos.label)
    else:
        [node] = nodes
        assert node.parents == ("u1_unrecorded", cos.label, "u2_unrecorded")  # sin, cos, exp


def test_calls_imply_the_sites_they_keep():
    """``record(calls=True)`` keeps each node's primitive call and the user's line that made it,
    without ``sites=True`` (the per-node checker records so)."""
    with adtrace.record(calls=True) as rec:
        grad(lambda x: anp.sin(x) * x)(0.5)
    nodes = rec.of_kind("node")
    assert [e.primitive for e in nodes] == ["sin", "multiply"]
    assert set(rec.calls) == {e.label for e in nodes}
    assert all(e.site and e.site == rec.calls[e.label].site and "test_recorder.py:" in e.site for e in nodes)



def test_a_recording_entered_inside_a_trace_numbers_levels_from_the_trace_open():
    """A recording opened inside a function being differentiated: nodes whose parents it did not
    see made take the level of the trace open when it began (0: grad's), as the enclosing
    recording numbers them."""
    inner = []

    def f(x):
        with adtrace.record() as rec:
            y = anp.sin(x) * x
        inner.append(rec)
        return y

    with adtrace.record() as outer:
        assert grad(f)(0.5) == pytest.approx(np.cos(0.5) * 0.5 + np.sin(0.5))
    assert [(e.primitive, e.parents[0], e.level) for e in inner[0].of_kind("node")] == [
        ("sin", "u0_unrecorded", 0), ("multiply", "v0_sin", 0)]
    assert [(e.primitive, e.level) for e in outer.of_kind("node")] == [("sin", 0), ("multiply", 0)]

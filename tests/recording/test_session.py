"""record(): exact restore, nesting, order, threads."""

import gc
import threading
import warnings
import weakref
from pathlib import Path

import autograd.core as core
import autograd.numpy as anp
import numpy as np
import pytest
from autograd import grad
from autograd.core import make_jvp
from autograd.extend import defvjp, primitive

import adtrace
from adtrace.recording.autograd import hooks
from primitives import fails_in_its_vjp
from restored import ORIGINALS, assert_restored, patched_points


def test_patched_inside_restored_after():
    with adtrace.record():
        assert all(hooks.is_patched(p) for p in hooks.HOOK_POINTS)
        assert core.add_outgrads is not ORIGINALS["autograd.core.add_outgrads"]
    assert_restored()
    assert core.add_outgrads is ORIGINALS["autograd.core.add_outgrads"]
    assert "__init__" in vars(core.VJPNode) and "__init__" in vars(core.JVPNode)


@pytest.mark.parametrize("error", [ValueError, KeyboardInterrupt])
def test_restored_when_the_body_raises(error):
    with pytest.raises(error):
        with adtrace.record():
            grad(lambda x: x * x)(3.0)
            raise error()
    assert_restored()


def test_restored_after_an_abandoned_backward_pass():
    interrupt = fails_in_its_vjp(KeyboardInterrupt)
    with pytest.raises(KeyboardInterrupt):
        with adtrace.record() as rec:
            grad(lambda x: interrupt(x * x) * x)(2.0)
    assert_restored()
    (query,) = rec.queries
    assert rec.query_events(query)[-1].error == "KeyboardInterrupt"
    assert grad(lambda x: x * x)(3.0) == 6.0


def test_abandoned_toposort_generator():
    with adtrace.record() as rec:
        end = core.trace(core.VJPNode.new_root(), lambda x: anp.sin(x) * x, 0.5)[1]
        walk = core.toposort(end)
        next(walk)  # a pass abandoned after one visit
        del walk
        grad(lambda x: x * x)(3.0)
    assert_restored()
    assert rec.visit_order(1) == ["v4_multiply", "v3_root"]


def test_nested_recorders_both_receive_events():
    with adtrace.record() as outer:
        grad(lambda x: x * x)(3.0)
        start = len(outer.events)
        with adtrace.record(capture="structure") as inner:
            grad(lambda x: anp.sin(x))(1.0)
        during = outer.events[start:]
        assert all(hooks.is_patched(p) for p in hooks.HOOK_POINTS)  # the outer one still records
        grad(lambda x: x * 2.0)(1.0)
    assert_restored()
    assert len(outer.queries) == 3 and len(inner.queries) == 1
    assert [e.kind for e in inner.events] == [e.kind for e in during]
    assert [e.primitive for e in inner.of_kind("node")] == ["sin"]
    assert inner.of_kind("node")[0].label == "v1_sin"  # each recording numbers its own nodes
    assert [e for e in during if e.kind == "node"][0].label == "v3_sin"
    assert [e for e in during if e.kind == "node"][0].value == np.sin(1.0)
    assert inner.of_kind("node")[0].value is None  # structure
    assert outer.gradient(3) == 2.0


def test_leaving_out_of_order_is_an_error_and_unpatches():
    outer, inner = adtrace.record(), adtrace.record()
    outer.__enter__()
    inner_rec = inner.__enter__()
    with pytest.raises(adtrace.RecordingOrderError, match="innermost first"):
        outer.__exit__(None, None, None)
    assert_restored()
    assert inner.__exit__(None, None, None) is False  # already closed: harmless
    grad(lambda x: x * x)(3.0)
    assert inner_rec.events == []


def test_a_recorder_is_entered_once():
    rec = adtrace.record()
    with rec:
        pass
    with pytest.raises(RuntimeError, match="already entered"):
        rec.__enter__()
    assert_restored()


def test_other_threads_unaffected_and_unrecorded():
    f = lambda x: anp.sum(anp.tanh(x * x) * x)
    x = np.linspace(-1.0, 1.0, 7)
    expected = grad(f)(x)
    results, started, stop = [], threading.Event(), threading.Event()

    def other():
        started.set()
        while not stop.is_set() or len(results) < 5:
            results.append(grad(f)(x))

    worker = threading.Thread(target=other)
    worker.start()
    started.wait()
    try:
        with adtrace.record() as rec:
            for _ in range(20):
                g = grad(lambda v: v * 3.0)(2.0)
    finally:
        stop.set()
        worker.join()
    assert_restored()
    assert g == 3.0
    assert all(np.array_equal(r, expected) for r in results)
    assert {e.primitive for e in rec.of_kind("node")} == {"multiply"}
    assert len(rec.queries) == 20 and len(rec.of_kind("root")) == 20


def test_two_threads_record_separately():
    recordings = {}

    def run(name, f, x):
        with adtrace.record() as rec:
            for _ in range(10):
                grad(f)(x)
        recordings[name] = rec

    threads = [threading.Thread(target=run, args=("sin", anp.sin, 0.3)),
               threading.Thread(target=run, args=("square", lambda x: x * x, 2.0))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert_restored()
    assert {e.primitive for e in recordings["sin"].of_kind("node")} == {"sin"}
    assert {e.primitive for e in recordings["square"].of_kind("node")} == {"multiply"}
    assert [float(recordings["square"].gradient(q)) for q in recordings["square"].queries] == [4.0] * 10


def test_leaving_on_another_thread_is_an_error_and_closes_it():
    rec = adtrace.record()
    recording = rec.__enter__()
    errors = []
    t = threading.Thread(target=lambda: errors.append(_exit_error(rec)))
    t.start()
    t.join()
    assert errors and "thread that entered it" in errors[0]
    assert patched_points() == []  # nothing left patched
    grad(lambda x: x * x)(3.0)
    assert recording.events == []
    rec.__exit__(None, None, None)  # the entering thread leaves too: harmless
    assert_restored()


def test_a_recording_left_inside_a_backward_pass_receives_nothing_more():
    holder = {}

    @primitive
    def tap(x):
        return x

    defvjp(tap, lambda ans, x: lambda g: (holder["record"].__exit__(None, None, None), g)[1])
    holder["record"] = adtrace.record()
    rec = holder["record"].__enter__()
    grad(lambda x: anp.sin(tap(x) * x) * x)(2.0)
    assert_restored()
    last = rec.events[-1]  # the visit of tap, whose vjp left the recording
    assert (last.kind, last.node) == ("toposort", "v1_tap")
    assert not rec.of_kind("backward_end")


def _exit_error(rec):
    try:
        rec.__exit__(None, None, None)
    except adtrace.RecordingOrderError as exc:
        return str(exc)
    return ""


def test_a_patch_made_inside_the_block_stays_after_it():
    mine = lambda prev, g: ORIGINALS["autograd.core.add_outgrads"](prev, g)  # noqa: E731
    try:
        with pytest.warns(adtrace.PatchConflictWarning, match="add_outgrads.* left as it is now"):
            with adtrace.record():
                core.add_outgrads = mine
        assert core.add_outgrads is mine
        assert all(vars(p.owner)[p.attribute] is ORIGINALS[p.name] for p in hooks.HOOK_POINTS[1:])
    finally:
        core.add_outgrads = ORIGINALS["autograd.core.add_outgrads"]
    assert_restored()


def test_a_patch_undone_inside_the_block_stays_undone():
    original = ORIGINALS["autograd.core.add_outgrads"]
    mine = lambda prev, g: original(prev, g)  # noqa: E731
    core.add_outgrads = mine
    try:
        with pytest.warns(adtrace.PatchConflictWarning, match="add_outgrads.* left as it is now"):
            with adtrace.record() as rec:
                core.add_outgrads = original  # the user's own undo, while recording
                grad(lambda x: x * x)(3.0)
        assert core.add_outgrads is original
        assert rec.of_kind("backward_end")  # the other hooks recorded on
    finally:
        core.add_outgrads = original
    assert_restored()


def test_a_hook_of_an_earlier_recording_put_back_inside_a_block_ends_as_autograds_own(recwarn):
    """A wrapper saved in one block and assigned back in a later one (a test restoring what it
    saved) calls autograd's own function and records nothing: it is not the user's patch to keep."""
    with adtrace.record():
        saved = core.add_outgrads
    with adtrace.record() as rec:
        core.add_outgrads = saved
        grad(lambda x: x * x)(3.0)
    assert core.add_outgrads is ORIGINALS["autograd.core.add_outgrads"]
    assert not [w for w in recwarn if issubclass(w.category, adtrace.PatchConflictWarning)]
    assert not rec.of_kind("add_outgrads") and rec.of_kind("backward_end")  # (the stale one records nothing)
    assert_restored()


def test_a_user_patch_kept_through_nested_recordings_and_two_engines():
    from micrograd.engine import Value

    original = ORIGINALS["autograd.core.add_outgrads"]
    value_class = dict(vars(Value))
    mine = lambda prev, g: original(prev, g)  # noqa: E731
    core.add_outgrads = mine
    try:
        with adtrace.record(), adtrace.record(engine="micrograd"), adtrace.record():
            grad(lambda x: x * x)(3.0)
        assert core.add_outgrads is mine
        assert dict(vars(Value)) == value_class and all(vars(Value)[k] is v for k, v in value_class.items())
    finally:
        core.add_outgrads = original
    assert_restored()


@pytest.mark.parametrize("capture", ["auto", "full", "structure"])
def test_a_recording_is_freed_with_its_last_reference(capture):
    """No reference cycle through the recorder: a recording no longer used is freed at once, not
    when Python's cyclic collector next runs (until then it kept every event and the node table)."""
    gc.collect()
    gc.disable()
    try:
        with adtrace.record(capture=capture) as rec:
            grad(lambda x: anp.sum(anp.sin(x) * x))(np.array([0.5, 1.5]))
            make_jvp(lambda x: anp.sin(x) * x, 0.5)(1.0)
            grad(grad(lambda x: anp.sin(x) * x))(0.5)  # boxes of an outer trace: Keeper.box_level
        assert rec.of_kind("backward_end")
        alive = weakref.ref(rec)
        del rec
        assert alive() is None
    finally:
        gc.enable()


def test_root_is_the_former_name_of_relative_to_and_still_works_with_a_warning():
    folder = str(Path(__file__).resolve().parents[1])  # tests/: sites read recording/test_session.py:<line>
    sites = {}
    for keyword in ("relative_to", "root"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with adtrace.record(sites=True, **{keyword: folder}) as rec:
                grad(lambda x: x * x)(3.0)
        sites[keyword] = [e.site for e in rec.of_kind("node")]
        deprecations = [w for w in caught if issubclass(w.category, DeprecationWarning)]
        assert len(deprecations) == (keyword == "root"), [str(w.message) for w in caught]
    assert sites["root"] == sites["relative_to"] and sites["root"][0].startswith("recording/test_session.py:")
    with pytest.raises(TypeError, match="relative_to= alone"):
        adtrace.record(relative_to=folder, root=folder)

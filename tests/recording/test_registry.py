"""The session's shared state under concurrency: logical contexts (asyncio), generators, a thread
that ends inside record(), fork, and our own wrappers found where someone else put them back."""

import asyncio
import contextlib
import gc
import os
import threading
import time
import warnings

import autograd.core as core
import pytest
from autograd import grad

import adtrace
from adtrace.recording import registry
from adtrace.recording.autograd import hooks
import compiled_twins
from children import fork_while, wait_for
from restored import ORIGINALS, assert_restored, patched_points
from seed import is_exact_square, record_square


# -------------------- logical contexts --------------------


def test_asyncio_tasks_each_record_only_what_they_run():
    async def task(f, x, rounds):
        with adtrace.record() as rec:
            for _ in range(rounds):
                grad(f)(x)
                await asyncio.sleep(0)  # the other task runs here, inside this one's block
        return rec

    async def both():
        return await asyncio.gather(task(lambda x: x * x, 3.0, 5), task(lambda x: x * 2.0 + x, 1.0, 7))

    squares, doubles = asyncio.run(both())
    assert_restored()
    assert [float(squares.gradient(q)) for q in squares.queries] == [6.0] * 5
    assert [float(doubles.gradient(q)) for q in doubles.queries] == [3.0] * 7
    assert {e.primitive for e in squares.of_kind("node")} == {"multiply"}
    assert {e.primitive for e in doubles.of_kind("node")} == {"multiply", "add"}


def test_a_generator_open_across_a_yield_says_so_and_records_its_caller():
    def recording_generator():
        with adtrace.record() as rec:
            grad(lambda x: x * x)(3.0)
            yield rec
            grad(lambda x: x * x)(3.0)

    steps = recording_generator()
    with pytest.warns(adtrace.RecorderWarning, match="open across a yield"):
        rec = next(steps)
        grad(lambda x: x * 5.0)(1.0)  # the caller, while the generator is suspended: recorded, deterministically
    with pytest.raises(StopIteration):
        next(steps)
    assert_restored()
    assert [float(rec.gradient(q)) for q in rec.queries] == [6.0, 5.0, 6.0]


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "pure Python"])
def test_a_value_class_recording_open_across_a_yield_says_so_and_records_its_caller(compiled):
    """As autograd's: a value class's recorder (its ``live`` a member of the compiled recorder's base, or an
    attribute) entered in a generator says so once and records its caller while the generator is suspended; once
    the block ends, nothing more is recorded into it."""
    from value_classes import Value

    def square(x):
        a = Value(x)
        out = a * a
        out.backward()
        return a.grad

    def recording_generator():
        with adtrace.record(engine=Value) as rec:
            square(3.0)
            yield rec
            square(4.0)

    if compiled and not compiled_twins.in_use("recorder"):
        pytest.skip("the value-class recorder's twin is not built")
    with (contextlib.nullcontext() if compiled else compiled_twins.pure_python("recorder")):
        steps = recording_generator()
        try:
            # (said when the calls are told to the recorder: at the read, for a class recompiled by adtrace)
            with pytest.warns(adtrace.RecorderWarning, match="open across a yield"):
                rec = next(steps)
                assert square(5.0) == 10.0  # the caller, while the generator is suspended: recorded
                with pytest.raises(StopIteration):
                    next(steps)
                assert square(6.0) == 12.0  # after the block: not recorded
                made = [e.value for e in rec.of_kind("node") if e.primitive == "*"]
        finally:
            steps.close()
    assert made == [9.0, 25.0, 16.0]


def test_a_contextmanager_generator_is_what_it_records():
    from contextlib import contextmanager

    @contextmanager
    def recording():
        with adtrace.record() as rec:
            yield rec

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with recording() as rec:
            grad(lambda x: x * x)(3.0)
    assert_restored()
    assert len(rec.queries) == 1


def test_an_asynccontextmanager_generator_is_what_it_records():
    from contextlib import asynccontextmanager

    @asynccontextmanager
    async def recording():
        with adtrace.record() as rec:
            yield rec

    async def main():
        async with recording() as rec:
            grad(lambda x: x * x)(3.0)
        return rec

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rec = asyncio.run(main())
    assert_restored()
    assert len(rec.queries) == 1


def test_a_pytest_fixture_is_what_it_records(pytester):
    """``@pytest.fixture def rec(): with adtrace.record() as r: yield r`` records each test, silently."""
    pytester.makepyfile('''
import pytest
from autograd import grad
import adtrace

@pytest.fixture
def rec():
    with adtrace.record() as r:
        yield r

@pytest.mark.parametrize("x", [1.0, 2.0, 3.0])
def test_square(rec, x):
    assert grad(lambda x: x * x)(x) == 2 * x
    assert len(rec.queries) == 1
''')
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-W", "error::UserWarning")
    result.assert_outcomes(passed=3)
    assert "open across a yield" not in result.stdout.str()


# -------------------- threads --------------------


def test_a_thread_that_ends_inside_record_is_recovered_once():
    entered = []

    def abandon():
        block = adtrace.record()
        block.__enter__()  # never left
        grad(lambda x: x * x)(3.0)
        entered.append(block)

    with pytest.warns(adtrace.RecorderWarning, match="a thread ended inside record") as caught:
        worker = threading.Thread(target=abandon)
        worker.start()
        worker.join()
        for _ in range(100):  # (the thread's locals are collected as it ends)
            if registry.active_recordings() == 0:
                break
            time.sleep(0.01)
    assert entered and len([w for w in caught if "thread ended" in str(w.message)]) == 1
    assert_restored()
    assert is_exact_square(record_square())


# -------------------- fork --------------------


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")  # (3.12+: on purpose)
def test_fork_while_another_thread_records():
    """The child holds no other thread's recording: unpatched, no lock held, and it records itself."""

    def keep_recording():
        with adtrace.record():
            grad(lambda x: x * x)(3.0)

    def in_child():
        unpatched = patched_points() == []
        assert is_exact_square(record_square())
        return unpatched and registry.active_recordings() == 0

    statuses = fork_while(keep_recording, in_child)
    assert statuses == [0] * 20
    assert_restored()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")  # (3.12+: on purpose)
def test_a_fork_child_does_not_say_a_thread_ended():
    """The recording thread did not end: the child never had it (the parent's thread-locals are
    collected in the child). The child drops its recording without a word."""
    told = []

    def keep_recording():
        with adtrace.record():
            grad(lambda x: x * x)(3.0)

    def in_child():
        gc.collect()
        return not told

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        # (3.12+ warns of the fork itself, in the parent: on purpose here, and not adtrace's)
        warnings.filterwarnings("ignore", "This process .* is multi-threaded", DeprecationWarning)
        warnings.showwarning = lambda message, *args, **kwargs: told.append(str(message))
        statuses = fork_while(keep_recording, in_child)
    assert statuses == [0] * 20, told
    assert not told
    assert_restored()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_the_forking_threads_own_recording_goes_on_in_the_child():
    with adtrace.record() as rec:
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                grad(lambda x: x * x)(3.0)  # recorded in the child's copy of the recording
                code = 0 if len(rec.queries) == 1 and registry.active_recordings() == 1 else 3
            finally:
                os._exit(code)
        status = wait_for(pid, seconds=20)
    assert status == 0 and rec.queries == []  # the parent's copy saw nothing of the child's
    assert_restored()


# -------------------- our own wrappers, put back by someone else --------------------


def test_a_stale_wrapper_put_back_is_never_wrapped_and_never_records():
    """pytest's monkeypatch undo puts back the wrapper it saw: the next recording must not wrap
    it (each add_outgrads counted twice), and it must not stay installed."""
    with pytest.warns(adtrace.PatchConflictWarning):
        with adtrace.record():
            stale = core.add_outgrads
            core.add_outgrads = lambda prev, g: stale(prev, g)  # someone wraps our wrapper
    assert core.add_outgrads.__name__ == "<lambda>"  # theirs: kept
    core.add_outgrads = stale  # ... and their undo puts ours back
    try:
        assert grad(lambda x: x * x)(3.0) == 6.0 and registry.active_recordings() == 0  # a pass-through
        assert is_exact_square(record_square())  # two add_outgrads events, not four
        assert core.add_outgrads is ORIGINALS["autograd.core.add_outgrads"]  # the original, not the stale one
        core.add_outgrads = lambda prev, g: stale(prev, g)  # a foreign wrapper around a stale one stays...
        with adtrace.record() as rec:
            grad(lambda x: x * x)(3.0)
        assert len(rec.of_kind("add_outgrads")) == 2  # ... and the stale one inside it records nothing
    finally:
        core.add_outgrads = ORIGINALS["autograd.core.add_outgrads"]
    assert_restored()


def test_remove_stale_hooks_puts_autograds_own_back_and_leaves_a_recording_alone():
    with pytest.warns(adtrace.PatchConflictWarning):
        with adtrace.record():
            stale = core.add_outgrads
            core.add_outgrads = lambda prev, g: stale(prev, g)
    core.add_outgrads = stale  # a user's undo puts our wrapper back after the block
    try:
        with adtrace.record():
            installed = core.add_outgrads
            assert registry.remove_stale_hooks() == [] and core.add_outgrads is installed  # in use: left
        core.add_outgrads = stale
        assert registry.remove_stale_hooks() == ["autograd.core.add_outgrads"]
        assert registry.remove_stale_hooks() == []
    finally:
        core.add_outgrads = ORIGINALS["autograd.core.add_outgrads"]
    assert_restored()


def test_under_pytest_monkeypatch_every_later_recording_is_exact(pytester):
    pytester.makepyfile('''
import autograd.core as core
from autograd import grad
import adtrace

def test_wraps_a_hooked_attribute(monkeypatch):
    wrapped = core.add_outgrads
    monkeypatch.setattr(core, "add_outgrads", lambda p, g: wrapped(p, g))
    assert grad(lambda x: x * x)(3.0) == 6.0

def test_later_recordings_are_exact():
    with adtrace.record() as rec:
        grad(lambda x: x * x)(3.0)
    assert len(rec.of_kind("add_outgrads")) == 2
''')
    pytester.makeconftest('''
def pytest_unconfigure(config):
    from adtrace.recording.autograd import hooks
    if any(hooks.is_patched(p) for p in hooks.HOOK_POINTS):
        raise SystemExit("an adtrace wrapper is still installed")
''')
    result = pytester.runpytest_subprocess("--adtrace", "-p", "no:cacheprovider", "-W", "ignore::UserWarning")
    result.assert_outcomes(passed=2)
    assert result.ret == 0


def test_installing_is_all_or_nothing(monkeypatch):
    """An interrupt on the third hook point leaves none patched; the next recording is exact."""
    def interrupted(original, active):
        raise KeyboardInterrupt

    points = list(hooks.HOOK_POINTS)
    from dataclasses import replace

    points[2] = replace(points[2], wrap=interrupted)
    monkeypatch.setattr(hooks, "HOOK_POINTS", tuple(points))
    with pytest.raises(KeyboardInterrupt):
        with adtrace.record():
            pass
    monkeypatch.undo()
    assert_restored()
    assert is_exact_square(record_square())


def test_an_engine_whose_undo_fails_is_installed_again_by_the_next_recording(monkeypatch):
    """An undo of its own that raises: the rest is undone, the error raised, and the next record()
    installs the hooks again (it found the old install still registered, and recorded nothing)."""
    from adtrace.recording.patching import Patcher

    real_undo = Patcher.undo

    def failing_undo(self):
        self.on_undo(lambda: 1 / 0)
        return real_undo(self)

    monkeypatch.setattr(Patcher, "undo", failing_undo)
    with pytest.raises(ZeroDivisionError):
        with adtrace.record():
            pass
    monkeypatch.undo()
    assert_restored()
    with adtrace.record() as rec:
        grad(lambda x: x * x)(3.0)
    assert len(rec.of_kind("add_outgrads")) == 2


def test_each_engine_prints_as_what_it_records():
    """An engine shown in a debugger or a log says which engine it is (and which class, for an
    engine of micrograd's shape)."""
    from value_classes import Value

    assert repr(registry.engine_named("autograd")) == "<engine autograd>"
    assert repr(registry.engine_named(Value)) == "<engine micrograd: Value>"


def test_unrecorded_runs_unseen_by_the_open_recordings_and_a_record_inside_it_records_alone():
    import autograd.numpy as anp

    def inner():
        grad(anp.sin)(1.0)  # unseen
        with adtrace.record() as own:
            grad(anp.tanh)(1.0)
        return own

    with adtrace.record() as outer:
        own = registry.unrecorded(inner)
        grad(anp.cos)(1.0)
    assert [e.primitive for e in outer.of_kind("node")] == ["cos"]
    assert [e.primitive for e in own.of_kind("node")] == ["tanh"]

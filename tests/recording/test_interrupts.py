"""A SIGINT during record()'s install or restore is held back until it is done, then delivered."""

import signal
import threading
from dataclasses import replace

import autograd.core as core
import pytest

import adtrace
from adtrace.recording import registry
from adtrace.recording.autograd import hooks
from adtrace.recording.interrupts import deferred, restore
from restored import ORIGINALS, patched_points


@pytest.fixture(autouse=True)
def default_sigint():
    """Python's own SIGINT handler (KeyboardInterrupt), whatever ran before."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_a_sigint_inside_is_delivered_after_the_block():
    done = []
    with pytest.raises(KeyboardInterrupt):
        with deferred():
            signal.raise_signal(signal.SIGINT)
            done.append("the rest of the block")
    assert done == ["the rest of the block"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_the_previous_handler_gets_it_once():
    received = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    try:
        with deferred():
            signal.raise_signal(signal.SIGINT)
            assert received == []
        assert received == [signal.SIGINT]
    finally:
        signal.signal(signal.SIGINT, previous)


def test_restore_puts_back_what_an_interrupted_block_left():
    """An interrupt right after the handler was replaced, before the block's own restore: the
    session calls restore() on its way out."""
    block = deferred()
    block.__enter__()  # (never left: as if interrupted there)
    assert signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    restore()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_another_thread_defers_nothing():
    seen = []

    def run():
        with deferred():
            seen.append(signal.getsignal(signal.SIGINT))

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    assert seen == [signal.default_int_handler]


def test_a_sigint_while_installing_comes_after_it_and_leaves_autograd_as_it_was(monkeypatch):
    wrapped = []

    third = hooks.HOOK_POINTS[2]

    def wrap_and_interrupt(point):
        def wrap(original, active):
            wrapped.append(point.name)
            if point is third:
                signal.raise_signal(signal.SIGINT)
            return point.wrap(original, active)
        return wrap

    monkeypatch.setattr(hooks, "HOOK_POINTS", tuple(replace(p, wrap=wrap_and_interrupt(p)) for p in hooks.HOOK_POINTS))
    with pytest.raises(KeyboardInterrupt):
        with adtrace.record():
            pytest.fail("the block ran")
    assert len(wrapped) == len(ORIGINALS)  # the install went to its end before the interrupt
    monkeypatch.undo()
    assert patched_points() == []
    assert registry.active_recordings() == 0 and core.add_outgrads is ORIGINALS["autograd.core.add_outgrads"]


def test_with_the_default_action_the_process_ends_after_the_block():
    """SIGINT's default action (no Python handler): the block finishes, then SIGINT ends the process."""
    import subprocess
    import sys

    code = ("import signal\nsignal.signal(signal.SIGINT, signal.SIG_DFL)\n"
            "from adtrace.recording.interrupts import deferred\n"
            "with deferred():\n    signal.raise_signal(signal.SIGINT)\n    print('the block ended', flush=True)\n"
            "print('after the block', flush=True)\n")
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert child.stdout == "the block ended\n" and child.returncode == -signal.SIGINT, (child.stdout, child.stderr)

"""A SIGINT held back while ``record()`` installs or restores hooks, delivered when it is done.

Python runs signal handlers in the main thread between bytecodes: the default SIGINT handler can
raise ``KeyboardInterrupt`` in the middle of a restore. Inside ``deferred()`` a SIGINT is noted and
the previous handler is called with it once the block ends, so Ctrl-C stops the program after the
engine is whole again. Elsewhere (another thread, a handler not installed from Python) nothing is
deferred; the session's code stays exception-safe at every line by itself (``registry.abandon``).
"""

import threading
from contextlib import contextmanager

import _signal as signal  # (signal's own functions without its enum conversions: twice per record() block)


@contextmanager
def deferred():
    """Hold back SIGINT for the block (in the main thread), then deliver it."""
    main = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGINT) if main else None
    if previous is None:  # (another thread, or a handler not installed from Python)
        yield
        return
    caught = []

    def hold(signum, frame):
        caught.append(frame)

    hold.adtrace_deferred = previous
    signal.signal(signal.SIGINT, hold)  # (an interrupt before the try: restore() puts the previous one back)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if caught:
            _deliver(previous, caught[0])


def restore():
    """Put back the handler ``deferred()`` replaced, where an exception (an interrupt) came before
    its own restore."""
    if threading.current_thread() is threading.main_thread():
        handler = signal.getsignal(signal.SIGINT)
        while hasattr(handler, "adtrace_deferred"):
            handler = handler.adtrace_deferred
            signal.signal(signal.SIGINT, handler)


def _deliver(handler, frame):
    if handler == signal.SIG_DFL:
        signal.raise_signal(signal.SIGINT)
    elif callable(handler):
        handler(signal.SIGINT, frame)  # (the default one raises KeyboardInterrupt)

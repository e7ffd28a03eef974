"""Forked children in tests: wait for one without hanging the suite on a deadlocked child, and fork
while another thread records."""

import os
import threading
import time


def wait_for(pid, seconds):
    """The child's exit code, or ``"deadlocked"`` (and the child killed) after ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.01)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    return "deadlocked"


def fork_while(background, in_child, times=20, seconds=20):
    """Fork ``times`` children while another thread runs ``background()`` over and over; each child
    exits 0 when ``in_child()`` returns true, 3 when false, 1 when it raises. Their exit codes."""
    stop = threading.Event()

    def keep_running():
        while not stop.is_set():
            background()

    worker = threading.Thread(target=keep_running)
    worker.start()
    statuses = []
    try:
        for _ in range(times):
            pid = os.fork()
            if pid == 0:  # the child
                code = 1
                try:
                    code = 0 if in_child() else 3
                finally:
                    os._exit(code)
            statuses.append(wait_for(pid, seconds))
    finally:
        stop.set()
        worker.join()
    return statuses

"""Forked children in tests: wait for one, without hanging the suite on a deadlocked child."""

import os
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

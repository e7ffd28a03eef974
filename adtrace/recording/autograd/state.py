"""Which recorders each thread feeds, and how deeply traces nest on it."""

import threading


class _ThreadState(threading.local):
    def __init__(self):
        self.recorders = ()  # the recorders active on this thread, outermost first
        # autograd numbers traces with a global counter that an exception inside a trace leaves
        # raised (TraceStack.new_trace has no try/finally), so nesting is counted here instead:
        self.depth = 0  # traces open on this thread (seen through the trace hook)
        self.levels = {}  # autograd's trace number -> its nesting depth when it was opened


state = _ThreadState()

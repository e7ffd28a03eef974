"""How deeply autograd's traces nest on each thread (the trace wrapper counts them)."""

import threading


class _ThreadState(threading.local):
    def __init__(self):
        # autograd numbers traces with a global counter that an exception inside a trace leaves
        # raised (TraceStack.new_trace has no try/finally), so nesting is counted here instead:
        self.depth = 0  # traces open on this thread (seen through the trace hook)
        self.levels = {}  # autograd's trace number -> its nesting depth when it was opened


state = _ThreadState()

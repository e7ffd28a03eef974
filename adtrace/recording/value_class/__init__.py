"""Hooking a value class: a Python class whose values keep their own data, gradient and local
backward (micrograd's ``Value``, a learner's class of its shape), engine-neutral at the output.

An engine adapter of such a class (``recording/micrograd/engine.py``) configures what is here:
``hooks.ClassHooks`` installs, at the engine's ``pass_start``, ``local_backward`` and
``grad_write`` (``recording/engines.Engine``) and on ``__init__`` as its ``Shape`` says, the
wrappers and data descriptors (``descriptors.py``: the attribute kept in the instance ``__dict__``
or its ``__slots__`` entry; ``tracked.py``: the numbers a local backward reads, so that ``+=`` is
seen) that tell the ``hooks.Callbacks`` as the engine runs; ``recorder.Recorder`` is a sink
writing adtrace's events (how each callback maps to autograd's vocabulary: its docstring).
"""

"""micrograd's engine, and learners' Value classes of its shape: hooked, engine-neutral at the output.

``record(engine="micrograd")`` / ``record(engine=MyValue)`` / ``attach(cls, sink)`` go through
``engine.py``: one adapter (``recording/engines.Engine``), configured by the class's ``Shape``
(``shape.py``: ``micrograd.engine.Value`` and a learner's class alike), installed by the session.
Its hooks (``hooks.py``, with ``descriptors.py`` and ``tracked.py``) call the ``hooks.Callbacks``
(exported as ``Sink``) as the engine runs; its ``Recorder`` (``recorder.py``) is a sink writing adtrace's
events (how each callback maps to autograd's vocabulary: its docstring); its ``EngineCode``
(``code.py``) maps each event to the statement of the class's own ``backward()``, read from its
source, and carries its operations (``ops.py``: forward and local derivatives by op).
"""

from .code import Statement, backward_statements
from .descriptors import MISSING
from .engine import Attachment, attach, hooked_classes
from .hooks import HookError, Sink
from .shape import Shape, ShapeError, check_shape

__all__ = ["MISSING", "Attachment", "HookError", "Shape", "ShapeError", "Sink", "Statement", "attach",
           "backward_statements", "check_shape", "hooked_classes"]

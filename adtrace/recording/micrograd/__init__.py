"""micrograd's engine, and learners' Value classes of its shape: hooked, engine-neutral at the output.

``record(engine="micrograd")`` / ``record(engine=MyValue)`` / ``attach(cls, sink)`` go through
``engine.py``: one adapter (``recording/engines.Engine``), configured by the class's ``Shape``
(``shape.py``: ``micrograd.engine.Value`` and a learner's class alike), installed by the session.
The hooks and the recorder are the value-class ones (``recording/value_class/``), installed at
the adapter's hook sites; what is micrograd's own is here: its shape, its ``EngineCode``
(``code.py``: each event mapped to the statement of the class's own ``backward()``, read from its
source) and its operations (``ops.py``: forward and local derivatives by op).
"""

from ..value_class.descriptors import MISSING
from ..value_class.hooks import HookError, Sink
from .code import Statement, backward_statements
from .engine import Attachment, attach, declare, hooked_classes
from .shape import Shape, ShapeError, check_shape

__all__ = ["MISSING", "Attachment", "HookError", "Shape", "ShapeError", "Sink", "Statement", "attach",
           "backward_statements", "check_shape", "declare", "hooked_classes"]

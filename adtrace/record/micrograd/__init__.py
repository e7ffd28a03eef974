"""micrograd's engine, and learners' Value classes of its shape: hooked, engine-neutral at the output."""

from .hooks import MISSING, Attachment, HookError, Sink, attach, hooked_classes
from .shape import Shape, ShapeError, check_shape

__all__ = ["MISSING", "Attachment", "HookError", "Shape", "ShapeError", "Sink", "attach", "check_shape",
           "hooked_classes"]

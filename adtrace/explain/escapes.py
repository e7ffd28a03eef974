"""Where the input left autograd's trace through a non-differentiable primitive: ``np.floor``,
``np.round``, ``np.sign``, a comparison (``x > 0``), ``np.argmax``... autograd runs these on the plain
values of their boxes (``register_notrace(VJPNode, fun)``) and makes no node, so no recording shows them. A call
run again under a profile hook sees each one that received the input's own box, and the user's line.

The hook is Python's profiler (``sys.setprofile``), set for that one call and put back after.
"""

import sys
import warnings
from dataclasses import dataclass
from typing import Optional

from autograd import make_vjp
from autograd.core import VJPNode
from autograd.tracer import isbox, notrace_primitives, primitive

from ..recording.callsite import relative_location, user_frame

PRIMITIVE_CODE = primitive(lambda: None).__code__  # every primitive's wrapper runs this code
ZERO_DERIVATIVE = frozenset({"floor", "ceil", "round", "around", "rint", "sign", "fix", "trunc"})
COMPARISONS = frozenset({"greater", "greater_equal", "less", "less_equal", "equal", "not_equal", "logical_and",
                         "logical_or", "logical_not", "logical_xor", "isfinite", "isinf", "isnan"})


@dataclass(frozen=True)
class Escape:
    primitive: str
    line: Optional[str]

    @property
    def reason(self):
        if self.primitive in ZERO_DERIVATIVE:
            return "zero-derivative"
        return "comparison" if self.primitive in COMPARISONS else "left-trace"


def escapes(of_x, x, relative_to=None, outputs=None):
    """The non-differentiable primitives that received the input's box while ``of_x(x)`` was traced,
    in call order, each once per line; the call's output appended to ``outputs`` if given."""
    found, roots = [], []

    def traced(box):
        roots.append(box)
        return of_x(box)

    def profile(frame, event, arg):
        if event != "call" or frame.f_code is not PRIMITIVE_CODE or not roots:
            return
        if frame.f_locals.get("f_wrapped") not in notrace_primitives[VJPNode]:
            return
        args = frame.f_locals.get("args", ())
        if any(isbox(a) and a is roots[0] for a in args):
            user = user_frame()
            line = relative_location(user.f_code.co_filename, user.f_lineno, user.f_globals.get("__name__"),
                                     relative_to) if user is not None else None
            escape = Escape(getattr(frame.f_locals.get("f_raw"), "__name__", "?"), line)
            if escape not in found:
                found.append(escape)

    previous = sys.getprofile()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Output seems independent of input")  # (autograd's: no path, as expected)
        sys.setprofile(profile)
        try:
            output = make_vjp(traced)(x)[1]
        finally:
            sys.setprofile(previous)
    if outputs is not None:
        outputs.append(output)
    return found

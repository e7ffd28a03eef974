"""One call of the user's function recorded, and nothing else: the ``Recording`` ``adtrace graph`` exports.

``report`` and ``view`` trace a call (``compare.trace_call``, ``compare.trace_engine_call``): the same
recording, then the reference engine and central differences beside it. A graph needs the recording
alone, so the function is called once: autograd's VJP with a seed of ones (reverse mode) or JVP
with a tangent of ones (forward mode) of argument ``argnum``, or an engine's ``backward()`` on its
result with every argument a leaf. Under ``record(sites=True)``, as theirs: each node keeps the
user's line that made it.
"""

from autograd import make_jvp, make_vjp
from autograd.core import vspace

from ..compare.arguments import differentiated, unary
from ..compare.traced_call import function_name
from ..recording.callsite import calls_user_code
from ..recording.events import FWD, REV
from ..recording.registry import engine_named
from ..recording.session import record
from .engine_call import as_leaves, one_class

MODES = (REV, FWD)


@calls_user_code
def recorded_call(f, args, argnum=0, mode=REV, capture="auto"):
    """The ``Recording`` of ``f`` differentiated at ``args`` with respect to argument ``argnum``."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}; got {mode!r}")
    x = differentiated(args, argnum)
    of_x = unary(f, args, argnum)
    with record(capture=capture, sites=True) as rec:
        if mode == REV:
            vjp, output = make_vjp(of_x)(x)
            vjp(vspace(output).ones())
        else:
            make_jvp(of_x)(x)(vspace(x).ones())
    return rec


@calls_user_code
def recorded_engine_call(f, args, engine="micrograd", capture="auto"):
    """The ``Recording`` of ``f`` through ``engine`` (``"micrograd"`` or a ``Value`` class of its shape):
    each argument a leaf, ``backward()`` run on the result."""
    adapter = engine_named(engine)
    with one_class(f, engine), record(engine=engine, capture=capture, sites=True) as rec:
        out = f(*[adapter.leaf(a) for a in as_leaves(args)])
        if not isinstance(out, adapter.cls):
            raise TypeError(f"{function_name(f)} returned a {type(out).__name__}, not a "
                            f"{adapter.cls.__qualname__}: nothing to call backward() on")
        adapter.backward(out)
    return rec

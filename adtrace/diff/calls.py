"""A call recorded for a diff: one run of the user's function and its backward pass, nothing else
(no reference engine, no finite differences: a diff compares two recordings).

Through autograd: ``make_vjp(f, argnum)(*args)``, its VJP called with a seed of ones. Through an engine
of micrograd's shape (``engine="micrograd"`` or a ``Value`` class): each argument a leaf, ``f`` called,
``backward()`` on its result. Values are kept whole (capture ``full``) and each node gets the user's line.
"""

from autograd import make_vjp
from autograd.core import vspace

from ..recording.callsite import calls_user_code
from ..recording.eventlog import collector_paused
from ..recording.registry import engine_named
from ..recording.session import record


def record_call(f, args, argnum=0, engine=None, capture="full", relative_to=None):
    """The ``Recording`` of ``f(*args)`` and its backward pass, through autograd (``engine`` None) or
    ``engine``."""
    with collector_paused():
        return _recorded(f, args, argnum, engine, capture, relative_to)


@calls_user_code  # (an engine's leaf made here for an argument is an input: no user line)
def _recorded(f, args, argnum, engine, capture, relative_to):
    if engine is None or engine == "autograd":
        with record(capture=capture, sites=True, calls=True, relative_to=relative_to) as rec:  # (calls: constants)
            vjp, out = make_vjp(f, argnum)(*args)
            vjp(vspace(out).ones())
        rec.argnum = argnum  # (the root is this argument: the diff pairs it with an engine's leaf of that position)
        return rec
    adapter = engine_named(engine)
    with record(engine=engine, capture=capture, sites=True, relative_to=relative_to) as rec:
        out = f(*(adapter.leaf(float(a) if type(a) is int else a) for a in args))
        if not isinstance(out, adapter.cls):
            raise TypeError(f"the function returned a {type(out).__name__}, not a {adapter.cls.__qualname__}: "
                            "nothing to call backward() on")
        adapter.backward(out)
    return rec

"""``--engine``: the command line's ``report``, ``view`` and ``check`` on an engine of micrograd's shape.

``adtrace report FILE.py:f --at 3.0 --engine micrograd`` (or ``--engine FILE.py:Value``, a learner's
own class) wraps each argument in the engine's ``Value``, calls ``f``, runs ``backward()`` on the
result and reports it as the autograd reports are made (``compare.traced_engine_call``);
``adtrace check ... --engine`` checks its nodes (``checker.engine_rules``). The command line keeps
its options and exit codes; this module is what differs.
"""

from ..checker.engine_rules import check_engine, check_engine_call
from ..compare.traced_engine_call import trace_engine_call
from ..recording.registry import engine_named
from .targets import TargetError, load_target


def engine_of(spec):
    """The ``engine=`` of ``record()`` that ``--engine SPEC`` names: ``"micrograd"``, or the class
    ``FILE.py:Value`` / ``module:Value`` names; its shape checked (a ``TargetError`` says what it lacks)."""
    engine = spec if spec == "micrograd" else load_target(spec)
    if not isinstance(engine, (str, type)):
        raise TargetError(f"--engine {spec} is a {type(engine).__name__}, not a class: give a Value class "
                          "of micrograd's shape, or micrograd")
    try:
        engine_named(engine)
    except (TypeError, ValueError) as exc:  # ShapeError (one line per thing missing), micrograd not installed
        first, *missing = str(exc).splitlines()
        raise TargetError(" ".join([first, "; ".join(line.strip(" -") for line in missing)]).strip()) from exc
    return engine


def as_leaves(values):
    """Every argument is a leaf the engine differentiates: ``--at 3`` is 3.0."""
    return tuple(float(v) if type(v) is int else v for v in values)


def engine_call(function, values, engine, capture="auto", rtol=None, node_checks=False):
    """The ``TracedCall`` of ``report`` and ``view`` through ``engine``."""
    call = trace_engine_call(function, as_leaves(values), engine=engine, capture=capture, rtol=rtol)
    return check_engine_call(call) if node_checks else call


def engine_check(function, values, engine):
    """The ``CheckReport`` of ``check`` through ``engine``."""
    return check_engine(function, *as_leaves(values), cls=engine)

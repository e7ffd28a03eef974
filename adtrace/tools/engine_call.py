"""``--engine``: the command line's ``report``, ``view`` and ``check`` on an engine of micrograd's shape.

``adtrace report FILE.py:f --at 3.0 --engine micrograd`` (or ``--engine FILE.py:Value``, a learner's
own class) wraps each argument in the engine's ``Value``, calls ``f``, runs ``backward()`` on the
result and reports it as the autograd reports are made (``compare.traced_engine_call``);
``adtrace check ... --engine`` checks its nodes (``checker.engine_rules``). The command line keeps
its options and exit codes; this module is what differs.
"""

import functools
import inspect
from contextlib import contextmanager

from ..checker.engine_rules import check_engine, check_engine_call
from ..compare.traced_call import function_name
from ..compare.traced_engine_call import trace_engine_call
from ..recording.callsite import source_location
from ..recording.registry import engine_named
from .targets import TargetError, load_target


def engine_of(spec):
    """The ``engine=`` of ``record()`` that ``--engine SPEC`` names: ``"micrograd"``, or the class
    ``FILE.py:Value`` / ``module:Value`` names; its shape checked (a
    ``TargetError`` keeps the ``ShapeError``'s lines: what it lacks, the declaration to write)."""
    engine = spec if spec == "micrograd" else load_target(spec)
    if not isinstance(engine, (str, type)):
        raise TargetError(f"--engine {spec} is a {type(engine).__name__}, not a class: give a Value class "
                          "of micrograd's shape, or micrograd")
    try:
        engine_named(engine)
    except (TypeError, ValueError) as exc:  # ShapeError (one line per thing missing), micrograd not installed
        lines = str(exc).splitlines()
        for i, line in enumerate(lines):  # (from the command line: the declaration's file names the class)
            if line.strip().startswith("with adtrace.record(engine=engine)"):
                lines.insert(i + 1, "    or put this declaration in a file and pass --engine FILE.py:NAME (NAME: the "
                                    "class, declared when the file is loaded)")
        raise TargetError("\n".join(lines)) from exc
    return engine


def as_leaves(values):
    """Every argument is a leaf the engine differentiates: ``--at 3`` is 3.0."""
    return tuple(float(v) if type(v) is int else v for v in values)


def engine_call(function, values, engine, capture="auto", rtol=None, node_checks=False):
    """The ``TracedCall`` of ``report`` and ``view`` through ``engine``."""
    with one_class(function, engine):
        call = trace_engine_call(function, as_leaves(values), engine=engine, capture=capture, rtol=rtol)
    return check_engine_call(call) if node_checks else call


def engine_check(function, values, engine):
    """The ``CheckReport`` of ``check`` through ``engine``."""
    cls = engine_named(engine).cls

    @functools.wraps(function)  # (its name, in what check_engine tells of it)
    def through_engine(*args):
        out = function(*args)
        if _twin(type(out), cls):  # (backward() would run on the other class: nothing recorded; named below)
            raise TypeError(f"returned a {type(out).__qualname__} of another class")
        return out

    with one_class(function, engine):
        report = check_engine(through_engine, *as_leaves(values), cls=engine)
    other = next((type(node.value) for node in report.recording.nodes.values()
                  if _twin(type(getattr(node, "value", None)), cls)), None)
    if other is not None:  # (wrapped as the data of the engine's values: nothing raised, nothing checkable)
        raise TargetError(_two_classes(function, other, cls))
    return report


@contextmanager
def one_class(function, engine):
    """What ``function`` raised, when it built values of another class of the engine's name (a second
    copy of the class: another file, or one file loaded twice), as a ``TargetError`` naming both
    classes and where each is defined, not as an error of the function."""
    try:
        yield
    except Exception as exc:
        cls = engine_named(engine).cls
        other = _other_class(exc, cls) or _other_class_in(inspect.unwrap(function), cls)
        if other is None:
            raise
        raise TargetError(_two_classes(function, other, cls)) from exc


def _two_classes(function, other, cls):
    return (f"{function_name(function)} built values of {_origin(other)}, not of the engine's {_origin(cls)}: two "
            "classes, one name; make both use one class (import it from one file)")


def _twin(kind, cls):
    return (isinstance(kind, type) and kind.__name__ == cls.__name__ and not issubclass(kind, cls)
            and not issubclass(cls, kind))


def _other_class(exc, cls):
    """The other class of a value (or the class itself) held by a frame the error went through."""
    tb = exc.__traceback__
    while tb is not None:
        for value in tb.tb_frame.f_locals.values():
            for kind in (type(value), value):
                if _twin(kind, cls):
                    return kind
        tb = tb.tb_next
    return None


def _other_class_in(function, cls):
    """The other class the function's module names (``Value`` or ``module.Value``)."""
    for value in getattr(function, "__globals__", {}).values():
        for kind in (value, getattr(value, cls.__name__, None) if inspect.ismodule(value) else None):
            if _twin(kind, cls):
                return kind
    return None


def _origin(cls):
    return f"{cls.__qualname__} of module {cls.__module__} ({source_location(cls)})"

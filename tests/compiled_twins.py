"""The compiled twins switched for a test, the one way every test that runs both ways does it: ``in_use``
(whether a twin is what its module runs now), ``needs`` (a test of the compiled way, skipped without it),
``pure_python`` (its pure-Python reference put in its place for a block), ``both_ways`` (a result with the twins,
then without) and ``fixture`` (each test run once each way). ``ADTRACE_PURE_PYTHON=1`` chooses at import, for the
whole process (``adtrace/recording/compiled.py``); this switches at run time, one twin at a time (each twin is an
optional build of its own: any mix can meet). A twin is named by its module without the underscore (``hooks``
for ``value_class/_hooks.c``)."""

import contextlib

import pytest

from adtrace.recording import values
from adtrace.recording.autograd import wrappers
from adtrace.recording.micrograd import engine
from adtrace.recording.value_class import deferred, descriptors, hooks, recorder, tracked

# wrappers' names for the twin's paths (None: Python)
WRAPPERS = ("RecordedVJP", "NodeInit", "JVPNodeInit", "AddOutgrads", "Visits")
OPERATORS = ("__add__", "__mul__", "__rmul__")  # what _tracked.c puts on TrackedFloat and TrackedInt

# each twin: (whether its module runs it now, what puts the pure-Python code in its place)
SWITCHES = {
    "values": (lambda: values._twin is not None, lambda patch: patch.setattr(values, "_twin", None)),
    "wrappers": (lambda: wrappers.RecordedVJP is not None,
                 lambda patch: [patch.setattr(wrappers, name, None) for name in WRAPPERS]),
    "descriptors": (lambda: descriptors.GradDescriptor is not descriptors.PURE["GradDescriptor"],
                    lambda patch: [patch.setattr(module, name, reference) for name, reference in
                                   descriptors.PURE.items() for module in (descriptors, hooks)]),
    "hooks": (lambda: hooks._twin is not None, lambda patch: patch.setattr(hooks, "_twin", None)),
    "tracked": (lambda: vars(tracked.TrackedFloat).get("__add__") not in (None, vars(tracked.Tracked)["__add__"]),
                lambda patch: [patch.setattr(kind, name, vars(tracked.Tracked)[name])
                               for kind in (tracked.TrackedFloat, tracked.TrackedInt) for name in OPERATORS]),
    "deferred": (lambda: deferred._twin is not None, lambda patch: patch.setattr(deferred, "_twin", None)),
    "recorder": (lambda: recorder.Recorder is not recorder.PythonRecorder,
                 lambda patch: [patch.setattr(module, "Recorder", recorder.PythonRecorder)
                                for module in (recorder, engine)]),
}


def in_use(*names):
    """Whether each twin named is built and what its module runs now."""
    return all(SWITCHES[name][0]() for name in names)


def needs(*names):
    """A test of the compiled way: skipped when a twin named is not built (or ``ADTRACE_PURE_PYTHON=1``)."""
    return pytest.mark.skipif(not in_use(*names), reason=f"the compiled twin(s) {', '.join(names)} not built "
                                                          "(or ADTRACE_PURE_PYTHON=1)")


@contextlib.contextmanager
def pure_python(*names):
    """The pure-Python code of each twin named (every twin: none named) in the block, as if it were not built."""
    with pytest.MonkeyPatch.context() as patch:
        for name in names or SWITCHES:
            SWITCHES[name][1](patch)
        yield


def both_ways(record, *names):
    """``record()``'s result with the twins named in use, then under ``pure_python(*names)``."""
    mine = record()
    with pure_python(*names):
        return mine, record()


def fixture(*names):
    """A fixture running each test that takes it twice: ``"compiled"`` (skipped when a twin named is not in use)
    and ``"pure Python"`` (under ``pure_python(*names)``); the test gets which. Assign it in the test module."""
    @pytest.fixture(params=["compiled", "pure Python"])
    def way(request):
        if request.param == "compiled":
            if not in_use(*names):
                pytest.skip(f"the compiled twin(s) {', '.join(names)} not built (or ADTRACE_PURE_PYTHON=1)")
            yield request.param
        else:
            with pure_python(*names):
                yield request.param
    return way

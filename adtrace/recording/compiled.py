"""The compiled twins: C modules built at install time (``setup.py``), each doing what one pure-Python
module does, faster. The pure-Python module stays the reference: it is what runs when its twin was not
built (no C compiler) or when ``ADTRACE_PURE_PYTHON=1`` is set, and the tests hold the two to identical
events (``tests/recording/test_compiled.py``, and each twin's own tests run both ways).

A module that has a twin asks for it with ``twin(name)``: the module, or None (then it keeps its own code).
"""

import importlib
import os

PURE_PYTHON = "ADTRACE_PURE_PYTHON"  # set to 1: every twin is left unused

# twin (dotted) -> the pure-Python module it mirrors
TWINS = {
    "adtrace.recording.value_class._descriptors": "adtrace.recording.value_class.descriptors",
    "adtrace.recording.value_class._hooks": "adtrace.recording.value_class.hooks",
    "adtrace.recording.value_class._tracked": "adtrace.recording.value_class.tracked",
    "adtrace.recording.value_class._recorder": "adtrace.recording.value_class.recorder",
    "adtrace.recording.value_class._deferred": "adtrace.recording.value_class.deferred",
    "adtrace.recording.autograd._wrappers": "adtrace.recording.autograd.wrappers",
    "adtrace.recording._values": "adtrace.recording.values",
}


def pure_python():
    """True when ``ADTRACE_PURE_PYTHON=1`` asks for the pure-Python code."""
    return os.environ.get(PURE_PYTHON, "") == "1"


def twin(name):
    """The compiled twin ``name`` if it was built and the pure-Python code is not asked for, else None."""
    if name not in TWINS:
        raise KeyError(f"no compiled twin is named {name!r} (adtrace/recording/compiled.py's TWINS)")
    if pure_python():
        return None
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def status():
    """``(twin, the module it mirrors, in use, why)`` for each twin: what ``adtrace doctor`` prints."""
    rows = []
    for name, reference in TWINS.items():
        if pure_python():
            rows.append((name, reference, False, f"{PURE_PYTHON}=1: the pure-Python code runs"))
            continue
        try:
            importlib.import_module(name)
        except ImportError as error:
            rows.append((name, reference, False, f"not built ({error}): the pure-Python code runs; "
                         "reinstall with a C compiler and Python's headers to build it"))
        else:
            rows.append((name, reference, True, "compiled"))
    return rows

"""The zoo recorded: every learner's value class (``value_classes.py``, ``learner_*.py``) and micrograd's own
``nn.MLP``, each recorded at a capture level, its events as JSON (or what it raised). A compiled twin's tests
record the zoo with the twin and without it and assert the same events (``assert_recorded_alike``)."""

import random

import numpy as np

import adtrace
import learner_arrays
import learner_in_place
import learner_shapes
import learner_writes
import value_classes
from adtrace.recording.micrograd.engine import declare
from adtrace.report.export import events_json


def zoo():
    """Every learner's value class of the zoo."""
    classes = []
    for module in (value_classes, learner_shapes, learner_writes, learner_arrays, learner_in_place):
        for name, cls in vars(module).items():
            if isinstance(cls, type) and cls.__module__ == module.__name__ and name != "EventLog":
                classes.append(cls)
    return classes


def stable_hash(patch, cls, name):
    """Sets of values iterate by hash: the data's, not the id's (two recordings visit in the same order)."""
    def __hash__(self):
        data = getattr(self, name)
        return hash(data.tobytes()) if isinstance(data, np.ndarray) else hash(data)
    patch.setattr(cls, "__hash__", __hash__)


def prepared(patch):
    """The zoo's classes, each (and micrograd's Value) hashed by its data, the scalars' names declared."""
    import micrograd.engine
    declare(learner_shapes.Scalar, **learner_shapes.SCALAR_NAMES)
    declare(learner_shapes.BuggyScalar, **learner_shapes.SCALAR_NAMES)
    classes = zoo()
    stable_hash(patch, micrograd.engine.Value, "data")
    for cls in classes:
        stable_hash(patch, cls, "value" if "Scalar" in cls.__name__ else "data")
    return classes


def _expression(cls, a, b, c):
    ops = set(dir(cls))
    out = a * b if "__mul__" in ops else a - b
    if "__add__" in ops:
        out = out + c
        out = out + out * a
    if "__sub__" in ops:
        out = b - (out - c)
    if "__truediv__" in ops:
        out = out / c
    if "tanh" in ops:
        out = out.tanh()
    if "__pow__" in ops:
        out = out ** 2
    if "sum" in ops:  # (an array's: backward() from a scalar)
        out = out.sum()
    return out


def record_zoo(cls, capture):
    """The events of one expression of ``cls``'s values, back-propagated twice (not zeroed), as JSON."""
    array = any(word in cls.__name__ for word in ("Array", "Tensor"))
    leaves = [np.array([0.5 + i, -1.25 * i, 2.0]) if array else 0.5 + i * 0.75 for i in range(3)]
    back = "backpropagate" if "Scalar" in cls.__name__ else "backward"
    try:
        with adtrace.record(engine=cls, capture=capture, sites=capture == "full") as recording:
            out = _expression(cls, *map(cls, leaves))
            getattr(out, back)()
            getattr(out, back)()
    except Exception as error:  # (a class the expression does not fit: it must raise the same both ways)
        return repr(error)
    return events_json(recording)


def record_micrograd(capture):
    """Two steps of micrograd's own nn.MLP(2, [4, 4, 1]) on 5 points, recorded: the events as JSON."""
    from micrograd import nn
    rng = random.Random(0)
    xs = [[rng.uniform(-1, 1), rng.uniform(-1, 1)] for _ in range(5)]
    random.seed(1)
    model = nn.MLP(2, [4, 4, 1])
    events = []
    for _ in range(2):
        with adtrace.record(engine="micrograd", capture=capture) as recording:
            model.zero_grad()
            loss = sum((model(x) - (1.0 if x[0] * x[1] > 0 else -1.0)) ** 2 for x in xs)
            loss.backward()
        events.append(events_json(recording))
        for p in model.parameters():
            p.data -= 0.05 * p.grad
    return events


def recorded(classes, capture):
    """``(each class's events, micrograd's)`` at ``capture``."""
    return [record_zoo(cls, capture) for cls in classes], record_micrograd(capture)


def assert_recorded_alike(classes, mine, reference):
    """Two ``recorded`` results the same, class by class, most classes recorded (not raised)."""
    assert sum(not events.startswith("Exception") for events in reference[0]) > 20  # (recorded, not raised)
    for cls, events, theirs in zip(classes, mine[0], reference[0]):
        assert events == theirs, cls
    assert mine[1] == reference[1]

"""The engine protocol's contract: every registered engine supplies every member, and a learner's
class is a configuration of the micrograd-shaped adapter, not a path of its own."""

import ast
import inspect
from pathlib import Path

import pytest
from autograd import grad
from micrograd.engine import Value as MicroValue

import adtrace
from adtrace.recording import registry
from adtrace.recording.autograd.hooks import Callbacks
from adtrace.recording.engine_code import EngineCode
from adtrace.recording.engines import MEMBERS, Engine
from adtrace.recording.fanout import callbacks_of
from adtrace.recording.micrograd import Sink, attach
from value_classes import EventLog, MiniValue, SlotValue

ENGINES = ["autograd", "micrograd", MiniValue, SlotValue]


def test_the_protocol_declares_what_the_issue_names():
    for member in ("data", "grad", "leaf", "backward", "pass_start", "local_backward", "grad_write", "code",
                   "install"):
        assert member in MEMBERS
    assert "children" not in MEMBERS  # (no stage reads a live value's children: the recorded graph has them)


@pytest.mark.parametrize("named", ENGINES, ids=["autograd", "micrograd", "MiniValue", "SlotValue"])
def test_every_engine_supplies_every_member(named):
    engine = registry.engine_named(named)
    for member in MEMBERS:
        assert hasattr(engine, member), f"{engine!r} lacks {member}"
        if inspect.isfunction(getattr(Engine, member, None)):
            declared = list(inspect.signature(getattr(Engine, member)).parameters)[1:]
            assert list(inspect.signature(getattr(engine, member)).parameters) == declared, member
    callbacks = callbacks_of(Callbacks if engine.name == "autograd" else Sink)  # what its hooks call
    assert callbacks and all(callable(getattr(engine.fanout, c)) for c in callbacks)


@pytest.mark.parametrize("named", ENGINES, ids=["autograd", "micrograd", "MiniValue", "SlotValue"])
def test_the_hook_sites_it_names_are_hooked_while_recording_and_restored_after(named):
    engine = registry.engine_named(named)
    sites = (engine.pass_start, engine.local_backward, engine.grad_write)
    before = [vars(owner).get(attribute) for owner, attribute in sites]
    with adtrace.record(engine=named):
        assert all(vars(owner).get(attribute) is not entry for (owner, attribute), entry in zip(sites, before))
    assert [vars(owner).get(attribute) for owner, attribute in sites] == before


def test_autograd_reads_a_traced_value_and_keeps_no_gradient_on_it():
    engine, seen = registry.engine_named("autograd"), {}

    def f(x):
        y = x * x
        seen.update(data=engine.data(y), grad=engine.grad(y))
        return y

    grad(f)(3.0)
    assert seen["data"] == 9.0 and seen["grad"] is None
    assert engine.code() is None and engine.cls is None
    for make in (lambda: engine.leaf(3.0), lambda: engine.backward(None)):
        with pytest.raises(TypeError, match="grad"):
            make()


@pytest.mark.parametrize("named", ["micrograd", MiniValue], ids=["micrograd", "MiniValue"])
def test_a_value_of_micrograds_shape_is_read_where_it_keeps_data_grad_and_children(named):
    engine = registry.engine_named(named)
    x = engine.leaf(3.0)
    y = x * x
    engine.backward(y)
    assert type(x) is engine.cls and engine.data(y) == 9.0 and engine.grad(x) == 6.0 and engine.grad(y) == 1
    code = engine.code()
    assert isinstance(code, EngineCode) and code.name == f"{engine.cls.__qualname__}.backward"


def test_micrograd_and_a_learners_class_are_one_adapter_configured_by_the_class():
    micrograd, learner = registry.engine_named("micrograd"), registry.engine_named(MiniValue)
    assert type(micrograd) is type(learner) and (micrograd.cls, learner.cls) == (MicroValue, MiniValue)
    assert learner.shape.cls is MiniValue and registry.engine_named(MiniValue) is learner  # one per class

    def run(cls):
        with adtrace.record(engine=cls) as rec:
            x = cls(3.0)
            (x * x + x).backward()
        return [(e.kind, getattr(e, "label", None)) for e in rec.events], rec.engine, type(rec.code)

    assert run(MicroValue) == run(MiniValue)


def test_a_sink_attached_to_a_class_is_a_recorder_of_the_same_engine():
    engine = registry.engine_named(MiniValue)
    with attach(MiniValue, EventLog()) as attachment:
        assert engine in registry.installed() and registry.recorders_of(engine) == [attachment]
    assert engine not in registry.installed() and registry.recorders_of(engine) == []


def engine_reads(inside_engines):
    """``{member: modules}``: what adtrace's code reads off an engine object (named ``engine``,
    ``adapter`` or ``_engine``), outside ``engines.py``; only in the engines' own packages if
    ``inside_engines``, only outside them if not."""
    package = Path(adtrace.__file__).parent
    own = ("recording/autograd/", "recording/micrograd/", "recording/value_class/")
    found = {}
    for path in package.rglob("*.py"):
        name = path.relative_to(package).as_posix()
        if name == "recording/engines.py" or name.startswith(own) != inside_engines:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                receiver = node.value
                held = receiver.id if isinstance(receiver, ast.Name) else getattr(receiver, "attr", None)
                if held in ("engine", "adapter", "_engine"):
                    found.setdefault(node.attr, set()).add(name)
    return found


def test_the_protocol_is_exactly_what_the_code_reads_of_an_engine():
    """Every member is read by adtrace's code (no declaration only tests read), and the session and
    the stages above read nothing else of an engine."""
    outside, inside = engine_reads(False), engine_reads(True)
    assert [m for m in MEMBERS if m not in outside and m not in inside] == []
    assert sorted(set(outside) - set(MEMBERS)) == []
    hooks = {"recording/value_class/hooks.py"}  # (autograd's table and ENGINE read the same hooks.PASS_START ...)
    assert inside["pass_start"] == inside["local_backward"] == inside["grad_write"] == hooks
    assert {"leaf", "backward", "data", "grad"} <= set(outside)
    assert outside["leaf"] == {"compare/traced_engine_call.py", "checker/engine_rules.py"}

"""The engine protocol's contract: every engine supplies every member, and a learner's class is a
configuration of the micrograd-shaped adapter, not a path of its own. ``ENGINES`` lists one engine
of each engine package in ``recording/`` (a package none of them comes from fails the first test:
a new engine adds one line here, its own tests being in ``tests/recording/<engine>/``)."""

import ast
import inspect
from pathlib import Path

import pytest
from autograd import grad
from micrograd.engine import Value as MicroValue

import adtrace
from adtrace.recording import compiled, registry
from adtrace.recording.autograd import hooks as autograd_hooks
from adtrace.recording.engine_code import EngineCode
from adtrace.recording.autograd import ENGINE
from adtrace.recording.engines import MEMBERS, Engine, is_engine
from adtrace.recording.fanout import callbacks_of
from adtrace.recording.micrograd import attach, engine as micrograd_engine
from adtrace.recording.recording import Recording, RecordingWriter
from adtrace.recording.value_class import hooks as value_class_hooks
from adtrace.recording.values import DEFAULT_INLINE_SIZE
from value_classes import EventLog, MiniValue, SlotValue

ENGINES = {"autograd": "autograd", "micrograd": "micrograd", "MiniValue": MiniValue, "SlotValue": SlotValue}
RECORDING = Path(adtrace.__file__).parent / "recording"
PACKAGES = sorted(p.parent.name for p in RECORDING.glob("*/__init__.py"))  # every package inside recording/
# the Protocol each engine's hooks call (another engine's: the callbacks its fan-out forwards, each of which its
# recorder implements behind the guard: test_every_engine_is_taken_as_it_is_and_its_recorder_is_guarded)
HOOKS_CALL = {"autograd": autograd_hooks.Callbacks, "micrograd": value_class_hooks.Callbacks}
NOT_AN_ENGINE = {"value_class": "hooks a value class for an engine that configures it (micrograd/)"}


def test_every_engine_package_has_an_engine_here():
    """A package of ``recording/`` is an engine's (or declared in ``NOT_AN_ENGINE``, with why), and
    ``ENGINES`` names an engine of it: so the tests below check a new engine against the protocol."""
    assert set(NOT_AN_ENGINE) <= set(PACKAGES)
    checked = {type(registry.engine_named(named)).__module__.split(".")[2] for named in ENGINES.values()}
    assert sorted(set(PACKAGES) - set(NOT_AN_ENGINE) - checked) == [], "add an engine of it to ENGINES"


def test_the_protocol_declares_what_the_issue_names():
    for member in ("data", "grad", "leaf", "backward", "pass_start", "local_backward", "grad_write", "code",
                   "install"):
        assert member in MEMBERS
    assert "children" not in MEMBERS  # (no stage reads a live value's children: the recorded graph has them)


@pytest.mark.parametrize("named", ENGINES.values(), ids=ENGINES.keys())
def test_every_engine_supplies_every_member(named):
    engine = registry.engine_named(named)
    for member in MEMBERS:
        assert hasattr(engine, member), f"{engine!r} lacks {member}"
        if inspect.isfunction(getattr(Engine, member, None)):
            declared = list(inspect.signature(getattr(Engine, member)).parameters)[1:]
            assert list(inspect.signature(getattr(engine, member)).parameters) == declared, member
    callbacks = callbacks_of(HOOKS_CALL.get(engine.name, engine.fanout))  # what its hooks call
    assert callbacks and all(callable(getattr(engine.fanout, c)) for c in callbacks)


@pytest.mark.parametrize("named", ENGINES.values(), ids=ENGINES.keys())
def test_every_engine_is_taken_as_it_is_and_its_recorder_is_guarded(named):
    """``record(engine=...)`` takes an engine adapter itself (a third engine's, made from the user's
    classes, needs no name in the registry); each callback its fan-out forwards is, on the recorder
    it makes, behind the guard (an internal error stops the recorder, never the program)."""
    engine = registry.engine_named(named)
    assert is_engine(engine) and registry.engine_named(engine) is engine
    recorder = engine.recorder(RecordingWriter(Recording("auto", engine=engine.name)), "auto", DEFAULT_INLINE_SIZE)
    callbacks = callbacks_of(engine.fanout)
    assert callbacks
    for callback in callbacks:
        method = getattr(type(recorder), callback)
        if not hasattr(method, "__code__"):  # a compiled twin's (it guards itself in C): held to its Python reference
            assert method.__objclass__.__module__ in compiled.TWINS, f"{engine!r}: {callback} is not guarded"
            method = next(vars(cls)[callback] for cls in type(recorder).__mro__
                          if hasattr(vars(cls).get(callback), "__code__"))
        code = method.__code__
        if getattr(method, "__guards_itself__", False):  # (its guard written out: it reads live, calls fail;
            # test_value_class_recorder breaks each callback in turn)
            assert {"live", "fail"} <= set(code.co_names), f"{engine!r}: {callback} says it guards itself"
            continue
        assert "(guard of " in code.co_filename, f"{engine!r}: {callback} is not guarded (fanout.guard_callbacks)"


def test_a_name_or_a_class_is_not_an_engine_and_an_object_lacking_a_member_is_refused():
    assert not is_engine("autograd") and not is_engine(MiniValue) and not is_engine(MiniValue(1.0))
    partial = type("Partial", (), {m: getattr(ENGINE, m) for m in MEMBERS if m != "grad_write"})()
    assert is_engine(type("Whole", (), {m: getattr(ENGINE, m) for m in MEMBERS})())
    assert not is_engine(partial)
    with pytest.raises(ValueError, match="engine must be .* or an engine object"):
        registry.engine_named(partial)


@pytest.mark.parametrize("rewrite", [False, True], ids=["descriptors", "recompiled"])
@pytest.mark.parametrize("named", ENGINES.values(), ids=ENGINES.keys())
def test_the_hook_sites_it_names_are_hooked_while_recording_and_restored_after(named, rewrite, monkeypatch):
    """Every site it names is hooked (a recompiled class: its pass start; its writes and local backward calls are
    the recompiled methods' own, value_class/rewrite.py), and every attribute is restored after."""
    monkeypatch.setattr(micrograd_engine, "REWRITE", rewrite)
    engine = registry.engine_named(named)
    sites = (engine.pass_start, engine.local_backward, engine.grad_write)
    recompiled = engine.name != "autograd" and rewrite and engine._rewritten() is not None
    before = [vars(owner).get(attribute) for owner, attribute in sites]
    owners = {id(owner): owner for owner, _ in sites}.values()
    every = [dict(vars(owner)) for owner in owners]  # (and whatever else it hooks on them: a class's __init__)
    with adtrace.record(engine=named):
        hooked = sites[:1] if recompiled else sites
        assert all(vars(owner).get(attribute) is not entry for (owner, attribute), entry in zip(hooked, before))
        assert recompiled == (vars(sites[2][0]).get(sites[2][1]) is before[2])
    assert [vars(owner).get(attribute) for owner, attribute in sites] == before
    for owner, entries in zip(owners, every):
        assert {k: v for k, v in vars(owner).items() if v is not entries.get(k)} == {}, owner


@pytest.mark.parametrize("named", ENGINES.values(), ids=ENGINES.keys())
def test_every_engine_gives_each_node_the_users_line_when_asked(named):
    """``record(sites=True)`` is every engine's recorder's to honour (a recorder may take the
    parameter and drop it): each node made on a user's line says that line, and none without it."""
    engine = registry.engine_named(named)

    def run():
        if engine.name == "autograd":
            return grad(lambda x: x * x)(3.0)
        x = engine.leaf(3.0)
        engine.backward(x * x)  # (the line each node names)

    for sites in (True, False):
        with adtrace.record(engine=named, sites=sites, relative_to=Path(__file__).parent) as rec:
            run()
        made = [e.site for e in rec.events if e.is_node and "site" in e.__dataclass_fields__]
        assert made and all((site or "").startswith("test_engines.py:") == sites for site in made), made


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
def test_a_value_of_micrograds_shape_is_made_run_and_read_and_its_code_is_its_backward(named):
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
    own = tuple(f"recording/{name}/" for name in PACKAGES)  # every engine's package, and value_class/
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
    assert outside["leaf"] == {"compare/traced_engine_call.py", "checker/engine_rules.py", "diff/calls.py",
                               "explain/entry.py", "tools/recorded_call.py"}  # (each makes an engine's leaves)

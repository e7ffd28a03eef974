"""The patch manager: exact, LIFO, idempotent undo (pytest monkeypatch's own test cases)."""

import types

import pytest

from adtrace.recording.patching import NOTSET, Patcher, PatchError


class Base:
    inherited = "base"


class Target(Base):
    own = "own"

    @staticmethod
    def static():
        return "static"

    @classmethod
    def klass(cls):
        return cls.__name__


def test_class_attributes_restored_exactly():
    own_static = vars(Target)["static"]
    own_klass = vars(Target)["klass"]
    p = Patcher()
    p.setattr(Target, "own", "patched")
    p.setattr(Target, "static", staticmethod(lambda: "patched"))
    p.setattr(Target, "klass", classmethod(lambda cls: "patched"))
    p.setattr(Target, "inherited", "patched")
    assert (Target.own, Target.static(), Target.klass(), Target.inherited) == ("patched",) * 4
    assert p.undo() == []
    assert vars(Target)["static"] is own_static and vars(Target)["klass"] is own_klass
    assert (Target.own, Target.static(), Target.klass()) == ("own", "static", "Target")
    assert "inherited" not in vars(Target) and Target.inherited == "base"


def patched_module(ours):
    """A module ``m`` whose ``f``, ``"original"``, a new patcher has set to ``ours``: ``(m, the patcher)``."""
    module = types.ModuleType("m")
    module.f = "original"
    p = Patcher()
    p.setattr(module, "f", ours)
    return module, p


def test_lifo_and_double_undo():
    module, p = patched_module("first")
    p.setattr(module, "f", "second")
    assert len(p) == 2
    p.undo()
    assert module.f == "original" and len(p) == 0
    p.undo()
    assert module.f == "original"


def test_missing_attribute_fails_loudly():
    with pytest.raises(PatchError, match="no attribute 'absent'"):
        Patcher().setattr(Target, "absent", 1)


def test_replaced_meanwhile_is_reported_and_left_as_it_is():
    module, p = patched_module("ours")
    module.f = "theirs"
    assert p.undo() == ["m.f"]
    assert module.f == "theirs"  # no longer ours: not ours to restore


def test_put_back_meanwhile_is_left_and_not_reported():
    """Someone undid our patch (their own undo): the original is in place; nothing to restore or report."""
    module, p = patched_module("ours")
    module.f = "original"
    assert p.undo() == [] and module.f == "original"


def test_a_missing_attribute_when_not_raising_is_deleted_again():
    class Owner:
        pass

    p = Patcher()
    p.setattr(Owner, "grad", "ours", raising=False)
    p.undo()
    assert "grad" not in vars(Owner)


def test_an_undo_interrupted_at_an_entry_goes_on_to_the_end():
    module = types.ModuleType("m")
    module.a, module.b, module.c = 1, 2, 3
    p = Patcher()
    p.setattr(module, "a", "A")

    calls = []

    def interrupted_once():  # (an interrupt while it runs: run again, it completes)
        calls.append(1)
        if len(calls) == 1:
            raise KeyboardInterrupt

    p.on_undo(interrupted_once)
    p.setattr(module, "c", "C")
    with pytest.raises(KeyboardInterrupt):
        p.undo()
    assert (module.a, module.c, len(p), len(calls)) == (1, 3, 0, 2)


def test_notset_is_distinct_from_none():
    assert NOTSET is not None and repr(NOTSET) == "NOTSET"


def test_an_undo_of_its_own_runs_in_its_place_in_the_stack():
    class Owner:
        a = 1

    patcher, order = Patcher(), []
    patcher.setattr(Owner, "a", 2)
    patcher.on_undo(lambda: order.append(("own", Owner.a)) or ["Owner.own"])
    patcher.setattr(Owner, "a", 3)
    assert patcher.undo() == ["Owner.own"]  # what it reports, reported as undo reports
    assert order == [("own", 2)] and Owner.a == 1  # after the later patch was undone, before the earlier
    assert patcher.undo() == [] and order == [("own", 2)]  # a second undo does nothing

"""The hook self-test catches a broken hook: a wrong binding site, or a wrapper that alters a value."""

from dataclasses import replace

import autograd.util as util

from adtrace.recording.autograd import hooks
from adtrace.tools import selftest


def failed(rows):
    return [name for name, ok, _ in rows if not ok]


def test_the_installed_hooks_pass():
    assert failed(selftest.run()) == []


def test_a_hook_at_the_wrong_binding_site_is_caught(monkeypatch):
    wrong = [replace(p, owner=util) if p.attribute == "toposort" else p
             for p in hooks.HOOK_POINTS]  # where toposort is defined, not where backward_pass reads it
    monkeypatch.setattr(hooks, "HOOK_POINTS", tuple(wrong))
    assert failed(selftest.run()) == ["autograd.core.toposort"]


def test_a_wrapper_that_alters_a_value_is_caught(monkeypatch):
    def altering(original, active):
        def add_outgrads(prev, g):
            value, mutable = original(prev, g)
            return value * (1 + 1e-15), mutable  # invisible in a printout, not in the bits
        add_outgrads.__wrapped__ = original
        return add_outgrads

    altered = [replace(p, wrap=altering) if p.attribute == "add_outgrads" else p
               for p in hooks.HOOK_POINTS]
    monkeypatch.setattr(hooks, "HOOK_POINTS", tuple(altered))
    assert "results bit-identical with and without recording" in failed(selftest.run())

"""Is every engine as it was before adtrace? autograd's own objects at its hook points (read when the
tests are collected, before any recording) and the check a test makes after a recording ends."""

from adtrace.recording import registry
from adtrace.recording.autograd import hooks
from adtrace.recording.micrograd import hooked_classes

ORIGINALS = {p.name: vars(p.owner)[p.attribute] for p in hooks.HOOK_POINTS}  # hook point name -> autograd's object


def patched_points():
    """The names of the hook points that do not hold autograd's own object."""
    return [p.name for p in hooks.HOOK_POINTS if vars(p.owner)[p.attribute] is not ORIGINALS[p.name]]


def assert_restored(cls=None, before=None, at=None):
    """Nothing of adtrace left: every hook point holds autograd's own object, no class is hooked, no
    recording is open (on any thread) nor entered (in this context); with ``cls``, its own attributes
    are ``before``'s (``dict(vars(cls))`` taken before), the very objects, in the same order. ``at``:
    what a failure message names (a loop's step)."""
    assert patched_points() == [], at
    if cls is not None:
        after = dict(vars(cls))
        assert list(after) == list(before), at
        assert [name for name in before if after[name] is not before[name]] == [], at
    assert hooked_classes() == () and registry.active_recordings() == 0, at
    assert registry._STACK.get() == (), at

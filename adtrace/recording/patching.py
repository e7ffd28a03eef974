"""One patch manager: set attributes, undo them exactly, last in first out.

Modelled on pytest's ``monkeypatch``: an undo stack of ``(owner, name, old)`` where ``old`` is the
entry of the owner's own ``__dict__`` (``NOTSET`` when the name was only inherited or absent), so a
class gets back exactly its own attribute and an inherited one is deleted again. ``undo()`` walks
the stack in reverse and empties it, so a second call is harmless. Patching a missing attribute
fails loudly: a hook point that does not exist means autograd changed. ``transaction()`` makes a
group of patches all-or-nothing. An engine that keeps state of its own beside its hooks (the
value-class hooks' children table) registers its own undo with ``on_undo``, in the same stack.

What is no longer ours is not ours to restore: an attribute someone replaced while patched (the
user's own patch, or their undo of one made before) is left as they made it, and reported; but a
hook of an earlier installation they put back (marked ``__adtrace_hook__``) is still restored.

Every line may be interrupted (a ``KeyboardInterrupt``): an entry is noted before its ``setattr``,
undoing one is idempotent, and an undo cut short goes on to the end before the interrupt propagates.
"""

from contextlib import contextmanager


class _NotSet:
    def __repr__(self):
        return "NOTSET"


NOTSET = _NotSet()


class PatchError(RuntimeError):
    """A hook point is missing, or was replaced by someone else while patched."""


class Patcher:
    def __init__(self):
        # (owner, name, the own-__dict__ entry before, what to restore, the value we set), or (undo,)
        self._undo = []

    def setattr(self, owner, name, value, restore=NOTSET, raising=True):
        """Set ``owner.name``; ``undo`` puts back the owner's own entry as it was, or ``restore``
        when given (the original behind a stale wrapper of ours that someone else put back).
        ``raising=False``: the attribute may be missing (a class attribute put over instance ones)."""
        if raising and not hasattr(owner, name):
            raise PatchError(f"{_where(owner)} has no attribute {name!r} to patch")
        before = vars(owner).get(name, NOTSET)
        self._undo.append((owner, name, before, before if restore is NOTSET else restore, value))  # noted first
        setattr(owner, name, value)

    def on_undo(self, undo):
        """Call ``undo()`` when the stack is undone (in its place, LIFO among the patches): for
        hooks installed by their own code. What it returns (names someone else had replaced) is
        reported as ``undo`` reports."""
        self._undo.append((undo,))

    @contextmanager
    def transaction(self):
        """The patches set inside the block all stay, or (on any exception, ``KeyboardInterrupt``
        included) are all undone before it propagates."""
        mark = len(self._undo)
        try:
            yield self
        except BaseException:
            self._undo_to(mark)
            raise

    def undo(self):
        """Restore every attribute still ours, newest first. Returns the names someone else had
        replaced meanwhile (left as they are now)."""
        return self._undo_to(0)

    def _undo_to(self, mark):
        replaced, raised = [], None
        try:
            while len(self._undo) > mark:
                try:
                    replaced += _undo_entry(self._undo[-1])
                except Exception as exc:  # (an undo of its own that failed) the others are undone all the same
                    raised = raised or exc
                self._undo.pop()
        finally:
            if len(self._undo) > mark:  # an interrupt: the rest is undone before it propagates
                self._undo_to(mark)
        if raised is not None:
            try:
                raise raised
            finally:
                raised = None  # (no cycle through this frame)
        return replaced

    def __len__(self):
        return len(self._undo)


def _undo_entry(entry):
    """Undo one entry (idempotent: it may be undone again after an interrupt); the names left as
    someone else made them."""
    if len(entry) == 1:  # an undo of its own (on_undo)
        return entry[0]() or []
    owner, name, before, restore, ours = entry
    now = vars(owner).get(name, NOTSET)
    if now is ours or _stale(now, before if restore is NOTSET else restore):
        if restore is NOTSET:
            delattr(owner, name)
        else:
            setattr(owner, name, restore)
    elif now is not before and now is not restore:  # (before: the setattr never came; restore: undone already)
        return [f"{_where(owner)}.{name}"]
    return []


def original_of(function):
    """``function`` with every adtrace wrapper around it (marked ``__adtrace_hook__``) taken off: a
    wrapper put back after its installation was undone calls the original, recording nothing."""
    while hasattr(function, "__adtrace_hook__"):
        function = function.__wrapped__
    return function


def _stale(value, original):
    """Whether ``value`` is a hook of an earlier installation (marked ``__adtrace_hook__``) around
    ``original``, put back by someone: it calls the original and records nothing; not theirs to keep."""
    while original is not NOTSET and hasattr(value, "__adtrace_hook__"):
        value = getattr(value, "__wrapped__", None)
        if value is original:
            return True
    return False


def _where(owner):
    return getattr(owner, "__qualname__", None) or getattr(owner, "__name__", repr(owner))

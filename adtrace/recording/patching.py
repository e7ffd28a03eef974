"""One patch manager: set attributes, undo them exactly, last in first out.

Modelled on pytest's ``monkeypatch``: an undo stack of ``(owner, name, old)`` where ``old`` is the
entry of the owner's own ``__dict__`` (``NOTSET`` when the name was only inherited or absent), so a
class gets back exactly its own attribute and an inherited one is deleted again. ``undo()`` walks
the stack in reverse and empties it, so a second call is harmless. Patching a missing attribute
fails loudly: a hook point that does not exist means autograd changed. ``transaction()`` makes a
group of patches all-or-nothing. An engine that installs its hooks itself (micrograd's class
descriptors) registers its own undo with ``on_undo``, in the same stack.
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
        self._undo = []  # (owner, name, what to restore: an own-__dict__ entry or NOTSET, the value we set), or (undo,)

    def setattr(self, owner, name, value, restore=NOTSET):
        """Set ``owner.name``; ``undo`` puts back the owner's own entry as it was, or ``restore``
        when given (the original behind a stale wrapper of ours that someone else put back)."""
        if not hasattr(owner, name):
            raise PatchError(f"{_where(owner)} has no attribute {name!r} to patch")
        old = vars(owner).get(name, NOTSET) if restore is NOTSET else restore
        self._undo.append((owner, name, old, value))  # noted first: an interrupt after setattr is undone too
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
        """Restore every attribute, newest first. Returns the names someone else had replaced
        meanwhile (they are restored all the same: the originals come back)."""
        return self._undo_to(0)

    def _undo_to(self, mark):
        replaced = []
        while len(self._undo) > mark:
            entry = self._undo.pop()
            if len(entry) == 1:  # an undo of its own (on_undo)
                replaced += entry[0]() or []
                continue
            owner, name, old, ours = entry
            if vars(owner).get(name, NOTSET) is not ours:
                replaced.append(f"{_where(owner)}.{name}")
            if old is NOTSET:
                if name in vars(owner):
                    delattr(owner, name)
            else:
                setattr(owner, name, old)
        return replaced

    def __len__(self):
        return len(self._undo)


def _where(owner):
    return getattr(owner, "__qualname__", None) or getattr(owner, "__name__", repr(owner))

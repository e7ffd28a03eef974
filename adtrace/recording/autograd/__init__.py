"""Everything adtrace knows about autograd: where it is hooked, what each hooked call records, and
whether the installed release is one adtrace knows (``drift``).

The session (``recording/session.py``) reaches autograd only through ``ENGINE``: it installs the
hooks, makes a recorder per ``record()`` block, and serves several nested recorders through the
fan-out. The stages above (recordings, alignment, reports, the checker's tables) speak only the
event vocabulary of ``recording/events.py``.
"""

from . import drift, hooks
from .hooks import Fanout
from .capture import Keeper
from .recorder import Recorder


class AutogradEngine:
    """The autograd adapter (``recording/engines.Engine``)."""
    name, fanout, cls = "autograd", Fanout, None
    pass_start, local_backward, grad_write = hooks.PASS_START, hooks.LOCAL_BACKWARD, hooks.GRAD_WRITE  # (hooked there)

    def check_installed(self, strict):
        drift.check_installed(strict=strict)

    def admit(self, recorder, others):
        """Every recorder joins: nested and concurrent recordings share one installation."""

    def install(self, patcher):
        """Patch the hook points (all or none); returns the context variable their wrappers read."""
        return hooks.install(patcher)

    def remove_stale(self):
        """Take off wrappers of an earlier installation someone put back (see ``hooks.remove_stale``)."""
        return hooks.remove_stale()

    def recorder(self, writer, capture, inline_size, keep_calls=False, keep_sites=False, relative_to=None):
        return Recorder(writer, Keeper(capture, inline_size), keep_calls=keep_calls, keep_sites=keep_sites,
                        relative_to=relative_to)

    def code(self, relative_to=None):
        """None: ``backward_pass``'s statements are fixed, each event class names its own."""

    # ---- a live value (a traced Box), read as autograd keeps it

    def leaf(self, data):
        raise TypeError("autograd makes its values (Boxes) while it traces: differentiate a function, grad(f)(x)")

    def backward(self, value):
        raise TypeError("autograd runs its backward pass inside grad(f)(x), not from a value")

    def data(self, value):
        return value._value

    def grad(self, value):
        """None: autograd keeps gradients in ``backward_pass``'s ``outgrads``, not on values."""

    def __repr__(self):
        return "<engine autograd>"


ENGINE = AutogradEngine()

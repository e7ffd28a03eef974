"""What an engine adapter supplies: one protocol, implemented by ``recording/autograd`` (``ENGINE``)
and ``recording/micrograd`` (one ``MicrogradEngine`` per class of micrograd's shape: its ``Value``
and a learner's class are configurations of the same adapter). ``registry.engine_named`` picks it.

The session uses ``admit``, ``install``, ``recorder``, ``fanout`` and ``check_installed`` (and ``name``,
``code`` for the ``Recording`` it makes); the
stages above make values through ``cls``, read a live value through ``data``, ``grad`` and
``children`` and the engine's own ``backward`` through ``code`` (or through the ``Recording``,
which keeps ``name`` and ``code``), never the engine's package. A third engine is one package
beside these two that supplies every member, and its name in ``registry.engine_named``.

What each member is, per engine (in autograd's words, ``pass_start`` is ``backward_pass``,
``local_backward`` a node's ``vjp``, ``grad_write`` ``add_outgrads``: CONTRIBUTING's Words):

============== =========================================== ===========================================
member         autograd (``ENGINE``)                       micrograd's shape (one per ``Value`` class)
============== =========================================== ===========================================
name           ``"autograd"``                              ``"micrograd"`` (a learner's class too)
cls            None (``grad`` makes its ``Box``es)         ``Value``: ``cls(data)`` is a leaf
pass_start     ``(autograd.core, "backward_pass")``        ``(Value, "backward")``
local_backward ``(VJPNode, "__init__")``, makes the vjp    ``(Value, "_backward")``, the closure read
grad_write     ``(autograd.core, "add_outgrads")``         ``(Value, "grad")``, the descriptor written
code()         None                                        ``EngineCode`` of ``Value.backward``
data(v)        ``v._value`` (``v`` a traced ``Box``)       ``v.data``
grad(v)        None (gradients live in ``outgrads``)       ``v.grad``
children(v)    ``v._node.parents``: ``Node``s, not Boxes   ``v._prev``: values (a set's iteration order)
============== =========================================== ===========================================
"""

import inspect
from typing import Any, Optional, Protocol, Tuple

from .engine_code import EngineCode


class Engine(Protocol):
    name: str
    """How ``record(engine=...)`` and ``Recording.engine`` name it: ``"autograd"``, ``"micrograd"``."""

    callbacks: type
    """The ``Protocol`` of the callbacks its hooks make (its recorders implement it, guarded)."""

    fanout: type
    """Serves several nested recorders as one (``fanout.fanout_for(callbacks, ...)``)."""

    cls: Optional[type]
    """The class a user makes the engine's values with (micrograd's ``Value``: ``cls(3.0)`` is a
    leaf); None for autograd (its values are the ``Box``es ``grad`` makes while it traces)."""

    pass_start: Tuple[Any, str]
    """Where a backward pass starts, as ``(owner, attribute)`` hooked: ``(autograd.core, "backward_pass")``,
    ``(Value, "backward")``."""

    local_backward: Tuple[Any, str]
    """Where a node's local backward call is seen: autograd's ``vjp`` is made in ``VJPNode.__init__``,
    micrograd's ``_backward`` closure is read from the value."""

    grad_write: Tuple[Any, str]
    """Where a gradient is written: ``(autograd.core, "add_outgrads")``, ``(Value, "grad")``."""

    def check_installed(self, strict: bool) -> None:
        """Warn (raise when ``strict``) if the installed engine is not one adtrace knows."""

    def admit(self, recorder, others: list) -> None:
        """Raise if ``recorder`` may not join ``others``, the engine's open recorders on every thread
        (called under the session's lock, before it opens): autograd admits every one; micrograd
        hooks a class by sinks (``attach``) or by ``record()``, one way at a time."""

    def install(self, patcher) -> Any:
        """Put every hook in through ``patcher`` (its undo restores the engine), all or none; returns
        the context variable the hooks read (what the session sets per context: a recorder or a fan-out)."""

    def recorder(self, writer, capture: str, inline_size: int, keep_calls: bool = False, keep_sites: bool = False,
                 relative_to=None) -> Any:
        """A recorder writing this engine's events through ``writer`` (``recording.RecordingWriter``:
        the session made the recording with this engine's ``name`` and ``code(relative_to)``)."""

    def code(self, relative_to=None) -> Optional[EngineCode]:
        """The engine's own ``backward`` source, the statement of it each event stands for, and its
        operations (``EngineCode.ops``: forward and local derivatives by op, for the reference and
        the checker); None for autograd (its ``backward_pass`` statements are fixed: each event class
        names its own, and the reference has its own rules for its primitives)."""

    def data(self, value) -> Any:
        """A live value's data (autograd: a traced ``Box``'s ``_value``; micrograd: ``.data``)."""

    def grad(self, value) -> Any:
        """A live value's gradient where the engine keeps it on the value (micrograd's ``.grad``);
        None where it does not (autograd keeps it in ``backward_pass``'s ``outgrads``)."""

    def children(self, value) -> tuple:
        """What a live value was made from, as the engine links them: autograd gives the ``Node``s of
        its node's ``parents`` (nodes, not ``Box``es: take a node's ``Box`` from the trace if needed);
        micrograd gives the values of ``_prev`` (a set: its iteration order, not the argument order)."""


MEMBERS = (*Engine.__annotations__, *(n for n, v in vars(Engine).items() if inspect.isfunction(v) and n[0] != "_"))

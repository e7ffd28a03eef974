"""What an engine adapter supplies: one protocol, implemented by ``recording/autograd`` (``ENGINE``)
and ``recording/micrograd`` (one ``MicrogradEngine`` per class of micrograd's shape: its ``Value``
and a learner's class are configurations of the same adapter). ``registry.engine_named`` picks it.

The session uses ``install``, ``recorder``, ``fanout`` and ``check_installed``; the stages above
read a live value through ``data``, ``grad`` and ``children`` and the engine's own ``backward``
through ``code`` (or through the ``Recording``, which keeps ``name`` and ``code``), never the
engine's package. A third engine is one package beside these two that supplies every member,
and its name in ``registry.engine_named``.
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

    def install(self, patcher) -> Any:
        """Put every hook in through ``patcher`` (its undo restores the engine), all or none; returns
        the context variable the hooks read (what the session sets per context: a recorder or a fan-out)."""

    def recorder(self, recording, level: str, inline_size: int, keep_calls: bool = False, keep_sites: bool = False,
                 root=None) -> Any:
        """A recorder writing this engine's events into ``recording`` (it sets ``recording.engine``
        and, for an engine with its own ``backward``, ``recording.code``)."""

    def code(self, root=None) -> Optional[EngineCode]:
        """The engine's own ``backward`` source, the statement of it each event stands for, and its
        operations (``EngineCode.ops``: forward and local derivatives by op, for the reference and
        the checker); None for autograd (its ``backward_pass`` statements are fixed: each event class
        names its own, and the reference has its own rules for its primitives)."""

    def data(self, value) -> Any:
        """A live value's data (autograd: a traced ``Box``'s value)."""

    def grad(self, value) -> Any:
        """A live value's gradient where the engine keeps it on the value (micrograd's ``.grad``);
        None where it does not (autograd keeps it in ``backward_pass``'s ``outgrads``)."""

    def children(self, value) -> tuple:
        """The nodes a live value was made from (autograd: its node's ``parents``; micrograd: ``_prev``)."""


MEMBERS = (*Engine.__annotations__, *(n for n, v in vars(Engine).items() if inspect.isfunction(v) and n[0] != "_"))

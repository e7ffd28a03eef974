"""What an engine adapter supplies: one protocol, implemented by ``recording/autograd`` (``ENGINE``)
and ``recording/micrograd`` (one ``MicrogradEngine`` per class of micrograd's shape: its ``Value``
and a learner's class are configurations of the same adapter, hooked by ``recording/value_class``).
``registry.engine_named`` picks it.

Who reads each member: the session (``session.py``, ``registry.py``) ``name``, ``code``,
``check_installed``, ``admit``, ``install``, ``recorder`` and ``fanout``; the engine's own hooks the
hook sites ``pass_start``, ``local_backward`` and ``grad_write`` (autograd's ``hooks.HOOK_POINTS``
rows, ``value_class.hooks.ClassHooks``); the stages above (``compare/traced_engine_call.py``,
``checker/engine_rules.py``) make and run values through ``cls``, ``leaf``, ``backward`` and read
them through ``data`` and ``grad``, never the engine's package (a recording keeps ``name`` and
``code``). A value's children are not read from a live value: the hooks take them as the engine
passes them, and every stage reads them from the recorded graph. A third engine is one package
beside these two whose adapter supplies every member: ``record(engine=...)`` takes the adapter
object itself (``registry.engine_named``, ``is_engine``), so it needs no name there unless users
should name it by a string; its tests add it to ``ENGINES`` in ``tests/recording/test_engines.py``
(a test fails for a package of ``recording/`` no engine there comes from).

What each member is, per engine (in autograd's words, ``pass_start`` is ``backward_pass``,
``local_backward`` a node's ``vjp``, ``grad_write`` ``add_outgrads``: CONTRIBUTING's Words):

============== =========================================== ===========================================
member         autograd (``ENGINE``)                       micrograd's shape (one per ``Value`` class)
============== =========================================== ===========================================
name           ``"autograd"``                              ``"micrograd"`` (a learner's class too)
cls            None (``grad`` makes its ``Box``es)         ``Value``
pass_start     ``(autograd.core, "backward_pass")``        ``(Value, "backward")``
local_backward ``(VJPNode, "__init__")``, makes the vjp    ``(Value, "_backward")``, the closure read
grad_write     ``(autograd.core, "add_outgrads")``         ``(Value, "grad")``, the descriptor written
code()         None                                        ``EngineCode`` of ``Value.backward``
leaf(data)     raises ``TypeError``                        ``Value(data)``
backward(v)    raises ``TypeError``                        ``v.backward()``
data(v)        ``v._value`` (``v`` a traced ``Box``)       ``v.data``
grad(v)        None (gradients live in ``outgrads``)       ``v.grad``
============== =========================================== ===========================================
"""

import inspect
from typing import Any, Optional, Protocol, Tuple

from .engine_code import EngineCode


class Engine(Protocol):
    name: str
    """How ``record(engine=...)`` and ``Recording.engine`` name it: ``"autograd"``, ``"micrograd"``."""

    fanout: type
    """Serves several nested recorders as one (``fanout.fanout_for`` of the ``Protocol`` of the
    callbacks its hooks make, which its recorders implement, guarded)."""

    cls: Optional[type]
    """The class of the engine's values (micrograd's ``Value``): what a function traced through it
    must return; None for autograd (its values are the ``Box``es ``grad`` makes while it traces)."""

    pass_start: Tuple[Any, str]
    """Where a backward pass starts, as the ``(owner, attribute)`` its hooks are installed at:
    ``(autograd.core, "backward_pass")``, ``(Value, "backward")``."""

    local_backward: Tuple[Any, str]
    """Where a node's local backward call is seen, hooked: autograd's ``vjp`` is made in
    ``VJPNode.__init__``, micrograd's ``_backward`` closure is read from the value (a data descriptor), or
    called by a recompiled ``backward()`` (``value_class/rewrite.py``: then the site is not hooked)."""

    grad_write: Tuple[Any, str]
    """Where a gradient is written, hooked: ``(autograd.core, "add_outgrads")``, ``(Value, "grad")``
    (a data descriptor; a recompiled class's methods write through helpers instead: not hooked)."""

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

    def leaf(self, data) -> Any:
        """A new value of the engine holding ``data``, one its backward pass gives a gradient
        (micrograd: ``Value(data)``); autograd raises ``TypeError`` (it makes values while it traces)."""

    def backward(self, value) -> Any:
        """Run the engine's backward pass from ``value`` (micrograd: ``value.backward()``, called at
        ``pass_start``); autograd raises ``TypeError`` (its pass runs inside ``grad(f)(x)``)."""

    def data(self, value) -> Any:
        """A live value's data (autograd: a traced ``Box``'s ``_value``; micrograd: ``.data``)."""

    def grad(self, value) -> Any:
        """A live value's gradient where the engine keeps it on the value (micrograd's ``.grad``);
        None where it does not (autograd keeps it in ``backward_pass``'s ``outgrads``)."""


MEMBERS = (*Engine.__annotations__, *(n for n, v in vars(Engine).items() if inspect.isfunction(v) and n[0] != "_"))


def is_engine(candidate):
    """Whether ``candidate`` is an engine adapter (an object supplying every member), which
    ``record(engine=...)`` takes as it is: a name (``"autograd"``) or a class is not one."""
    return not isinstance(candidate, (str, type)) and all(hasattr(candidate, member) for member in MEMBERS)

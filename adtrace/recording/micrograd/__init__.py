"""micrograd's engine, and learners' Value classes of its shape: hooked, engine-neutral at the output.

``record(engine="micrograd")`` / ``record(engine=MyValue)`` / ``attach(cls, sink)`` go through
``engine.py``: one adapter, configured by the class's ``Shape`` (``shape.py``: ``micrograd.engine.Value``
and a learner's class alike), installed by the session. Its hooks (``hooks.py``) call the
``hooks.Sink`` callbacks as the engine runs; its ``Recorder`` (``recorder.py``) is a sink writing
adtrace's events, and its ``EngineCode`` (``code.py``) maps each event to the statement of the
class's own ``backward()``, read from its source (``statements.py``).

How each callback maps to autograd's vocabulary, which adtrace's events use:

- ``node_created(node, children, op, data)``: the ``node`` event (``parents`` are ``children``,
  by argument position: ``x*x`` gives ``(x, x)``; ``primitive`` is ``op`` as the class writes it).
  A value without children (an input, a weight, a constant wrapped by ``__add__``) is a leaf: what
  autograd's ``root`` is for its one input, micrograd has for every leaf.
- ``backward_started(root)`` then ``seeded(root, previous, value)``: ``backward_start``
  (``end`` is the root, ``seed`` the value: ``outgrads = {end_node: (g, False)}`` is
  ``self.grad = 1``).
- ``local_backward_started(node, grad)``: ``toposort`` (the visit; its position is the count of
  visits so far) and the start of ``vjp`` with ``outgrad`` = ``grad``, the node's ``out.grad``.
  micrograd builds its whole order first (``build_topo``, locals: not hooked), then walks it
  reversed; siblings follow the iteration order of the ``_prev`` sets, which may vary.
- ``grad_written(node, target, position, previous, contribution, result, accumulated)``:
  ``add_outgrads`` (``node`` the node visited, ``parent`` the target, ``argnum`` the child
  position, ``previous``, ``contribution``, ``result``). In micrograd the closure computes its
  contribution and adds it itself: autograd's ``vjp`` and ``add_outgrads`` happen in one
  statement. The ``mutable`` flag does not apply; ``accumulated`` False is an assignment that
  replaces (``grad = c``, the classic bug), which autograd has no way to do.
- ``local_backward_ended(node, error)``: the end of ``vjp``; its ``ingrads`` are the
  contributions of the node's ``grad_written`` calls, by child position.
- ``backward_ended(root, error)``: ``backward_end``. micrograd returns nothing; the gradients stay
  on the values (``leaf.grad``), where autograd pops ``outgrads`` entries as it visits.

A report's state per statement of the engine's ``backward()``: ``backward_statements(cls)`` gives
each statement (its line in the engine's file, depth, text) with the callbacks it makes: the
``def`` line ``backward_started``/``backward_ended``, ``self.grad = 1`` ``seeded``, the
``v._backward()`` call ``local_backward_started``, ``grad_written``..., ``local_backward_ended``.
"""

from .descriptors import MISSING
from .engine import Attachment, attach, hooked_classes
from .hooks import HookError, Sink
from .shape import Shape, ShapeError, check_shape
from .statements import Statement, backward_statements

__all__ = ["MISSING", "Attachment", "HookError", "Shape", "ShapeError", "Sink", "Statement", "attach",
           "backward_statements", "check_shape", "hooked_classes"]

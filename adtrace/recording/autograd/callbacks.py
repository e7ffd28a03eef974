"""The recorder's side of autograd's hook points: the callbacks the wrappers make, in one Protocol.

``Recorder`` implements it (each callback behind the guard of ``recording/fanout.py``), and so does
the fan-out that serves several nested recordings. A callback's arguments are autograd's live
objects; what it keeps of them is the recorder's business.
"""

from typing import Any, Protocol

from ..fanout import fanout_for


class Callbacks(Protocol):
    live: bool

    # reverse mode: the trace, its nodes, and each backward_pass
    def on_vjp_root(self, node) -> None:
        """``VJPNode.new_root()`` built the input node ``node``."""

    def on_vjp_node(self, node, value, fun, args, kwargs, argnums, parents) -> None:
        """``VJPNode.__init__`` built ``node`` for the primitive call ``fun(*args, **kwargs)``."""

    def on_trace(self, start_node, x, end_value, end_node) -> None:
        """``trace`` returned (``end_node`` None: the output does not depend on the input)."""

    def begin_query(self, g, end_node) -> None:
        """``backward_pass(g, end_node)`` starts."""

    def on_toposort(self, node) -> None:
        """``toposort`` yielded ``node``: the pass visits it next."""

    def on_local_vjp(self, node_id, g, ingrads) -> None:
        """The local VJP of the node ``id(node) == node_id`` turned ``g`` into ``ingrads`` (a tuple)."""

    def before_add_outgrads(self, prev_g_flagged, g) -> Any:
        """``add_outgrads`` is about to add ``g`` into the entry ``prev_g_flagged`` (not None): a
        token for ``after_add_outgrads`` (what the entry held before autograd may write into it)."""

    def after_add_outgrads(self, prev_g_flagged, previous, g, result) -> None:
        """``add_outgrads`` returned ``result``; ``previous`` is before_add_outgrads' token or None."""

    def end_query(self, result, error) -> None:
        """``backward_pass`` returned ``result``, or raised ``error``."""

    # forward mode
    def on_jvp_root(self, node, g) -> None:
        """``JVPNode.new_root(g)`` built the input node with its tangent ``g``."""

    def begin_jvp_node(self, fun, argnums, parents) -> Any:
        """``JVPNode.__init__`` starts (its JVP rule's sum_outgrads runs inside): a frame token."""

    def end_jvp_node(self, frame, node, value, args) -> None:
        """``JVPNode.__init__`` built ``node`` (``frame``: begin_jvp_node's token)."""

    def abort_jvp_node(self, frame) -> None:
        """``JVPNode.__init__`` raised (``frame``: begin_jvp_node's token)."""


# the callbacks that take back a token, and the position of its argument
TOKENS = {"after_add_outgrads": 1, "end_jvp_node": 0, "abort_jvp_node": 0}

Fanout = fanout_for(Callbacks, TOKENS)

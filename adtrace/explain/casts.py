"""Casts to an integer dtype on the input's paths to the output.

autograd traces ``x.astype(int)``: its VJP casts the gradient back to the input's dtype, as if the cast
were the identity, while a rounding's derivative is 0 wherever it is defined. A gradient that flows
through one is autograd's convention, not the derivative the numbers have (central differences see 0
there): the cast is named beside the contributions (``integer-cast``), with the share of the input's
paths that go through it.
"""

import numpy as np

from .explanation import Cause

ASTYPE = ("astype", "_astype")  # (autograd's primitive under numpy 2, and under numpy 1.x)

DETAIL = ("a cast to an integer dtype: autograd's VJP passes the gradient through it as if it were the identity, "
          "where the rounding's derivative is 0")


def integer_casts(recording, graph, paths=()):
    """``Cause``s of the integer casts on the input's paths to the output (on ``paths`` when given: an
    element's, so that a cast of other elements is not named)."""
    on_paths = {node.split("[", 1)[0] for path in paths for node in path.nodes}
    found = []
    for label in graph.order:
        node = recording.nodes.get(label)
        if getattr(node, "primitive", None) not in ASTYPE or not graph.from_root.get(label) \
                or not graph.to_end.get(label) or (paths and label not in on_paths):
            continue
        if np.asarray(node.value).dtype.kind in "iub":
            found.append(Cause(label, node.primitive, node.argnums[0], node.site, "integer-cast",
                               graph.fraction(label, 0), DETAIL))
    return found

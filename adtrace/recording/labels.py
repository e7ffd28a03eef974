"""Node labels shared by the recorder and the reference engine.

A label names a node the way the lecture names Wengert variables: ``v<i>`` in creation order,
the root (the traced input) first as ``v0_root``, then each operation with its primitive's name,
e.g. ``v1_multiply``. Both engines number nodes in the order autograd's tracer creates them, so
the same function at the same inputs gives the same labels in a recording and a reference run.
"""

import functools
import re

ROOT_NAME = "root"
_SEPARATORS = re.compile(r"[^0-9A-Za-z]+")


def primitive_name(fun):
    """autograd's name for a primitive, qualified by its class for methods, so that the inner
    backward pass's ``VSpace.add`` is not mistaken for numpy's ``add``."""
    raw = getattr(fun, "fun", fun)  # autograd's primitive wrapper keeps the raw function in .fun
    qualname = getattr(raw, "__qualname__", "")
    if "." in qualname and "<" not in qualname:
        return qualname
    return str(getattr(fun, "__name__", fun))


def node_label(index, name):
    """``v<index>_<name>`` (``v1_multiply``), the name as ``label_name`` makes it."""
    return label_for(index, label_name(name))


def label_for(index, reduced):
    """``node_label`` of a name already reduced by ``label_name`` (a recorder reduces each primitive's
    once): the one place a node label's form is written (written out in the autograd recorder's two hot
    paths, ``Nodes.on_vjp_node`` and ``ForwardMode.begin_jvp_node``: a call per node costs 320 instructions)."""
    return f"v{index}_{reduced}"


def unrecorded_label(index):
    """The label of the ``index``-th node a recording meets that was made before it started."""
    return f"u{index}_unrecorded"


@functools.lru_cache(maxsize=1024)  # once per node of the reference engine's graph
def label_name(name):
    """A primitive's name reduced to letters, digits and single underscores (``VSpace.add`` ->
    ``VSpace_add``); the raw name stays beside the label in the node's event."""
    return "_".join(part for part in _SEPARATORS.split(name) if part) or "op"


# An engine of micrograd's shape names its operations by symbols (``'+'``, ``'**2'``); a label
# needs a word. The raw op stays in the node event's ``primitive``.
_OP_WORDS = (("**", "pow"), ("+", "add"), ("-", "sub"), ("*", "mul"), ("/", "div"), ("@", "matmul"))
LEAF_NAME = "leaf"


def op_name(op, leaf=False):
    """A readable name for an op as a class writes it: ``'+'`` -> ``add``, ``'*'`` -> ``mul``,
    ``'**2'`` -> ``pow2``, ``'**-1'`` -> ``pow_neg1``, ``'**0.5'`` -> ``pow0.5`` (label ``v<i>_pow0_5``); a word stays
    itself (``'ReLU'``, ``'tanh'``); a value without children is a ``leaf``."""
    if leaf:
        return LEAF_NAME
    op = str(op).strip()
    for symbol, word in _OP_WORDS:
        if op.startswith(symbol):
            rest = op[len(symbol):].strip()
            if rest.startswith("-"):
                rest = "_neg" + rest[1:]
            return word + rest
    return op or "op"

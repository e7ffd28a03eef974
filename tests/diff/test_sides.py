"""One side of a diff: nodes in autograd's words, arguments by position, the pass's gradients and writes."""

import micrograd.engine  # noqa: F401  (the engine exists)

from adtrace.diff import diff
from adtrace.diff.calls import record_call
from adtrace.diff.divergence import IDENTICAL, VALUES_DIFFER
from adtrace.diff.sides import LEAF, primitive_name, side_of


def f(x):
    return x * x * 2.0 + x


def test_an_engines_ops_are_named_as_autograd_names_its_primitives():
    assert [primitive_name(p, False) for p in ("*", "+", "**2", "ReLU", "tanh", "")] == [
        "multiply", "add", "power", "relu", "tanh", ""]
    assert primitive_name("", True) == primitive_name("root", True) == LEAF


def test_autograds_side_a_constant_is_a_position_without_a_parent():
    side = side_of(record_call(f, (3.0,)))
    nodes = list(side.nodes.values())
    assert [n.primitive for n in nodes] == [LEAF, "multiply", "multiply", "add"]
    assert nodes[2].args == {0: nodes[1].label}  # (x * x) * 2.0: the 2.0 is a constant, no parent
    assert nodes[0].value == 3.0 and nodes[1].site.endswith(f":{f.__code__.co_firstlineno + 1}")
    assert side.end == nodes[-1].label and side.visits[0] == side.end and side.visits[-1] == nodes[0].label
    assert side.gradient(nodes[0].label) == 13.0  # 4x + 1 at 3
    writes = side.writes[nodes[0].label]
    assert sorted((w.consumer, w.argnum) for w in writes) == [(nodes[1].label, 0), (nodes[1].label, 1),
                                                             (nodes[3].label, 1)]
    assert side.ingrads[nodes[1].label] == {0: 6.0, 1: 6.0}


def test_an_engines_side_its_constant_is_a_leaf_and_its_leaf_gradient_the_last_write():
    side = side_of(record_call(f, (3.0,), engine="micrograd"))
    leaves = [n for n in side.nodes.values() if n.leaf]
    assert [n.value for n in leaves] == [3.0, 2.0] and all(n.primitive == LEAF for n in leaves)
    assert side.gradient(leaves[0].label) == 13.0
    product = next(n for n in side.nodes.values() if n.primitive == "multiply" and leaves[1].label in n.args.values())
    assert product.args[1] == leaves[1].label and product.shown == "*"


def test_autograds_forms_of_an_engines_relu_are_named_relu_with_its_one_argument():
    import autograd.numpy as anp

    for form in (lambda h: anp.maximum(0, h), lambda h: anp.maximum(h, 0.0), lambda h: anp.where(h > 0, h, 0)):
        for x in (1.5, -1.5):  # (a live unit and a dead one)
            side = side_of(record_call(lambda x: form(x * 0.5) * x, (x,)))
            relu = [n for n in side.nodes.values() if n.primitive == "relu"]
            assert len(relu) == 1 and relu[0].shown in ("maximum", "where") and list(relu[0].args) == [0]
            assert [w.argnum for w in side.writes[relu[0].args[0]]] == [0]  # (its write renumbered as the relu's)
    kept = side_of(record_call(lambda x: anp.maximum(0.5, x * 0.5) + anp.where(x < 0, x, 0), (1.5,)))
    assert [n.primitive for n in kept.nodes.values()] == [LEAF, "multiply", "maximum", "where", "add"]


def test_an_engines_leaf_made_for_an_argument_is_an_input_without_a_user_line():
    side = side_of(record_call(lambda x, y: x * y, (1.5, 2.0), engine="micrograd"))
    assert [n.site for n in side.nodes.values() if n.leaf] == [None, None]


def difference(x):
    return x * x - x * 3.0  # (micrograd: x*x + (x*3.0)*(-1))


def from_one(x):
    return 1.0 - x  # (micrograd: x*(-1) + 1.0)


def over(x):
    return 2.0 / x  # (micrograd: x**-1 * 2.0)


def layer(x1, x2):
    return 1.2 * (0.5 * x1 - 1.5 * x2) - 0.6 * (x1 / 3 + 0.7)


def test_an_engines_subtract_and_divide_of_a_traced_value_are_autograds_one_node():
    for f, args in ((difference, (0.7,)), (from_one, (0.7,)), (over, (0.7,)), (layer, (1.0, -0.5))):
        for argnum in range(len(args)):
            a, b = record_call(f, args, argnum), record_call(f, args, engine="micrograd")
            side = side_of(b)
            assert "subtract" in {n.primitive for n in side.nodes.values()} or f is over
            d = diff(a, b)
            assert d.verdict == IDENTICAL, (f.__name__, argnum)
    wrong = record_call(lambda x: x * x - x * 3.5, (0.7,), engine="micrograd")  # (another coefficient: found)
    d = diff(record_call(difference, (0.7,)), wrong)
    assert d.verdict == VALUES_DIFFER

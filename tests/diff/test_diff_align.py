"""Nodes matched by structure, not position: extra nodes on one side listed, never shifting the rest."""

import autograd.numpy as anp

from adtrace.diff import diff
from adtrace.diff.align import align
from adtrace.diff.calls import record_call
from adtrace.diff.divergence import IDENTICAL, VALUES_DIFFER
from adtrace.diff.sides import side_of
from learner_shapes import OplessEdgeValue


def aligned(f, g, args=(0.5,), engine_b=None):
    a, b = side_of(record_call(f, args)), side_of(record_call(g, args, engine=engine_b))
    return a, b, align(a, b)


def test_another_order_of_creation_matches_each_node_by_its_arguments():
    def f(x):
        s, c = anp.sin(x), anp.cos(x)
        return s * c + s

    def g(x):
        c, s = anp.cos(x), anp.sin(x)  # (made the other way round)
        return s * c + s

    a, b, al = aligned(f, g)
    assert al.only_a == al.only_b == []
    assert {a.nodes[x].primitive: b.nodes[y].primitive for x, y in al.a_to_b.items()} == {
        "leaf": "leaf", "sin": "sin", "cos": "cos", "multiply": "multiply", "add": "add"}
    assert al.a_to_b["v1_sin"] == "v2_sin" and al.a_to_b["v2_cos"] == "v1_cos"


def test_a_node_more_on_one_side_is_listed_and_the_nodes_after_it_still_match():
    a, b, al = aligned(lambda x: anp.exp(anp.sin(x)) * x, lambda x: anp.exp(anp.sin(x) + 0.0) * x)
    assert al.only_a == [] and [b.nodes[y].primitive for y in al.only_b] == ["add"]
    assert [b.nodes[al.a_to_b[x]].primitive for x in a.nodes] == ["leaf", "sin", "exp", "multiply"]
    back, _, al2 = aligned(lambda x: anp.exp(anp.sin(x) + 0.0) * x, lambda x: anp.exp(anp.sin(x)) * x)
    assert [back.nodes[x].primitive for x in al2.only_a] == ["add"] and al2.only_b == []


def test_an_engines_constant_leaves_are_matched_as_constants():
    a, b, al = aligned(lambda x: x * 2.0 + x * 3.0, lambda x: x * 2.0 + x * 3.0, engine_b="micrograd")
    assert sorted(b.nodes[y].value for y in al.constants_b) == [2.0, 3.0]
    assert al.only_a == al.only_b == [] and len(al.a_to_b) == 4 and not al.unordered  # (by position)
    two = next(y for y in al.constants_b if b.nodes[y].value == 2.0)
    assert al.a_to_b["v1_multiply"] in b.children[two]  # (the product by 2.0 matched with the one by 2.0)


def branchy(x, flip):
    if flip:
        v = anp.sin(x)
    u = anp.sin(x)  # (one line, made first or second)
    if not flip:
        v = anp.sin(x)
    return u * v


def test_the_user_line_decides_between_two_nodes_of_the_same_structure():
    a, b = side_of(record_call(branchy, (0.5, False))), side_of(record_call(branchy, (0.5, True)))
    al = align(a, b)
    u = f":{branchy.__code__.co_firstlineno + 3}"
    assert a.nodes["v1_sin"].site.endswith(u) and b.nodes["v2_sin"].site.endswith(u)
    assert al.a_to_b["v1_sin"] == "v2_sin" and al.a_to_b["v2_sin"] == "v1_sin" and not al.unordered


def mlp(x, relu):
    """A two-layer scalar MLP; ``relu``: the engine's (micrograd's ``relu()``) or an autograd form."""
    h = relu(x * 0.5 + 0.1)
    y = relu(h * 0.7 - 0.2)
    return (y - 1.0) * (y - 1.0) / 2.0


def test_an_engines_relu_matches_autograds_maximum_and_where_and_its_constants_are_constants():
    for form in (lambda h: anp.maximum(0, h), lambda h: anp.maximum(h, 0), lambda h: anp.where(h > 0, h, 0.0)):
        for x in (1.5, -1.5, 0.1):  # (both units live, the first dead, the second dead)
            a, b, al = aligned(lambda x: mlp(x, form), lambda x: mlp(x, lambda h: h.relu()), (x,), "micrograd")
            assert al.only_a == al.only_b == [] and len(al.a_to_b) == len(a.nodes)
            assert sorted(b.nodes[al.a_to_b[x]].shown for x in a.nodes if a.nodes[x].shown in ("maximum", "where")) \
                == ["ReLU", "ReLU"]
            assert sorted(b.nodes[y].value for y in al.constants_b if b.nodes[y].leaf) == [-1.0, -1.0, -0.2, 0.1,
                                                                                            0.5, 0.5, 0.7]


def test_an_engines_node_made_of_a_non_differentiated_argument_matches_autograds_constant():
    def f(x, y):
        return x * y + y * 3.0  # (y not differentiated: autograd's y * 3.0 is a number; micrograd's a node)

    for args in ((1.5, 2.0), (2.0, 2.0)):
        a, b, al = aligned(f, f, args, "micrograd")
        assert al.only_a == al.only_b == [] and len(al.a_to_b) == len(a.nodes) == 3
        assert sorted(b.nodes[y].shown for y in al.constants_b) == ["*", "leaf", "leaf"]


def linear(x1, x2):
    return 0.5 * x1 + -1.5 * x2  # (micrograd makes leaves Value(0.5) and Value(-1.5) before the products)


def test_autograds_root_is_the_engines_leaf_of_its_argument_even_where_argument_values_coincide():
    for argnum in (0, 1):
        ag, mg = record_call(linear, (1.0, 1.0), argnum), record_call(linear, (1.0, 1.0), engine="micrograd")
        a, b = side_of(ag), side_of(mg)
        al = align(a, b)
        inputs = [y for y, n in b.nodes.items() if n.leaf and n.site is None]  # (the engine's argument leaves)
        assert len(inputs) == 2 and al.a_to_b["v0_root"] == inputs[argnum] and al.only_a == al.only_b == []
        assert diff(ag, mg).verdict == IDENTICAL


def test_a_class_with_no_op_is_aligned_by_its_arguments_alone():
    def f(a, b):
        return (a + b) * a

    ag, edge = record_call(f, (3.0, 4.0)), record_call(f, (3.0, 4.0), engine=OplessEdgeValue)
    a, b = side_of(ag), side_of(edge)
    al = align(a, b)
    assert {b.nodes[y].primitive for y in b.nodes if not b.nodes[y].leaf} == {""}
    assert al.only_a == [] and len([x for x in al.a_to_b if not a.nodes[x].leaf]) == 2


def test_an_engine_on_side_a_its_constant_leaf_of_a_commuted_product_is_autograds_constant():
    for args in ((1.0, 2.0), (1.0, 1.0)):  # (0.5 * x1: micrograd's x1 * Value(0.5), autograd's multiply(0.5, x1))
        mg, ag = record_call(linear, args, engine="micrograd"), record_call(linear, args)
        al = align(side_of(mg), side_of(ag))
        assert al.only_a == al.only_b == [] and len(al.a_to_b) == 3  # (root, 0.5 * x1, the sum)
        assert diff(mg, ag).verdict == IDENTICAL


def layer(x1, x2, coefficient=0.5):
    """Two units of one input x1 by two constants: micrograd's ``x1 * Value(0.5)`` and ``x1 * Value(1/3)``."""
    return coefficient * x1 + x1 / 3 * x2


def test_an_engine_on_side_a_its_product_by_a_constant_matches_the_one_by_the_same_constant():
    for args in ((1.0, 0.5), (1.0, -0.4)):
        mg, ag = record_call(layer, args, engine="micrograd"), record_call(layer, args)
        for a, b in ((mg, ag), (ag, mg)):
            result = diff(a, b)
            assert result.alignment.only_a == result.alignment.only_b == [] and result.verdict == IDENTICAL
        changed = record_call(lambda x1, x2: layer(x1, x2, 0.6), args)  # (a real change of a coefficient)
        for a, b in ((mg, changed), (changed, mg)):
            result = diff(a, b)
            assert result.alignment.only_a == result.alignment.only_b == [] and result.verdict == VALUES_DIFFER


def test_inputs_and_constants_are_alike_within_the_diffs_own_tolerance():
    """``diff(a, b, rtol)``'s tolerance is the alignment's too: autograd's root of an unknown argument (a file
    saved without it) is the engine's leaf of a value within rtol of it, not no leaf at all."""
    mg = record_call(linear, (1.0, 2.0), engine="micrograd")
    ag = record_call(linear, (1.0 + 1e-7, 2.0))
    ag.argnum = None  # (not known: which leaf it is, only its value can say)
    loose = align(side_of(ag), side_of(mg), rtol=1e-3)
    leaf = loose.a_to_b["v0_root"]
    assert side_of(mg).nodes[leaf].value == 1.0 and diff(ag, mg, rtol=1e-3).verdict == IDENTICAL

"""The diff of two backward passes: identical with itself, and the first divergence found where it is."""

import random

import autograd.numpy as anp
import pytest
from autograd.extend import defvjp, primitive

import adtrace
from adtrace.diff import diff
from adtrace.diff.calls import record_call
from adtrace.diff.divergence import (ACCUMULATION, FOLLOWED, GRAPH, IDENTICAL, INPUT, LOCAL_RULE, ORDER,
                                     STRUCTURE_DIFFERS, VALUES_DIFFER)
from learner_shapes import BUGGY, SHAPES


def scaled_product(factor):
    """A product whose VJP for its second argument is ``factor`` times right (1: the right rule); every
    such primitive is named ``scaled``: two of them are one primitive to the diff."""
    @primitive
    def scaled(a, b):
        return a * b

    defvjp(scaled, lambda ans, a, b: lambda g: g * b, lambda ans, a, b: lambda g: factor * g * a)
    return scaled


RIGHT, WRONG = scaled_product(1.0), scaled_product(1.5)


def random_function(seed, size, odd=None, wrong=False):
    """A random scalar graph of ``size`` operations on x; operation ``odd`` is ``scaled`` (its rule wrong
    when ``wrong``). Every value is summed at the end: every node is reached by the backward pass."""
    rng = random.Random(seed)
    plan = [(rng.choice("+*st"), rng.randrange(i + 1), rng.randrange(i + 1)) for i in range(size)]

    def f(x):
        values = [x]
        for i, (op, j, k) in enumerate(plan):
            a, b = values[j], values[k]
            if i == odd:
                values.append((WRONG if wrong else RIGHT)(a + 0.25, b + 0.5))
            elif op == "+":
                values.append(a + b)
            elif op == "*":
                values.append(a * b * 0.5)
            elif op == "s":
                values.append(anp.sin(a))
            else:
                values.append(anp.tanh(a - 0.5 * b))
        total = values[0]
        for v in values[1:]:
            total = total + v
        return total

    return f


@pytest.mark.parametrize("seed", range(12))
def test_a_recording_diffed_with_itself_is_identical(seed):
    f = random_function(seed, 30)
    rec = record_call(f, (0.7,))
    d = rec.diff(rec)
    assert d.rtol == 1e-9 and d.verdict == IDENTICAL and d.first is None and d.order is None and d.exit_code == 0
    assert d.counts["identical"] == len(rec.graph(rec.gradient and d.a.end)) and d.counts["values differ"] == 0
    again = diff(rec, record_call(f, (0.7,)))  # (another run of the same function)
    assert again.verdict == IDENTICAL and again.counts == d.counts


@pytest.mark.parametrize("seed", range(12))
def test_a_single_perturbed_contribution_is_found_as_the_first_divergence(seed):
    rng = random.Random(100 + seed)
    odd = rng.randrange(5, 25)
    f_right, f_wrong = random_function(seed, 30, odd), random_function(seed, 30, odd, wrong=True)
    a, b = record_call(f_right, (0.7,)), record_call(f_wrong, (0.7,))
    scaled = next(e.label for e in a.of_kind("node") if e.primitive == "scaled")
    d = diff(a, b)
    assert d.verdict == VALUES_DIFFER and d.exit_code == 1
    assert (d.first.kind, d.first.what, d.first.a.node) == (LOCAL_RULE, "contribution to argument 1", scaled)
    assert d.first.b.node == d.alignment.a_to_b[scaled] and d.first.a.line == d.first.b.line is not None
    assert float(d.first.b.value) == pytest.approx(1.5 * float(d.first.a.value))
    assert d.counts["only in A"] == d.counts["only in B"] == 0


def test_the_same_function_through_autograd_and_micrograd_diffs_node_by_node_with_constants_as_constants():
    def f(x, y):
        z = x * y
        w = z + x
        return w * w + x * 2.0

    a, b = record_call(f, (3.0, 2.0)), record_call(f, (3.0, 2.0), engine="micrograd")
    d = diff(a, b)
    assert d.verdict == IDENTICAL and d.first is None
    assert d.counts == {"identical": 6, "values differ": 0, "only in A": 0, "only in B": 0, "constants": 2}
    constants = sorted(r.b for r in d.rows if r.status == "constant")
    assert [b.nodes[c].value for c in constants] == [2.0, 2.0]  # y (not differentiated) and the literal 2.0
    assert d.alignment.a_to_b["v0_root"] == "v0_leaf"
    assert diff(b, a).counts == d.counts  # either way round


@pytest.mark.parametrize("cls", SHAPES, ids=lambda c: c.__name__)
def test_a_learners_engine_with_the_assignment_bug_names_the_lost_contribution_first(cls):
    def g(x):
        a = x * x
        b = a + x
        c = a + b
        return c * c

    auto = record_call(g, (3.0,))
    assert diff(auto, record_call(g, (3.0,), engine=cls)).verdict == IDENTICAL
    d = diff(auto, record_call(g, (3.0,), engine=BUGGY[cls]))
    assert d.first.kind == ACCUMULATION and d.first.what == "gradient"
    assert "lost a contribution" in d.first.detail and "assigned" in d.first.detail
    if cls.__name__ != "EdgeValue":  # (its bug is in every op: the product's own write comes first)
        assert d.first.a.node == "v1_multiply"  # a = x * x, whose gradient lost b's or c's
        assert (float(d.first.a.value), float(d.first.b.value)) == (84.0, 42.0)
    assert d.follows and d.follows[-1].a.node == "v0_root"  # what follows: x's gradient


def test_a_rule_before_and_after_names_the_node():
    def f(x, rule):
        return anp.sin(rule(x, x + 1.0)) * x

    before, after = (record_call(lambda x, r=r: f(x, r), (0.3,)) for r in (WRONG, RIGHT))
    d = diff(before, after)
    node = next(e.label for e in before.of_kind("node") if e.primitive == "scaled")
    assert (d.first.kind, d.first.a.node) == (LOCAL_RULE, node)


def test_a_forward_value_that_differs_with_the_same_inputs_is_the_primitive():
    a = record_call(lambda x: anp.sin(x) * x, (0.3,))
    b = record_call(lambda x: anp.sin(x) * x, (0.4,))
    d = diff(a, b)
    assert (d.first.kind, d.first.what, d.first.a.node) == ("input", "forward value", "v0_root")
    assert [(x.kind, x.what, x.a.node) for x in d.follows[:2]] == [
        (FOLLOWED, "forward value", "v1_sin"), (FOLLOWED, "forward value", "v2_multiply")]
    assert all(x.kind == FOLLOWED for x in d.follows)


def test_a_node_only_one_side_has_is_listed_and_later_nodes_still_match():
    a = record_call(lambda x: anp.sin(x) * x + x, (0.3,))
    b = record_call(lambda x: anp.sin(x * 1.0) * x + x, (0.3,))  # (x * 1.0: one node more, first)
    d = diff(a, b)
    assert d.verdict == STRUCTURE_DIFFERS and d.first.kind == GRAPH and d.first.b.node == "v1_multiply"
    assert d.counts["only in A"] == 0 and d.counts["only in B"] == 1
    assert d.alignment.a_to_b["v2_multiply"] == "v3_multiply" and d.alignment.a_to_b["v3_add"] == "v4_add"
    c = record_call(lambda x: anp.cos(x) * x + x, (0.3,))  # (sin -> cos: the product's argument differs too)
    assert diff(a, c).first.kind == GRAPH and diff(a, c).counts["only in A"] == diff(a, c).counts["only in B"] >= 1


def test_an_engine_that_reads_a_gradient_before_every_contribution_arrived_is_an_order_divergence():
    from learner_passes import QueueValue, squares  # a breadth-first visit; h + h * 3, h used at two depths

    d = diff(record_call(squares, (2.0,)), record_call(squares, (2.0,), engine=QueueValue))
    assert d.first.kind == ORDER and "before all its contributions arrived" in d.first.detail


class LastChildFirst:
    """micrograd's shape, its topological order built from each value's last child first: another valid order."""

    def __init__(self, data, _children=(), _op=''):
        self.data, self.grad, self._backward, self._prev, self._op = data, 0.0, lambda: None, tuple(_children), _op

    def __add__(self, other):
        out = LastChildFirst(self.data + other.data, (self, other), '+')

        def _backward():
            self.grad += out.grad
            other.grad += out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        out = LastChildFirst(self.data * other.data, (self, other), '*')

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def backward(self):
        topo, visited = [], set()

        def build(v):
            if v not in visited:
                visited.add(v)
                for child in reversed(v._prev):
                    build(child)
                topo.append(v)
        build(self)
        self.grad = 1.0
        for v in reversed(topo):
            v._backward()


def test_a_different_valid_order_is_identical_and_reported_as_an_order_difference():
    def g(x):
        a = x * x
        b = x + x
        return a * b  # (a and b may be visited in either order)

    auto = record_call(g, (2.0,))
    other = record_call(g, (2.0,), engine=LastChildFirst)
    d = diff(auto, other)
    assert d.verdict == IDENTICAL and d.exit_code == 0 and d.first is None
    visits = [d.alignment.b_to_a[y] for y in other.visit_order(1)]
    assert sorted(visits) == sorted(auto.visit_order(1)) and visits != auto.visit_order(1)
    step, x, y = d.order
    assert auto.visit_order(1)[step] == x and other.visit_order(1)[step] == y and d.alignment.a_to_b[x] != y
    from adtrace.report.diffed import diff_markdown

    assert "an order difference, not a value difference: the gradients agree" in diff_markdown(d)
    from learner_passes import QueueValue, squares  # (its gradient differs too: never said to agree)

    wrong = diff_markdown(diff(record_call(squares, (2.0,)), record_call(squares, (2.0,), engine=QueueValue)))
    assert "the gradients agree" not in wrong and "the values differ too" in wrong


def test_a_saved_recording_diffs_as_identical_to_the_live_one(tmp_path):
    rec = record_call(random_function(3, 20), (0.7,), capture="auto")
    rec.save(tmp_path / "r.json")
    loaded = adtrace.load(tmp_path / "r.json")
    assert diff(rec, loaded).verdict == IDENTICAL == diff(loaded, rec).verdict


def test_the_collector_paused_while_diffing_is_put_back_as_it_was():
    import gc

    from adtrace.recording.eventlog import collector_paused

    rec = record_call(random_function(1, 5), (0.7,))
    assert gc.isenabled() and diff(rec, rec).verdict == IDENTICAL and gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()  # (a user's choice kept)
    finally:
        gc.enable()
    with pytest.raises(ValueError):
        with collector_paused():
            assert not gc.isenabled()
            raise ValueError
    assert gc.isenabled()


def test_a_side_without_a_backward_pass_is_nothing_to_diff_never_identical():
    """A recording with no backward pass (an output that does not depend on the input, an empty one) was
    diffed as "identical" with 0 nodes visited, exit 0."""
    from adtrace.diff import NothingToDiff
    from adtrace.recording.saved import load

    with adtrace.record() as empty:
        pass
    some = record_call(lambda x: anp.sin(x) * x, (0.5,))
    for a, b in ((empty, empty), (some, load('{"events": []}')), (empty, some)):
        with pytest.raises(NothingToDiff, match="holds no backward pass"):
            diff(a, b)
    assert diff(some, some).verdict == IDENTICAL


def test_a_constant_argument_that_differs_is_an_input_not_a_local_rule():
    """Only y differs, autograd's constant (argnum 0 differentiated): it was called local-rule ("multiply
    computes another value"); a rule made wrong is still local-rule."""
    f = lambda x, y: anp.sin(x * y)  # noqa: E731
    d = diff(record_call(f, (0.5, 3.0)), record_call(f, (0.5, 3.0000001)))
    assert d.first.kind == INPUT and "a constant differs (argument 1)" in d.first.detail
    assert d.first.a.primitive == "multiply"


def test_an_engines_constant_leaf_is_never_the_first_divergence_the_node_using_it_is():
    def f(x):
        return anp.exp(x * 0.7) * 2.0

    def g(x):
        return ((x * 0.7) ** 2) * 2.0  # (the op differs; its constants do not)

    for d in (diff(record_call(f, (0.5,)), record_call(g, (0.5,), engine="micrograd")),
              diff(record_call(g, (0.5,), engine="micrograd"), record_call(f, (0.5,)))):
        assert d.verdict == STRUCTURE_DIFFERS and d.first.kind == GRAPH
        assert {at.primitive for at in (d.first.a, d.first.b) if at is not None} <= {"exp", "**2"}
        assert not any((x.a or x.b).primitive == "leaf" for x in [d.first, *d.follows])


def test_a_constant_that_differs_between_engines_is_an_input_not_a_rule():
    d = diff(record_call(lambda x: anp.maximum(0, x * 0.7) * 2.0, (0.5,)),
             record_call(lambda x: (x * 0.8).relu() * 2.0, (0.5,), engine="micrograd"))
    assert d.first.kind == INPUT and "argument 1" in d.first.detail and (d.first.a.value, d.first.b.value) == (
        0.35, 0.4)
    same = diff(record_call(lambda x: anp.maximum(0, x * 0.7) * 2.0, (0.5,)),
                record_call(lambda x: (x * 0.7).relu() * 2.0, (0.5,), engine="micrograd"))
    assert same.verdict == IDENTICAL and same.counts["constants"] == 2


def test_a_product_whose_engine_wrote_its_operands_the_other_way_is_identical_at_any_input():
    W = (0.5, -0.3, 0.8)

    def f(x):  # (autograd's w * h: the constant first; micrograd's float * Value is h * Value(w))
        total = 0.05
        for w in W:
            total = total + w * anp.maximum(0, w * x + 0.1)
        return total * total

    def g(x):
        total = 0.05
        for w in W:
            total = total + w * (w * x + 0.1).relu()
        return total * total

    for x in (1.5, -2.0, 0.3):  # (every unit live, some dead)
        d = diff(record_call(f, (x,)), record_call(g, (x,), engine="micrograd"))
        assert d.verdict == IDENTICAL and d.first is None, (x, d.first)
        swapped = [r for r in d.rows if r.b_operands]
        assert swapped and all(d.b.nodes[r.b].args[0] in d.alignment.b_to_a for r in swapped)

"""Work run inside a node's VJP (fixed_point, odeint, a rule calling grad): folded out of every
section of the report into one line, counted in the appendix; the user's pass is what is counted."""

import re

import autograd.numpy as anp
from autograd import grad, make_vjp
from autograd.extend import defvjp, primitive
from autograd.builtins import tuple as atuple
from autograd.misc.fixed_points import fixed_point
from autograd.scipy.integrate import odeint

import adtrace
from adtrace.compare.traced_call import trace_call
from adtrace.report import render
from adtrace.report.nesting import Nesting
from primitives import cube
from value_classes import ZeroingValue


def section(text, title):
    start = text.index(title)
    end = text.find("\n## ", start + 1)
    return text[start:] if end < 0 else text[start:end]


def rows(text):
    return [line for line in text.splitlines() if line.startswith("| ") and not line.startswith("|--")][1:]


def newton_sqrt(a):
    return fixed_point(lambda a: lambda x: 0.5 * (x + a / x), a, 1.0, lambda x, y: anp.abs(x - y), 1e-12)


def decay(a):
    ys = odeint(lambda y, t, a: -a * y, anp.array([1.0, 0.5]), anp.array([0.0, 1.0]), atuple((a,)))
    return anp.sum(ys[-1] ** 2)


def test_what_a_rule_runs_belongs_to_its_node():
    with adtrace.record() as rec:
        grad(lambda x: anp.sin(cube(x)))(0.5)
    nesting = Nesting(rec)
    (node, work), = nesting.work.items()
    assert rec.nodes[node].primitive == "cube" and work.query == nesting.user
    made = [getattr(rec.nodes[label], "primitive", "root") for label in work.nodes]
    assert len(work.passes) == 1 and made == ["root", "multiply", "multiply"]
    inside = [e for i, e in enumerate(rec.events) if i in nesting.inside]
    assert len(inside) == work.events and all(e.query != nesting.user or not e.in_backward_pass for e in inside)
    (first, last, owner), = nesting.stretches
    assert owner == node and last - first + 1 == work.events
    visit, vjp = rec.events[first - 1], rec.events[last + 1]  # between the visit of the node and its vjp event
    assert (visit.kind, visit.node, vjp.kind, vjp.node) == ("toposort", node, "vjp", node)


def test_passes_of_the_forward_computation_are_not_folded():
    with adtrace.record() as rec:
        grad(grad(lambda x: x * x * x))(2.0)
    nesting = Nesting(rec)
    assert nesting.work == {} and nesting.inside == set() and len(nesting.passes) == 2


def test_a_report_of_fixed_point_counts_the_users_pass_and_folds_the_rest():
    call = trace_call(newton_sqrt, (2.0,))
    text = render(call)
    nested = len(call.recording.passes()) - 1
    assert nested >= 2 and all(c.passed for c in call.checks)
    lecture = {r.split("|")[1].strip(): r.split("|")[3].strip() for r in rows(section(text, "## Lecture mapping"))}
    assert lecture["`node_to_grad = {out: [1]}`"] == "1" and lecture["`return adjoint of input v_input_bar`"] == "1"
    for title in ("## Graph", "## State snapshot", "## Call sequence"):
        assert "v6_root" not in section(text, title)  # made inside fixed_point's VJP
    assert f"{nested} nested backward passes" in section(text, "## Graph")
    assert [r for r in rows(section(text, "## Call sequence")) if "(inside the VJP of v" in r]
    appendix = section(text, "## Nested backward passes")
    assert "### Inside the VJP of `v" in appendix
    assert f"<details><summary>The {nested} nested passes</summary>" in appendix
    assert "State snapshot of query 2, the first of them" in appendix
    assert "### Query 2" not in section(text, "## State snapshot")


def test_a_small_odeint_report_shows_the_users_nodes_and_one_box_for_odeint():
    call = trace_call(decay, (0.7,))
    rec = call.recording
    text = render(call)
    nesting = Nesting(rec)
    (node, work), = nesting.work.items()
    assert rec.nodes[node].primitive == "odeint" and len(work.nodes) > 10 * (len(rec.nodes) - len(work.nodes))
    graph = section(text, "## Graph")
    drawn = re.findall(r'^    n\d+\["(.*)"\]$', graph, re.M)
    assert len(drawn) == len(rec.nodes) - len(work.nodes) + 1  # the user's nodes, and one box for odeint's work
    assert drawn[-1] == f"inside the VJP of {node}<br/>{len(work.passes)} nested passes, {len(work.nodes)} nodes"
    levels = section(text, "## Levels") if "## Levels" in text else ""
    assert str(len(work.passes)) not in levels.split("_Not counted here")[0]
    assert all(c.passed for c in call.checks)


@primitive
def traced_cube(x):
    return x**3


# its rule traces nodes of its own (make_vjp's forward half) and runs no backward pass: the user's pass is the only one
defvjp(traced_cube, lambda ans, x: lambda g: g * 3 * make_vjp(lambda y: y * y * y)(x)[1] ** (2 / 3))


def test_nodes_a_rule_makes_without_a_pass_of_its_own_are_folded_into_its_node():
    with adtrace.record() as rec:
        grad(lambda x: anp.sin(traced_cube(x)))(0.5)
    nesting = Nesting(rec)
    (node, work), = nesting.work.items()
    assert len(nesting.passes) == 1 and rec.nodes[node].primitive == "traced_cube" and work.passes == []
    assert [getattr(rec.nodes[label], "primitive", "root") for label in work.nodes] == ["root", "multiply", "multiply"]


def test_a_pass_alone_folds_nothing():
    with adtrace.record() as rec:
        grad(lambda x: anp.sin(anp.sin(x) * 2.0))(0.5)
    nesting = Nesting(rec)
    assert len(nesting.passes) == 1 and nesting.user == nesting.passes[0].query
    assert nesting.work == {} and nesting.inside == set() and nesting.stretches == [] and nesting.made_inside == {}


class _MakingZeroingValue(ZeroingValue):
    """``ZeroingValue`` (its writes before the pass's start) whose product's local backward makes three values."""

    def __mul__(self, other):
        out = type(self)(self.data * other.data, (self, other), '*')

        def _backward():
            k, k2, _ = type(self)(other.data), type(self)(self.data), type(self)(1.0)
            self.grad += k.data * out.grad
            other.grad += k2.data * out.grad
        out._backward = _backward
        return out


def test_values_a_local_backward_makes_are_folded_when_writes_came_before_the_pass():
    """The pass's writes before its start (zeroing) are as many as the values made inside its span: still folded."""
    with adtrace.record(engine=_MakingZeroingValue) as rec:
        (_MakingZeroingValue(3.0) * _MakingZeroingValue(2.0)).backward()
    nesting = Nesting(rec)
    (node, work), = nesting.work.items()
    assert node == "v2_mul" and work.nodes == ["v3_leaf", "v4_leaf", "v5_leaf"]  # (the product: its three values)

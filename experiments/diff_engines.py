"""Diff two backward passes: a learner's engine against autograd, and a custom rule before and after a fix.

`g(x) = (a + b)^2` with `a = x*x`, `b = a + x` uses `a` twice as the left operand of `+`. Recorded by
autograd and by micrograd, the two passes diff node by node as identical. A learner's class whose
`__add__` backward assigns (`self.grad = ...`) instead of adding (`+=`) diffed against autograd: the first
divergence is `a`'s gradient, its contributions the same on both sides, one of them thrown away by the
learner's second write, named. A custom `defvjp` rule that forgot a factor, diffed against the fixed
rule: the first divergence is that node's contribution, its gradient and forward values the same.
"""

import sys

import autograd.numpy as anp
from autograd import grad
from autograd.extend import defvjp, primitive

from adtrace.diff import diff
from adtrace.diff.calls import record_call
from adtrace.recording.events import AddOutgrads
from adtrace.report.diffed import diff_markdown
from adtrace.report.format import fmt
from adtrace.tools.experiment import Outcome, main, repo_root

INTRO = """\
**What this shows.** `adtrace diff A B` (`Recording.diff`) aligns two backward passes by structure,
not position: a node matches a node of the same primitive (micrograd's `*` is autograd's `multiply`)
whose arguments match, position by position; an engine's constant leaves (`Value(2.0)`) match
autograd's constants. It then walks the passes in the order A ran them and names the first node whose
output, contribution or accumulated gradient differs while its inputs matched. Below: the `=` bug of a
learner's engine against autograd (this report), then a custom rule before and after its fix."""

X = 3.0
U = 0.4


class BuggyValue:
    """A learner's Value: ``__add__``'s backward assigns (``=``) where it must add (``+=``)."""

    def __init__(self, data, _children=(), _op=''):
        self.data = data
        self.grad = 0.0
        self._backward = lambda: None
        self._prev = tuple(_children)
        self._op = _op

    def __add__(self, other):
        out = BuggyValue(self.data + other.data, (self, other), '+')

        def _backward():
            self.grad = out.grad  # the bug
            other.grad += out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        out = BuggyValue(self.data * other.data, (self, other), '*')

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def backward(self):
        topo, visited = [], set()

        def build_topo(v):
            if v not in visited:
                visited.add(v)
                for child in v._prev:
                    build_topo(child)
                topo.append(v)
        build_topo(self)
        self.grad = 1.0
        for v in reversed(topo):
            v._backward()


def g(x):
    a = x * x
    b = a + x
    c = a + b
    return c * c


def softplus_with(rule):
    @primitive
    def softplus(u):
        return anp.log1p(anp.exp(u))

    defvjp(softplus, rule)
    return softplus


BEFORE = softplus_with(lambda ans, u: lambda g: g * anp.exp(u))  # forgot to divide by 1 + exp(u)
AFTER = softplus_with(lambda ans, u: lambda g: g * anp.exp(u) / (1.0 + anp.exp(u)))


def loss_before(u):
    return BEFORE(u * u) * u


def loss_after(u):
    return AFTER(u * u) * u


def run():
    root = repo_root(__file__)
    auto = record_call(g, (X,), relative_to=root)
    micro = record_call(g, (X,), engine="micrograd", relative_to=root)
    buggy = record_call(g, (X,), engine=BuggyValue, relative_to=root)
    same, bug = diff(auto, micro), diff(auto, buggy)
    before, after = (record_call(f, (U,), relative_to=root) for f in (loss_before, loss_after))
    rule = diff(before, after)

    # the same claims, computed another way: from the buggy recording's own writes, and by hand
    lost = next(e for e in buggy.of_kind(AddOutgrads) if e.replaced and e.previous[0] != 0)
    a_label = next(e.label for e in auto.of_kind("node") if e.site.endswith(f":{_line(g, 1)}"))
    into_a = [e.contribution for e in auto.of_kind(AddOutgrads) if e.parent == a_label]
    softplus_node = next(e.label for e in after.of_kind("node") if e.primitive == "softplus")
    first = bug.first
    lines = [f"autograd vs micrograd: {same.verdict}, {same.counts}",
             f"autograd vs the = bug: {bug.verdict}; first divergence {first.kind} at {first.a.node} / {first.b.node} "
             f"({first.a.line}): A {fmt(first.a.value)}, B {fmt(first.b.value)}",
             f"  {first.detail}",
             f"rule before/after: {rule.verdict}; first divergence {rule.first.kind} at {rule.first.a.node}: "
             f"A {fmt(rule.first.a.value)}, B {fmt(rule.first.b.value)}"]
    checks = {
        "autograd and micrograd: the same backward pass, node by node": same.verdict == "identical"
        and same.counts["identical"] == len(auto.nodes) and same.counts["only in A"] == same.counts["only in B"] == 0,
        "the = bug: the first divergence is the accumulation into a = x*x, at its line":
            (first.kind, first.a.node, first.a.line)
            == ("accumulation", a_label, f"experiments/diff_engines.py:{_line(g, 1)}"),
        "autograd's value there is the sum of a's two contributions (84), the bug's one of them (42)":
            float(first.a.value) == sum(float(c) for c in into_a) == 84.0 and float(first.b.value) == 42.0,
        "the lost write named is the one the learner's recording marks as replacing a contribution":
            f"{lost.node}'s write into {lost.parent}.grad (argument {lost.argnum}) assigned" in first.detail,
        "what follows: x's gradient, autograd's grad(g)(3) against the bug's":
            bug.follows[-1].a.node == "v0_root" and float(bug.follows[-1].a.value) == grad(g)(X) == 546.0,
        "the rule before/after: the first divergence is softplus's contribution, its local rule":
            (rule.first.kind, rule.first.a.node) == ("local-rule", softplus_node),
        "the two rules part by exactly the missing factor 1 + exp(u*u)":
            abs(float(rule.first.a.value) / float(rule.first.b.value) - (1 + anp.exp(U * U))) < 1e-12,
    }
    diffed = diff_markdown(bug, "autograd: experiments/diff_engines.py:g", "BuggyValue: experiments/diff_engines.py:g",
                           max_rows=40)
    report = "\n".join([
        "# Experiment: diff two backward passes (adtrace diff)", "", INTRO, "",
        "\n".join("#" + line if line.startswith("#") else line for line in diffed.splitlines()), "",
        "## autograd against micrograd", "",
        f"The same `g` at {fmt(X)} through micrograd's `Value`: verdict **{same.verdict}**, "
        + ", ".join(f"{n} {what}" for what, n in same.counts.items()) + ".", "",
        "## A custom rule before and after its fix", "",
        f"`softplus(u*u) * u` at {fmt(U)}, its rule `g * exp(u)` (before) against `g * exp(u) / (1 + exp(u))` "
        f"(after): verdict **{rule.verdict}**; the first divergence is **{rule.first.kind}**, "
        f"{rule.first.what} of `{rule.first.a.node}` ({rule.first.a.line}): before {fmt(rule.first.a.value)}, "
        f"after {fmt(rule.first.b.value)}, {fmt(float(rule.first.a.value) / float(rule.first.b.value))} times: "
        "`1 + exp(u*u)`, the factor the rule forgot.", "", questions(bug, lost, into_a, rule)])
    return Outcome(lines, checks, report, None)


def questions(bug, lost, into_a, rule):
    a, b = bug.first.a, bug.first.b
    return f"""## Self-test questions

1. **The learner's engine and autograd number their nodes differently (`{b.node}` is `{a.node}`): how
   are they matched?** By structure: both are a product whose two arguments are the input (autograd's
   root, the engine's leaf), made on the same line, {a.line}; micrograd's `*` is autograd's `multiply`.
2. **Why is the first divergence `{a.node}`'s gradient and not a node's contribution?** Every
   contribution `{a.node}` received is the same on both sides ({", ".join(fmt(c) for c in into_a)}); only their
   sum differs, {fmt(a.value)} against {fmt(b.value)}: the learner's `{lost.node}` wrote its
   {fmt(lost.contribution)} over the {fmt(lost.previous[0])} already there (`self.grad = ...`).
3. **Why is x's gradient not the first divergence, though it differs too?** One of its contributions
   (from `{a.node}`) already differs: it follows from the first ({fmt(bug.follows[-1].a.value)} against
   {fmt(bug.follows[-1].b.value)}).
4. **The rule before and after: which value differs first, and which do not?** `{rule.first.a.node}`'s
   contribution to its argument; the forward values and the gradient its VJP read are the same, so the
   rule itself is what changed.
"""


def _line(function, offset):
    return function.__code__.co_firstlineno + offset


if __name__ == "__main__":
    sys.exit(main(run, __file__))

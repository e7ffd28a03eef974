"""A learner's misconception: any walk from the output will do ("why a topological sort?").

A learner's `backward()` walks the graph breadth-first from the output, a queue and a `seen` set,
and runs each value's `_backward` when it is dequeued. A value used at two depths is then visited
after its first consumer and before its second has added into its `.grad`: it passes on part of
the sum of its partial adjoints. Every local rule is right; adtrace names the value whose
`_backward` ran early and the consumer that added into it afterwards.
"""

import sys

from adtrace.checker.engine_rules import check_engine_call
from adtrace.compare.traced_engine_call import trace_engine_call
from adtrace.report import render
from adtrace.report.format import fmt
from adtrace.report.tables import table
from adtrace.tools.experiment import Outcome, main, repo_root

INTRO = """\
**What this shows.** `f(x) = h + 3h` with `h = x*x`: 4x², gradient 8x, 24 at 3. `h` is used twice,
by the sum directly and through `3h`, one level deeper. A learner's `Value` whose `backward()` walks
breadth-first from the output (a queue and a `seen` set: each value once, in the order it is
reached) dequeues `h` right after the sum, before `3h` has added its 3 into `h.grad`: `h` passes on
1 where the lecture's `node_to_grad[h]` sums to 4: `x.grad` ends at 2x * 1 = 6, not 24. Every local
rule is right. adtrace's check "both visit orders are reverse topological"
fails and names `h`'s node, its `.grad` when it ran and the consumer whose contribution came after;
`check` exits 1 with the same sentence. With micrograd's `build_topo` (depth first, each value
after all its consumers, reversed) everything passes; without its `visited` set, `h` is listed
twice and its `_backward` runs twice, named too."""

X = 3.0


class Value:
    """Stores a single scalar value and its gradient; ``backward()`` walks breadth-first."""

    def __init__(self, data, _children=(), _op=''):
        self.data = data
        self.grad = 0.0
        self._backward = lambda: None
        self._prev = tuple(_children)
        self._op = _op

    def __add__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data + other.data, (self, other), '+')

        def _backward():
            self.grad += out.grad
            other.grad += out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data * other.data, (self, other), '*')

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def backward(self):
        self.grad = 1.0
        queue, seen = [self], {self}
        while queue:  # breadth-first: a value runs as soon as it is reached
            v = queue.pop(0)
            v._backward()
            for child in v._prev:
                if child not in seen:
                    seen.add(child)
                    queue.append(child)


class SortedValue(Value):
    """The same class with micrograd's ``backward()``: a topological order, reversed."""

    def __add__(self, other):
        other = other if isinstance(other, SortedValue) else SortedValue(other)
        out = SortedValue(self.data + other.data, (self, other), '+')

        def _backward():
            self.grad += out.grad
            other.grad += out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        other = other if isinstance(other, SortedValue) else SortedValue(other)
        out = SortedValue(self.data * other.data, (self, other), '*')

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


class ListedValue(SortedValue):
    """The same class whose ``build_topo`` has no ``visited`` set: a value used twice is listed twice."""

    def __add__(self, other):
        other = other if isinstance(other, ListedValue) else ListedValue(other)
        out = ListedValue(self.data + other.data, (self, other), '+')

        def _backward():
            self.grad += out.grad
            other.grad += out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        other = other if isinstance(other, ListedValue) else ListedValue(other)
        out = ListedValue(self.data * other.data, (self, other), '*')

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def backward(self):
        topo = []

        def build_topo(v):
            for child in v._prev:
                build_topo(child)
            topo.append(v)
        build_topo(self)
        self.grad = 1.0
        for v in reversed(topo):
            v._backward()


def f(x):
    h = x * x
    return h + h * 3.0


def run():
    root = repo_root(__file__)
    call = check_engine_call(trace_engine_call(f, (X,), engine=Value, relative_to=root))
    fixed = check_engine_call(trace_engine_call(f, (X,), engine=SortedValue, relative_to=root))
    listed = check_engine_call(trace_engine_call(f, (X,), engine=ListedValue, relative_to=root))
    finding = call.node_checks.first_failure
    order = next(c for c in call.checks if c.name == "both visit orders are reverse topological")
    h = next(r for r in call.alignment if r.label == "v1_mul")
    lines = [f"f(x) = h + 3h, h = x*x, at x = {fmt(X)}: breadth-first x.grad {fmt(call.gradient)}, "
             f"the gradient 8x = {fmt(8 * X)}",
             f"check: {finding.test} at {finding.node} ({finding.site})",
             f"micrograd's build_topo: {fmt(fixed.gradient)}, every check passes"]
    checks = {
        "breadth-first, h passes on 1 of its 4: x.grad is 2x * 1 = 6, not 8x = 24":
            call.gradient == 2 * X * 1.0 and fixed.gradient == 8 * X,
        "the lecture's node_to_grad[h] is [1, 3], sum 4; h's _backward read 1":
            h.partial_adjoints == (1.0, 3.0) and h.v_i_bar == 4.0 and h.popped == 1.0,
        "the per-node checker's first row is 'reverse topological' at h, the node made by h = x * x":
            (finding.test, finding.node) == ("reverse topological", "v1_mul")
            and finding.site == f"experiments/visit_order.py:{f.__code__.co_firstlineno + 1}",
        "it names the consumer whose contribution came after: 3h (v3_mul), contribution 3":
            "before its consumer v3_mul had added into it (v3_mul's contribution 3 came after)" in finding.reason,
        "the report's check 'both visit orders are reverse topological' fails with the same sentence":
            not order.passed and finding.reason in order.detail,
        "every local rule passes: the bug is not in one node":
            all(r.status == "pass" for r in call.node_checks.rows if r.test == "local"),
        "with micrograd's build_topo every check passes, gradient 8x": all(c.passed for c in fixed.checks),
        "a build_topo without visited lists h twice: its _backward runs twice, named, and x.grad is twice 8x":
            listed.node_checks.first_failure.reason.startswith("v1_mul's local backward ran twice in one pass")
            and listed.gradient == 2 * 8 * X,
    }
    report = "\n".join([render(call, title="Experiment: a visit order that is not reverse topological",
                               intro=INTRO).rstrip(), "", fixed_section(call, fixed), listed_section(listed),
                        questions(call, h)])
    return Outcome(lines, checks, report, call)


def fixed_section(call, fixed):
    def order(c):
        return ", ".join(c.recording.visit_order(c.recording.user_query()))

    return "\n".join([
        "## The same function with micrograd's `build_topo`", "",
        f"Breadth-first visits {order(call)}; `build_topo` reversed visits {order(fixed)}: `v1_mul` (h) only "
        "after both its consumers.", "",
        table(["check", "result", "detail"], [(c.name, "pass" if c.passed else "FAIL", c.detail)
                                            for c in fixed.checks]), ""])


def listed_section(listed):
    finding = listed.node_checks.first_failure
    return "\n".join([
        "## The same function with a `build_topo` that has no `visited` set", "",
        f"`ListedValue` lists a value once per use: `h` is in the order twice, after both consumers, and its "
        f"`_backward` runs twice, passing on its `.grad` each time (x.grad {fmt(listed.gradient)}). "
        f"The finding, at `{finding.node}`: {finding.reason}.", ""])


def questions(call, h):
    return f"""
## Self-test questions

1. **Breadth-first visits every value once, after the output. Why is that not enough?** A value must
   run after *every* consumer has added into it. `h` is reached from the sum at depth 1 and from `3h`
   at depth 2; breadth-first runs it at depth 1, with `.grad` {fmt(h.popped)}, where the lecture's
   `node_to_grad[h]` is `[{", ".join(fmt(p) for p in h.partial_adjoints)}]`, sum {fmt(h.v_i_bar)}.
2. **Where did `3h`'s contribution go?** Into `h.grad` after `h`'s `_backward` had run: `h.grad` ends at
   {fmt(h.running[-1])}, right, but nothing reads it again ({" -> ".join(fmt(v) for v in h.running)}).
3. **Would a `seen` set over a depth-first walk from the output do?** Only reversed after a post-order
   (each value appended after its children: micrograd's `build_topo`); a pre-order from the output has
   the same bug as breadth-first.
"""


if __name__ == "__main__":
    sys.exit(main(run, __file__))

"""A learner's misconception: a local derivative written from memory (tanh' = 1 - tanh).

A learner's `Value.tanh` passes on `(1 - t) * out.grad` where the derivative of tanh is `1 - t**2`.
Every other node is right, the order is right, every write adds: only one local rule is wrong, and
the gradient with it. adtrace's per-node checker takes each node's contribution against its `.grad`
times the op's derivative by central differences of the op, and names the `tanh` node, its argument
and the line of the user's function that made it (autograd's side of the same question:
`wrong_rule`).
"""

import math
import sys

from adtrace.checker.engine_rules import check_engine_call
from adtrace.compare.traced_engine_call import trace_engine_call
from adtrace.report import render
from adtrace.report.format import fmt
from adtrace.report.tables import table
from adtrace.tools.experiment import Outcome, main, repo_root

INTRO = """\
**What this shows.** A neuron `tanh(w*x + b)` through a learner's `Value` whose `tanh` backward
multiplies by `1 - t` instead of `1 - t**2` (t = tanh(n)). The gradient with respect to `w` is
wrong by the factor (1 - t) / (1 - t²) = 1 / (1 + t); every other node is right. The reference
engine (the lecture's algorithm over the recorded graph, with its own rule for `tanh`) first
differs at the `tanh`'s input, the node the wrong contribution went to; the per-node checker names
the `tanh` node itself, argument 0, at the line of `neuron` that made it, with what the
`_backward` wrote against `.grad` times tanh' by central differences. With `1 - t**2` every check
passes."""

W, X, B = 0.8, 0.5, -0.1


class Value:
    """Stores a single scalar value and its gradient (micrograd's shape)."""

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

    def tanh(self):
        t = (math.exp(2 * self.data) - 1) / (math.exp(2 * self.data) + 1)
        out = Value(t, (self,), 'tanh')

        def _backward():
            self.grad += (1 - t) * out.grad  # the bug: tanh' is 1 - t**2
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


class FixedValue(Value):
    """The same class with ``1 - t**2``."""

    def tanh(self):
        t = (math.exp(2 * self.data) - 1) / (math.exp(2 * self.data) + 1)
        out = FixedValue(t, (self,), 'tanh')

        def _backward():
            self.grad += (1 - t**2) * out.grad
        out._backward = _backward
        return out

    def __add__(self, other):
        other = other if isinstance(other, FixedValue) else FixedValue(other)
        out = FixedValue(self.data + other.data, (self, other), '+')

        def _backward():
            self.grad += out.grad
            other.grad += out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        other = other if isinstance(other, FixedValue) else FixedValue(other)
        out = FixedValue(self.data * other.data, (self, other), '*')

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out


def neuron(w):
    n = w * X + B
    return n.tanh()


def run():
    root = repo_root(__file__)
    call = check_engine_call(trace_engine_call(neuron, (W,), engine=Value, relative_to=root))
    fixed = check_engine_call(trace_engine_call(neuron, (W,), engine=FixedValue, relative_to=root))
    wrong = call.node_checks.first_failure
    t = math.tanh(W * X + B)
    right = X * (1 - t * t)
    divergent = next(r for r in call.alignment if r.status == "differs")
    lines = [f"neuron tanh(w*{fmt(X)} + {fmt(B)}) at w = {fmt(W)}: engine {fmt(call.gradient)}, "
             f"x (1 - t^2) = {fmt(right)}, ratio {fmt(call.gradient / right)} = 1/(1 + t)",
             f"per-node checker: {wrong.node} argument {wrong.argnum} at {wrong.site}: "
             f"analytic {fmt(wrong.analytic)}, numeric {fmt(wrong.numeric)}",
             f"with 1 - t**2: {fmt(fixed.gradient)}, every check passes"]
    checks = {
        "the engine's gradient is x (1 - t), the closed form's x (1 - t^2) times 1/(1 + t)":
            math.isclose(call.gradient, X * (1 - t), rel_tol=1e-12)
            and math.isclose(call.gradient / right, 1 / (1 + t), rel_tol=1e-12),
        "the per-node checker names the tanh node, argument 0, at the line of neuron that made it":
            (call.recording.nodes[wrong.node].primitive, wrong.argnum, wrong.test) == ("tanh", 0, "local")
            and wrong.site == f"experiments/wrong_local_derivative.py:{neuron.__code__.co_firstlineno + 2}",
        "its analytic (what _backward wrote) over its numeric (.grad x tanh' by differences) is 1/(1 + t)":
            math.isclose(wrong.analytic / wrong.numeric, 1 / (1 + t), rel_tol=1e-6),
        "it is the only failing node: every other local rule passes":
            [r.node for r in call.node_checks.rows if r.status == "FAIL"] == [wrong.node],
        "the reference engine first differs at the tanh's input, where the wrong contribution went":
            divergent.label == call.recording.nodes[wrong.node].parents[0],
        "no bug of the whole pass is named (the order and the writes are right)": call.pass_findings == [],
        "with 1 - t**2 every check passes, gradient x (1 - t^2)":
            math.isclose(fixed.gradient, right, rel_tol=1e-12) and all(c.passed for c in fixed.checks),
    }
    report = "\n".join([render(call, title="Experiment: a wrong local derivative in a learner's Value (tanh)",
                               intro=INTRO).rstrip(), "", fixed_section(fixed), questions(call, wrong, t)])
    return Outcome(lines, checks, report, call)


def fixed_section(fixed):
    return "\n".join([
        "## The same class with `1 - t**2`", "",
        table(["check", "result", "detail"], [(c.name, "pass" if c.passed else "FAIL", c.detail)
                                            for c in fixed.checks]), ""])


def questions(call, wrong, t):
    n = call.recording.nodes[wrong.node].parents[0]
    row = next(r for r in call.alignment if r.label == n)
    return f"""
## Self-test questions

1. **Why does the reference engine not name the `tanh` node itself?** A wrong rule corrupts what a node
   *sends*: `{wrong.node}` read the right `.grad`, 1, and sent {fmt(wrong.analytic)} into `{n}`, where the
   lecture's partial adjoint is {fmt(row.v_i_bar)} (1 - t²); the totals first part at `{n}`.
2. **How does the checker know the right derivative without a table of them?** It differentiates the
   op's forward (`tanh`) by central differences at the recorded input, independently of any rule:
   `.grad` x tanh'(n) = {fmt(wrong.numeric)}, against the {fmt(wrong.analytic)} the `_backward` wrote.
3. **Would a test at n = 0 have caught it?** No: there t = 0 and `1 - t` = `1 - t**2` = 1. Here
   t = {fmt(t)}, and the two differ by the factor 1 + t.
"""


if __name__ == "__main__":
    sys.exit(main(run, __file__))

"""A learner's misconception: gradients not zeroed between two backward passes.

micrograd's `.grad` is a running sum that lives on the value: `backward()` adds into it and never
clears it. A training loop that computes a second loss over the same weight without setting every
`.grad` back to 0 starts the second pass from the first pass's gradient: the lecture's
`node_to_grad` starts empty in every pass, the learner's does not. Every local rule is right, so
only a check of the whole pass can see it: adtrace names the value whose `.grad` was not 0 when the
pass began, what was there, and the pass that left it.
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
**What this shows.** A learner's `Value` class, written as the course video writes it, is right in
every local rule. A training loop takes two steps over the same weight `w` and forgets
`w.grad = 0` between them: the first loss `3w` leaves `w.grad = 3`, and the second loss `0.7 w*w`
adds its `0.7 * 2w` onto it. The gradient of the second loss at 2 is 2.8; the engine says 5.8.
Per node, every contribution is right (the per-node local rules pass); what is wrong is where the
pass started. adtrace's check "every .grad was 0 when the pass began" names `w`'s leaf, the 3
found there and the pass that left it; `check` exits 1 with the same sentence. With `w.grad = 0`
between the steps everything passes."""

W = 2.0


class Value:
    """Stores a single scalar value and its gradient (micrograd's shape)."""

    def __init__(self, data, _children=(), _op=''):
        self.data = data
        self.grad = 0.0
        self._backward = lambda: None
        self._prev = tuple(_children)  # (a set's order changes from run to run; the report must not)
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


def second_step(w):
    """Two training steps over ``w``; the first step's gradient is never zeroed."""
    first_loss = w * 3.0
    first_loss.backward()
    return w * w * 0.7


def second_step_zeroed(w):
    """The same two steps, with ``w.grad = 0`` before the second."""
    first_loss = w * 3.0
    first_loss.backward()
    w.grad = 0.0
    return w * w * 0.7


def run():
    root = repo_root(__file__)
    call = check_engine_call(trace_engine_call(second_step, (W,), engine=Value, relative_to=root))
    fixed = check_engine_call(trace_engine_call(second_step_zeroed, (W,), engine=Value, relative_to=root))
    finding = call.node_checks.first_failure
    zero = next(c for c in call.checks if c.name == "every .grad was 0 when the pass began")
    expected = 0.7 * 2 * W  # d(0.7 w^2)/dw
    lines = [f"second loss 0.7*w*w at w = {fmt(W)}: engine's w.grad {fmt(call.gradient)}, the loss's gradient "
             f"{fmt(expected)} (+ 3 left by the first loss)",
             f"check: {finding.test} at {finding.node} ({finding.site})",
             f"with w.grad = 0 between the steps: {fmt(fixed.gradient)}, every check passes"]
    checks = {
        "the engine's gradient is the second loss's (0.7 * 2w) plus the first's (3)":
            math.isclose(call.gradient, expected + 3.0, rel_tol=1e-15),
        "the lecture's node_to_grad (the reference engine over the same graph) gives 0.7 * 2w":
            _row(call, "v0_leaf").v_i_bar == expected,
        "the per-node checker's first row is the finding 'zero at start' at w's leaf":
            (finding.test, finding.node) == ("zero at start", "v0_leaf"),
        "it says what was there and which pass left it":
            finding.reason.startswith("v0_leaf.grad was 3 when pass 2 began, not 0: the gradient pass 1"),
        "the report's check 'every .grad was 0 when the pass began' fails with the same sentence":
            not zero.passed and zero.detail == finding.reason,
        "every local rule passes: the bug is not in one node":
            all(r.status == "pass" for r in call.node_checks.rows if r.test == "local"),
        "with w.grad = 0 between the steps every check passes, gradient 0.7 * 2w":
            fixed.gradient == expected and all(c.passed for c in fixed.checks),
    }
    report = "\n".join([render(call, title="Experiment: gradients not zeroed between two passes", intro=INTRO)
                        .rstrip(), "", fixed_section(fixed), questions(call, finding, expected)])
    return Outcome(lines, checks, report, call)


def _row(call, label):
    return next(r for r in call.alignment if r.label == label)


def fixed_section(fixed):
    return "\n".join([
        "## The same loop with `w.grad = 0` between the steps", "",
        "`second_step_zeroed` sets `w.grad = 0.0` after the first `backward()` (a network's `zero_grad()`: "
        "every parameter's `.grad`); the second pass starts from 0, as the lecture's does:", "",
        table(["check", "result", "detail"], [(c.name, "pass" if c.passed else "FAIL", c.detail)
                                            for c in fixed.checks]), ""])


def questions(call, finding, expected):
    leaf = _row(call, finding.node)
    return f"""
## Self-test questions

1. **Every `_backward` adds the right contribution. Why is `w.grad` wrong?** Because `+=` adds onto
   what is there, and the first pass left {fmt(call.gradient - expected)} there: the second pass's
   contributions `{", ".join(fmt(p) for p in leaf.partial_adjoints)}` (sum {fmt(leaf.v_i_bar)}, the lecture's
   `node_to_grad[{leaf.label}]`) went onto it: {" -> ".join(fmt(v) for v in leaf.running)}.
2. **Why does the lecture's algorithm not have this bug?** Its `node_to_grad` is a fresh dictionary
   made by each call of the algorithm; micrograd keeps the running sums on the values, which outlive the
   pass. Zeroing every `.grad` before `backward()` makes them fresh again.
3. **How does adtrace know the 3 came from an earlier pass, not from this one?** It recorded pass 1
   writing it: the first write of pass 2 into `{finding.node}.grad` found a value no write of pass 2 had
   made, and the last write into it before pass 2 began was pass 1's (`backward()` from the first loss).
"""


if __name__ == "__main__":
    sys.exit(main(run, __file__))

"""A learner's misconception: `backward()` is idempotent.

A learner calls `loss.backward()` to print the gradient, then the training code calls it again on
the same loss. micrograd's `backward()` seeds `self.grad = 1` and adds every contribution into the
values' `.grad` once more: the output's own `.grad` is reset by the seed, every other value adds this
pass's share onto the first's, and passes on its doubled sum. Every local rule is right; adtrace names the second
`backward()` over the same graph, the pass before it and a value that already held its gradient.
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
**What this shows.** A learner's `Value` class, right in every local rule, and a loss
`0.7 * x * x` whose gradient at 2 is 2.8. The function calls `loss.backward()` itself to look at
the gradient, then returns the loss, on which `backward()` runs again (as a training loop would).
The second pass seeds the loss's `.grad = 1` afresh but adds every other contribution onto the
first pass's: `x*x` holds 0.7 + 0.7 and passes on twice its share, onto the 2.8 already in `x.grad`,
which ends at 8.4, three times the gradient. adtrace's check "backward() ran once over
the graph" fails and names the loss (the end both passes started from), the earlier pass and a
value that already held its gradient; `check` exits 1 with the same sentence. A loss whose
`backward()` runs once passes everything."""

X = 2.0


class Value:
    """Stores a single scalar value and its gradient (micrograd's shape)."""

    def __init__(self, data, _children=(), _op=''):
        self.data = data
        self.grad = 0.0
        self._backward = lambda: None
        self._prev = tuple(_children)  # (a set's order changes from run to run; the report must not)
        self._op = _op

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


def look_then_train(x):
    """The gradient looked at (``backward()``), then the same loss handed on to be trained on."""
    loss = x * x * 0.7
    loss.backward()  # to look at x.grad
    return loss


def train(x):
    """The same loss; ``backward()`` runs once, on the returned value."""
    return x * x * 0.7


def run():
    root = repo_root(__file__)
    call = check_engine_call(trace_engine_call(look_then_train, (X,), engine=Value, relative_to=root))
    once = check_engine_call(trace_engine_call(train, (X,), engine=Value, relative_to=root))
    finding = call.node_checks.first_failure
    twice = next(c for c in call.checks if c.name == "backward() ran once over the graph")
    expected = 0.7 * 2 * X
    leaf = next(r for r in call.alignment if r.label == "v0_leaf")
    lines = [f"loss 0.7*x*x at x = {fmt(X)}: x.grad {fmt(call.gradient)} after two backward(), the gradient "
             f"{fmt(expected)}",
             f"check: {finding.test} at {finding.node} ({finding.site})",
             f"backward() once: {fmt(once.gradient)}, every check passes"]
    checks = {
        "x.grad is the first pass's gradient plus twice it (x*x passes on 0.7 + 0.7)":
            math.isclose(call.gradient, expected + 2 * expected, rel_tol=1e-15)
            and [fmt(v) for v in leaf.running] == [fmt(v) for v in (expected, 2 * expected, 3 * expected)],
        "the lecture's node_to_grad over the same graph gives 0.7 * 2x, once": leaf.v_i_bar == expected,
        "the per-node checker's first row is the finding 'one pass' at the loss both passes started from":
            (finding.test, finding.node) == ("one pass", call.recording.nodes[finding.node].label)
            and finding.reason.startswith(f"pass 2 seeds {finding.node} again after pass 1 over it"),
        "it is the node backward() ran on: the last value made, the loss":
            finding.node == list(call.recording.nodes)[-1],
        "the report's check 'backward() ran once over the graph' fails with the same sentence":
            not twice.passed and twice.detail == finding.reason,
        "every local rule passes: the bug is not in one node":
            all(r.status == "pass" for r in call.node_checks.rows if r.test == "local"),
        "the 'zero at start' finding is not named besides (one cause, one finding)":
            [f.test for f in call.pass_findings] == ["one pass"],
        "backward() once: gradient 0.7 * 2x and every check passes":
            once.gradient == expected and all(c.passed for c in once.checks),
    }
    report = "\n".join([render(call, title="Experiment: backward() run twice over the same graph", intro=INTRO)
                        .rstrip(), "", once_section(once), questions(call, finding, leaf)])
    return Outcome(lines, checks, report, call)


def once_section(once):
    return "\n".join([
        "## The same loss, `backward()` once", "",
        "`train` returns the loss without calling `backward()`; the one pass the check runs starts from "
        "zeros:", "",
        table(["check", "result", "detail"], [(c.name, "pass" if c.passed else "FAIL", c.detail)
                                            for c in once.checks]), ""])


def questions(call, finding, leaf):
    end = next(r for r in call.alignment if r.label == finding.node)
    return f"""
## Self-test questions

1. **Why is the loss's own `.grad` right ({fmt(end.popped)}) and `x.grad` not?** `backward()` *assigns*
   the seed, `self.grad = 1.0`, and *adds* every other contribution (`+=`): the seed undoes the first
   pass at the loss only. `{leaf.label}.grad` went {" -> ".join(fmt(v) for v in leaf.running)}: the first
   pass's {fmt(leaf.running[0])}, then two contributions of {fmt(leaf.running[1] - leaf.running[0])} where the
   lecture's `node_to_grad[{leaf.label}]` is `[{", ".join(fmt(p) for p in leaf.partial_adjoints)}]`: `x*x`
   held two passes' `.grad` when its `_backward` ran.
2. **Is this the same bug as gradients not zeroed?** The same mechanism (a running sum that outlives
   the pass), another cause: here the second pass walks the very graph the first walked, so adtrace
   names `backward()` run twice ("pass 2 seeds {finding.node} again after pass 1 over it") rather than a
   stale value; `grad_not_zeroed` is a second loss over the same weight.
3. **What would make `backward()` safe to call twice?** Zeroing every value of the graph before the
   seed (a `zero_grad()` over `topo`), as the lecture's `node_to_grad = {{out: [1]}}` is new in every call.
"""


if __name__ == "__main__":
    sys.exit(main(run, __file__))

"""A learner's misconception: the graph drawn before `backward()` shows the gradients.

In the course video the graph is drawn with `draw_dot(o)`, each value's box showing its `data` and
its `grad`. Drawn before `o.backward()`, every `grad` is 0: not a gradient of 0, but what `__init__`
set, since no pass has computed one. The same holds after `backward()` for a value the pass did not
reach (made after it). adtrace's report and page of such a recording say so in their first lines.
"""

import sys

import adtrace
from adtrace.report import render_recording
from adtrace.report.format import fmt
from adtrace.report.tables import table
from adtrace.tools.experiment import Outcome, main, repo_root
from adtrace.view import page_data

INTRO = """\
**What this shows.** A neuron `n = x1*w1 + x2*w2 + b` of a learner's `Value` (micrograd's shape),
drawn before `n.backward()` the way `draw_dot(n)` draws it: each value with its `data` and `grad`.
Every `grad` shown is 0, yet `n`'s gradient with respect to `x1` is `w1` = -3. Nothing is wrong
with the class: no backward pass has run, and the `grad` is what `__init__` set. This report is of
that recording; its first lines (and the page's note) say that no gradient was computed. Below:
the same neuron drawn after `backward()`, and a value made after the pass, whose `grad` was never
computed either."""

X1, X2, W1, W2, B = 2.0, 0.0, -3.0, 1.0, 6.8813735870195432


class Value:
    """Stores a single scalar value and its gradient (micrograd's shape)."""

    def __init__(self, data, _children=(), _op='', label=''):
        self.data = data
        self.grad = 0.0
        self._backward = lambda: None
        self._prev = tuple(_children)
        self._op = _op
        self.label = label

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


def draw(root):
    """``draw_dot``'s boxes as text: ``(label, data, grad)`` of every value of ``root``'s graph."""
    boxes, seen = [], set()

    def walk(v):
        if v not in seen:
            seen.add(v)
            for child in v._prev:
                walk(child)
            boxes.append((v.label or v._op, v.data, v.grad))
    walk(root)
    return boxes


def neuron():
    x1, x2 = Value(X1, label='x1'), Value(X2, label='x2')
    w1, w2, b = Value(W1, label='w1'), Value(W2, label='w2'), Value(B, label='b')
    return x1 * w1 + x2 * w2 + b


def run():
    root = repo_root(__file__)
    with adtrace.record(engine=Value, sites=True, relative_to=root) as before:
        n = neuron()
        drawn_before = draw(n)
    with adtrace.record(engine=Value, sites=True, relative_to=root) as after:
        n = neuron()
        n.backward()
        drawn_after = draw(n)
        later = n * n  # made after the pass: no pass computed its grad
    leaves = {label: grad for label, _, grad in drawn_after if label in ("x1", "x2", "w1", "w2", "b")}
    report = render_recording(before, title="Experiment: a graph drawn before backward()", intro=INTRO)
    after_report = render_recording(after)
    said = report.split("\n## ")[0]
    note = page_data(before)["notes"]
    lines = [f"drawn before backward(): {len(drawn_before)} values, every grad {fmt(drawn_before[0][2])}",
             f"drawn after: x1.grad {fmt(leaves['x1'])} (w1), w1.grad {fmt(leaves['w1'])} (x1), b.grad "
             f"{fmt(leaves['b'])}",
             f"page: {note[0][:60]}..."]
    checks = {
        "every grad drawn before backward() is 0": all(grad == 0 for _, _, grad in drawn_before),
        "after backward() each leaf's grad is the closed form (x1: w1, w1: x1, x2: w2, w2: x2, b: 1)":
            leaves == {"x1": W1, "w1": X1, "x2": W2, "w2": X2, "b": 1.0},
        "the report's first lines say no backward pass ran and no value's gradient was computed":
            "**No backward pass ran: no value's gradient was computed.**" in said
            and f"of each of the {len(before.nodes)} values is what `__init__` set (0)" in said,
        "the page says it in one note, the same sentence":
            len(note) == 1 and note[0].startswith("No backward pass ran: no value's gradient was computed."),
        "after backward(), the value made after the pass is the one named never computed":
            f"**1 of {len(after.nodes)} values' gradients were never computed:**" in after_report
            and f"`{list(after.nodes)[-1]}`" in after_report.split("\n## ")[0] and later.grad == 0,
        "the recording before backward() has no pass; the one after has one": (len(before.queries),
                                                                               len(after.queries)) == (0, 1),
    }
    report = "\n".join([report.rstrip(), "", drawn_section(drawn_before, drawn_after),
                        after_section(after_report), questions(leaves)])
    return Outcome(lines, checks, report, before)


def drawn_section(drawn_before, drawn_after):
    rows = [(label, fmt(data), fmt(grad), fmt(grad_after)) for (label, data, grad), (_, _, grad_after)
            in zip(drawn_before, drawn_after)]
    return "\n".join([
        "## What `draw_dot` shows, before and after `backward()`", "",
        "Each value of the neuron's graph as `draw_dot`'s boxes show it (`data`, `grad`), in the order the "
        "drawing walks them:", "",
        table(["value", "data", "grad before backward()", "grad after backward()"], rows), ""])


def after_section(after_report):
    first = after_report.split("\n## ")[0].split("\n\n")[-1]
    return "\n".join([
        "## A value made after the pass", "",
        "The same neuron, `n.backward()`, then `n * n`: its report's first lines say which value no pass "
        "reached:", "", "> " + first, ""])


def questions(leaves):
    return f"""
## Self-test questions

1. **`x1.grad` is 0 in the drawing. Does `n` not depend on `x1`?** It does: d n / d x1 = w1 =
   {fmt(leaves['x1'])}. The 0 is `__init__`'s `self.grad = 0.0`, shown before any pass computed a gradient.
2. **Why is `n.grad` 1 after `backward()` but 0 before?** `backward()` seeds it (`self.grad = 1.0`, the
   lecture's `node_to_grad = {{out: [1]}}`); before, nothing had.
3. **After `backward()`, is every `.grad` a gradient?** Only of values the pass reached: `n * n`, made after
   it, still holds 0, and adtrace names it.
"""


if __name__ == "__main__":
    sys.exit(main(run, __file__))

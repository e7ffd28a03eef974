"""A second engine: the seed article's x*x at 3 through micrograd and through autograd, and the classic bug.

micrograd (the engine of the course video) keeps each gradient on its value: its `*` closure
writes `x.grad += 3.0` twice, 0 -> 3 -> 6. autograd keeps a running entry per node and merges the
same two contributions with `add_outgrads`: None -> (3, False) -> (6, True). Both are the lecture's
`node_to_grad[x] = [3, 3]`, summed. A learner's class whose `__add__` backward assigns
(`self.grad = ...`) instead of adding loses one of `a + a`'s two contributions: adtrace names the
node, its argument and the line of `f` that made it.
"""

import sys

from autograd import grad
from micrograd.engine import Value as MicroValue

from adtrace.checker.engine_rules import check_engine_call
from adtrace.compare.traced_engine_call import trace_engine_call
from adtrace.compare.traced_call import trace_call
from adtrace.report import render
from adtrace.report.format import fmt
from adtrace.report.tables import table
from adtrace.tools.experiment import Outcome, main, repo_root

INTRO = """\
**What this shows.** The same `x*x` at 3 as the seed article, through micrograd's `Value` and
through autograd. Both visit the product, then `x`, and hand `x` two contributions of 3. micrograd
adds each into `x.grad` itself, in the `*` closure (`self.grad += other.data * out.grad`, then
`other.grad += ...`): `0 -> 3 -> 6`, and the gradient stays on the value. autograd keeps
`outgrads[x]` and merges with `add_outgrads`: `None -> (3,False) -> (6,True)`, popped at the visit
and returned. Below: the two engines side by side, micrograd's report (its own `backward()`
statements, its `.grad` after each), and the classic bug of a learner's engine caught."""

X = 3.0


class BuggyValue:
    """A learner's Value: ``__add__``'s backward assigns (``=``) where it must add (``+=``)."""

    def __init__(self, data, _children=(), _op=''):
        self.data = data
        self.grad = 0.0
        self._backward = lambda: None
        self._prev = set(_children)
        self._op = _op

    def __add__(self, other):
        other = other if isinstance(other, BuggyValue) else BuggyValue(other)
        out = BuggyValue(self.data + other.data, (self, other), '+')

        def _backward():
            self.grad = 1.0 * out.grad
            other.grad = 1.0 * out.grad
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


class FixedValue(BuggyValue):
    """The same class with ``+=``."""

    def __add__(self, other):
        other = other if isinstance(other, FixedValue) else FixedValue(other)
        out = FixedValue(self.data + other.data, (self, other), '+')

        def _backward():
            self.grad += 1.0 * out.grad
            other.grad += 1.0 * out.grad
        out._backward = _backward
        return out


def square(x):
    return x * x


def twice(a):
    return a + a


def run():
    root = repo_root(__file__)
    micro = check_engine_call(trace_engine_call(square, (X,), engine="micrograd", relative_to=root))
    auto = trace_call(square, (X,), relative_to=root)
    buggy = check_engine_call(trace_engine_call(twice, (X,), engine=BuggyValue, relative_to=root))
    fixed = check_engine_call(trace_engine_call(twice, (X,), engine=FixedValue, relative_to=root))
    writes = micro.recording.of_kind("add_outgrads")
    adds = auto.recording.of_kind("add_outgrads")
    lost = buggy.node_checks.first_failure
    writes_check = next(c for c in buggy.checks if c.name == "every write into .grad adds")
    x = MicroValue(X)
    square(x).backward()
    added = ", += ".join(fmt(w.contribution) for w in writes)
    lines = [f"micrograd: x.grad {' -> '.join(fmt(w.previous[0]) for w in writes[:1])} -> "
             f"{' -> '.join(fmt(w.result[0]) for w in writes)} (+= {added})",
             f"autograd:  add_outgrads {' -> '.join(fmt(a.result) for a in adds)}",
             f"classic bug: {writes_check.detail}",
             f"per-node checker: {lost.node} argument {lost.argnum} at {lost.site}"]
    checks = {
        "micrograd: x.grad goes 0 -> 3 -> 6 by two += of exactly 3":
            [(w.previous[0], w.contribution, w.result[0], w.replaced) for w in writes]
            == [(0, X, X, False), (X, X, 2 * X, False)],
        "autograd: add_outgrads returns (3, False) then (6, True)":
            [a.result for a in adds] == [(X, False), (2 * X, True)],
        "both engines hand x the same contributions, in the same order":
            [w.contribution for w in writes] == [a.contribution for a in adds] == [X, X],
        "both visit the product, then x":
            [micro.recording.nodes[n].primitive for n in micro.recording.visit_order(1)] == ["*", ""]
            and [auto.recording.nodes[n].kind for n in auto.recording.visit_order(1)] == ["node", "root"],
        "the recorded gradient is micrograd's own (6) and autograd's": micro.gradient == x.grad == grad(square)(X) == 6,
        "micrograd and autograd pass every report check": all(c.passed for c in micro.checks + auto.checks),
        "the bug: the second write replaced 1 by 1 where the lecture's list is [1, 1], sum 2":
            writes_check.detail.endswith("replaced 1 by 1; the lecture's node_to_grad[v0_leaf] is [1, 1], sum 2"),
        "the bug: the engine's gradient is 1, the lecture's 2, and central differences disagree with 1":
            buggy.gradient == 1.0 and buggy.alignment[-1].v_i_bar == 2.0 and not _passed(buggy, FINITE_DIFFERENCES),
        "the bug: the per-node checker names v1_add, argument 1, and the line of twice that made it":
            (lost.node, lost.argnum, lost.site) == ("v1_add", 1, f"experiments/micrograd_engine.py:{_line(twice, 1)}"),
        "the bug: the first divergent node is the leaf that lost the contribution":
            [r.label for r in buggy.alignment if r.status == "differs"] == ["v0_leaf"],
        "the same class with += passes everything": fixed.gradient == 2.0 and all(c.passed for c in fixed.checks),
    }
    report = "\n".join([
        render(micro, title="Experiment: a second engine, micrograd (x*x at 3)", intro=INTRO).rstrip(),
        "", side_by_side(micro, auto), "", classic_bug(buggy, fixed), questions(micro, auto, buggy, x)])
    return Outcome(lines, checks, report, micro)


FINITE_DIFFERENCES = "central finite differences"


def _passed(call, name):
    return next(c.passed for c in call.checks if c.name == name)


def _line(function, offset):
    """The line ``offset`` lines into ``function``'s source."""
    return function.__code__.co_firstlineno + offset


def side_by_side(micro, auto):
    rows = []
    for w, a in zip(micro.recording.of_kind("add_outgrads"), auto.recording.of_kind("add_outgrads")):
        rows.append((f"{w.node} -> {w.parent} (argument {w.argnum})", f"{fmt(w.previous[0])} += {fmt(w.contribution)} "
                     f"-> {fmt(w.result[0])}", f"add_outgrads({fmt(a.previous)}, {fmt(a.contribution)}) -> "
                     f"{fmt(a.result)}"))
    return "\n".join([
        "## micrograd and autograd side by side", "",
        "The two contributions to `x`, as each engine accumulates them. micrograd writes into the value's "
        "`.grad` (a new float each time: never in place); autograd's `add_outgrads` returns the entry "
        "`(value, mutable)`: the first contribution as it is, the second merged into a new sum it may "
        "write into later (`True`).", "",
        table(["contribution", "micrograd: x.grad", "autograd: outgrads[x]"], rows)])


def classic_bug(buggy, fixed):
    lost = buggy.node_checks.first_failure
    return "\n".join([
        "## The classic bug: `self.grad = ...` in `__add__`'s backward", "",
        "`BuggyValue` (in this experiment's file) assigns where it must add. `twice(a) = a + a` at 3 hands "
        "`a` two contributions of 1; the second write replaces the first. The report's checks fail, and say "
        "where:", "",
        table(["check", "result", "detail"], [(c.name, "pass" if c.passed else "FAIL", c.detail)
                                            for c in buggy.checks]), "",
        f"The per-node checker names `{lost.node}` (`{lost.primitive}`) argument {lost.argnum}, made at "
        f"{lost.site}: {lost.reason}. With `+=` (`FixedValue`) every check passes: gradient "
        f"{fmt(fixed.gradient)}.", "",
        "### The lecture against the buggy engine", "",
        table(["node", "op", "node_to_grad[i] (lecture)", "sum", ".grad (engine)", "read", "status"],
              [(r.label, r.primitive or "(leaf)", "[" + ", ".join(fmt(p) for p in r.partial_adjoints) + "]",
                fmt(r.v_i_bar), " -> ".join(fmt(v) for v in r.running), fmt(r.popped), r.status)
               for r in buggy.alignment])])


def questions(micro, auto, buggy, x):
    writes = micro.recording.of_kind("add_outgrads")
    leaf = micro.recording.nodes[writes[0].parent]
    lost = next(e for e in buggy.recording.of_kind("add_outgrads") if e.replaced and e.previous[0])
    return f"""
## Self-test questions

1. **micrograd has no `outgrads`: where is each node's running sum?** On the value itself: `{leaf.label}.grad`
   went {" -> ".join([fmt(writes[0].previous[0])] + [fmt(w.result[0]) for w in writes])}, one `+=` per
   contribution, and is still {fmt(x.grad)} after `backward()` returned. autograd's entry for the same node was
   {" -> ".join(fmt(a.result) for a in auto.recording.of_kind("add_outgrads"))} and was popped at its visit.
2. **`_prev` of `x*x` is a set of one value. Where do the two contributions come from?** From the two
   statements of the `*` closure, `self.grad += ...` and `other.grad += ...`, both into `x`: the recorded writes
   are argument {writes[0].argnum} and argument {writes[1].argnum} of `{writes[0].node}`, whose children in
   argument order are `{", ".join(micro.recording.nodes[writes[0].node].parents)}` (adtrace reads them from
   `_children`; the set keeps neither their order nor the duplicate).
3. **Why does `self.grad = ...` pass `a + b` but fail `a + a`?** Assigning over a `.grad` of 0 is the same as
   adding to it; only a value that receives a second contribution loses the first. In `a + a` the second write
   replaced {fmt(lost.previous[0])} by {fmt(lost.result[0])}: the lecture's list for `{lost.parent}` is
   `[{", ".join(fmt(p) for p in buggy.alignment[-1].partial_adjoints)}]`, sum {fmt(buggy.alignment[-1].v_i_bar)}.
"""


if __name__ == "__main__":
    sys.exit(main(run, __file__))

"""Multiple paths: in z = x*x the two input positions of multiply both point at the root.

autograd's backward_pass hands the root two contributions, 3 and 3, and add_outgrads merges them:
None + 3 -> (3, False), then vs.add(3, 3) -> (6, True). Recorded through adtrace on
grad(lambda x: x*x)(3.0); every claim is checked against values computed independently.
"""

import sys

from adtrace.tools.experiment import Outcome, main, repo_root
from adtrace.report import render
from adtrace.report.format import fmt
from adtrace.compare.traced_call import trace_call

INTRO = """\
**What this shows.** In `z = x*x` both input positions of `multiply` point at the same root node.
autograd's `backward_pass` hands the root two contributions, `3` and `3`, and `add_outgrads` merges
them: `None` + 3 gives `(3,False)`, then `vs.add(3, 3)` gives `(6,True)`. The lecture keeps the list
`[3, 3]` and sums it when the root is visited. Same chain rule, different data structure."""


def square(x):
    return x * x


def run():
    x = 3.0
    call = trace_call(square, (x,), relative_to=repo_root(__file__))
    rec = call.recording
    calls = rec.of_kind("add_outgrads")
    contributions = [float(c.contribution) for c in calls]
    multiply = next(e.label for e in rec.of_kind("node") if e.primitive == "multiply")
    root = next(e.label for e in rec.of_kind("root"))
    lines = [f"call {i}: previous={fmt(c.previous)}, contribution={fmt(c.contribution)}, accumulated={fmt(c.result)}"
             for i, c in enumerate(calls, 1)]
    lines.append(f"gradient contributions: {' + '.join(fmt(c) for c in contributions)} = {fmt(sum(contributions))}")
    checks = {
        "gradient is 2x = 6": float(call.gradient) == 2 * x,
        "contributions are exactly [x, x] = [3.0, 3.0]": contributions == [x, x],
        "both contributions go to the root": all(c.parent == root for c in calls),
        "flags follow add_outgrads: the first dense contribution stored as is (False), every merge True":
            [c.result[1] for c in calls] == [c.previous is not None for c in calls],
        "visit order: multiply node, then root": rec.visit_order(1) == [multiply, root],
        "the lecture's list for the root is [3, 3]": call.reference.steps[-1].partial_adjoints == (x, x),
        "every report check passes": all(c.passed for c in call.checks),
    }
    report = render(call, title="Experiment: multiple paths (z = x*x at 3)", intro=INTRO) + questions(call)
    return Outcome(lines, checks, report, call)


def questions(call):
    rec = call.recording
    root_step = call.reference.steps[-1]
    adds = rec.of_kind("add_outgrads")
    return f"""
## Self-test questions

1. **Why does `VJPNode` not need the full Jacobian?** Its `vjp` is a closure `g -> (g*x, g*x)`: for
   the seed `{fmt(rec.query_events(1)[0].seed)}` it returned `{fmt(rec.of_kind("vjp")[0].ingrads)}`, one
   cotangent per input position, without ever forming `[x, x]` as a matrix.
2. **When could a node be consumed too early without a reverse topological order?** If the root
   were visited before `{rec.visit_order(1)[0]}`, `outgrads.pop` would find no entry for it (a
   `KeyError`: its first contribution, `{fmt(adds[0].contribution)}`, arrives only during that visit);
   visited between the two contributions, it would pop `{fmt(adds[0].result)}` instead of the total
   `{fmt(adds[-1].result)}`. toposort yields it only after its child count reached zero.
3. **Why is `outgrads` keyed by node, not by variable name?** Both contributions went to the one
   node `{adds[0].parent}` (arguments {", ".join(str(a.argnum) for a in adds)}): positions, not names,
   decide where a cotangent goes. The lecture's list for it is `{fmt(list(root_step.partial_adjoints))}`,
   summed to `{fmt(root_step.v_i_bar)}`.
"""


if __name__ == "__main__":
    sys.exit(main(run, __file__))

"""Higher order: grad(grad(f)) for f(x) = x*x*x at x = 2.

The inner backward pass runs while the outer trace records. Its cotangents are boxes of the outer
trace (recorded as `Boxed(value, level=0)`), and its accumulation into the inner root is itself a
pair of primitives: the second contribution goes through `VSpace.add`, the third through
`VSpace.mut_add`, and both become nodes of the outer graph. The outer backward pass (level 0)
visits them with identity VJPs: that is why accumulation is differentiable. Every claim is checked
against the closed form 6x, finite differences of the first derivative, and the reference engine.
"""

import sys

from autograd import grad

import adtrace.reference as ref
from adtrace.tools.experiment import Outcome, main, repo_root
from adtrace.report import render
from adtrace.report.format import fmt
from adtrace.report.tables import table
from adtrace.compare.traced_call import trace_call
from adtrace.recording.values import Boxed, plain

INTRO = """\
**What this shows.** Under `grad(grad(f))` the inner `backward_pass` (level 1) runs while the
outer trace (level 0) records, so its cotangents are boxes of the outer trace, recorded as
`Box[level 0](...)`. For `f(x) = x*x*x` the inner root receives three contributions: the first is
stored, the second is merged by `VSpace.add`, the third by `VSpace.mut_add`, and both calls are
primitives, so they become nodes of the outer graph. The outer backward pass then visits those
nodes like any other, with identity VJPs (`g -> (g, g)`): accumulation is itself differentiable.
The generic sections trace `first_derivative = grad(f)` with the outer `make_vjp`; the reference
engine numbers only the nodes of its own (outer) capture, so its labels are matched to the
recorder's level-0 nodes by creation order before the per-node comparison."""

X = 2.0


def f(x):
    return x * x * x


def first_derivative(x):
    return grad(f)(x)


ACCUMULATION = ("VSpace.add", "VSpace.mut_add")


def open_traces(rec, index):
    """How many traces were open (root created, trace not yet returned) at event ``index``."""
    returned = {e.root: i for i, e in enumerate(rec.events) if e.kind == "trace"}
    return sum(1 for i, e in enumerate(rec.events[:index]) if e.kind == "root" and returned[e.label] > index)


def run():
    call = trace_call(first_derivative, (X,), capture="full", relative_to=repo_root(__file__))
    rec = call.recording
    inner, outer = rec.queries
    starts = {e.query: (i, e) for i, e in enumerate(rec.events) if e.kind == "backward_start"}
    accumulators = [e for e in rec.of_kind("node") if e.primitive in ACCUMULATION and e.query == inner]
    inner_root = next(e.root for e in rec.of_kind("trace") if e.end == starts[inner][1].end)
    merges = [e for e in rec.query_events(inner) if e.kind == "add_outgrads" and e.parent == inner_root]
    vjps = {e.node: e for e in rec.query_events(outer) if e.kind == "vjp"}
    second = plain(call.gradient)
    h = 1e-5
    lines = [f"second derivative: {fmt(second)} (6x = {fmt(6 * X)})",
             f"inner query {inner}: level {starts[inner][1].level}; "
             f"outer query {outer}: level {starts[outer][1].level}",
             "accumulation nodes: " + ", ".join(f"{e.label} = {fmt(e.value)}" for e in accumulators)]
    checks = {
        "second derivative equals the closed form 6x": second == 6 * X,
        "second derivative equals finite differences of grad(f)":
            abs(second - (grad(f)(X + h) - grad(f)(X - h)) / (2 * h)) < 1e-6,
        "reference engine's grad(grad(f)) agrees": abs(ref.grad(ref.grad(f))(X) - second) < 1e-12,
        "inner query's level is 1, the outer's 0 (event.level = traces open at backward_start)":
            [starts[q][1].level for q in (inner, outer)] == [open_traces(rec, starts[q][0]) for q in (inner, outer)]
            == [1, 0],
        "inner cotangents are Boxed(value, level=0); the outer query's are plain values":
            all(isinstance(e.contribution, Boxed) and e.contribution.level == 0 for e in merges)
            and not any(isinstance(e.contribution, Boxed) for e in rec.query_events(outer) if e.kind == "add_outgrads"),
        "one VSpace.add per merge into an immutable entry, one VSpace.mut_add per merge into a mutable one":
            [e.primitive for e in accumulators] == [ACCUMULATION[e.previous[1]] for e in merges if e.previous],
        "each accumulation node's value is the inner running total it produced":
            [plain(e.value) for e in accumulators] == [plain(m.result[0]) for m in merges if m.previous],
        "the outer query visits every VSpace.add/mut_add node the inner query created":
            {e.label for e in accumulators} <= set(rec.visit_order(outer)) and bool(accumulators),
        "their VJPs are identities: every ingrad equals the outgrad":
            all(all(plain(g) == plain(vjps[e.label].outgrad) for g in vjps[e.label].ingrads) for e in accumulators),
        "every report check passes": all(c.passed for c in call.checks),
    }
    report = (render(call, title="Experiment: higher order (grad(grad(x*x*x)) at 2)", intro=INTRO)
              + levels_section(rec, starts) + accumulation_section(rec, merges, accumulators, vjps, outer)
              + questions(rec, merges, accumulators, vjps, starts))
    return Outcome(lines, checks, report, call)


def levels_section(rec, starts):
    rows = [(q, e.level, e.end, fmt(e.seed), fmt(rec.gradient(q))) for q, (_, e) in starts.items()]
    return "\n".join([
        "", "## Two queries, two levels", "",
        "The inner query (level 1) returns a box of the outer trace; the outer query (level 0) "
        "differentiates the graph that box belongs to.", "",
        table(["query", "level", "end node", "seed", "returned"], rows), ""])


def accumulation_section(rec, merges, accumulators, vjps, outer):
    made = iter(accumulators)
    rows = [(m.node, fmt(m.previous), fmt(m.contribution), fmt(m.result),
             next(made).label if m.previous else "- (first contribution: stored as is)") for m in merges]
    order = rec.visit_order(outer)
    visits = [(e.label, e.primitive, ", ".join(e.parents), order.index(e.label), fmt(vjps[e.label].outgrad),
               fmt(vjps[e.label].ingrads)) for e in accumulators]
    return "\n".join([
        "", "## The inner accumulation, recorded as outer nodes", "",
        "`add_outgrads` calls of the inner query into its root, and the outer node each merge created:", "",
        table(["from node", "previous", "contribution", "result", "outer node created"], rows), "",
        f"The outer query {outer} visits those nodes; their local VJPs hand the cotangent unchanged to "
        "both summands:", "",
        table(["node", "primitive", "parents", "toposort position", "outgrad", "ingrads"], visits), ""])


def questions(rec, merges, accumulators, vjps, starts):
    inner, outer = rec.queries
    add, mut_add = accumulators
    contributions = ", ".join(fmt(m.contribution) for m in merges)
    return f"""
## Self-test questions

1. **Why is the inner query's result a box?** It ran at level {starts[inner][1].level} inside the outer
   trace (level {starts[outer][1].level}); its local VJPs multiply the seed by boxed values of x
   (`g * y`), so every cotangent was a box: its contributions read `{contributions}`, and it returned
   `{fmt(rec.gradient(inner))}`, which the outer `make_vjp` treats as its output.
2. **Why does `x*x*x` create both `VSpace.add` and `VSpace.mut_add`?** The inner root received
   {len(merges)} contributions: the first was stored as `{fmt(merges[0].result)}`, the second met an
   immutable entry and `VSpace.add` made `{add.label}` = `{fmt(add.value)}` (flag now True), the third met a
   mutable entry and `VSpace.mut_add` made `{mut_add.label}` = `{fmt(mut_add.value)}`.
3. **What does the outer pass do at `{mut_add.label}`?** Its VJP is the identity on each summand:
   outgrad `{fmt(vjps[mut_add.label].outgrad)}` became ingrads `{fmt(vjps[mut_add.label].ingrads)}` for
   `{", ".join(mut_add.parents)}`. Without these nodes the outer graph would end at one of the
   summands and miss the others' dependence on x.
"""


if __name__ == "__main__":
    sys.exit(main(run, __file__))

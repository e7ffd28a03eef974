"""Forward mode: make_jvp on f(x) = x*x + sin(x) at x = 3 with tangent 1.

Each JVPNode gets its tangent while it is built: its JVP rule computes one share per boxed
argument (local derivative times that parent's tangent) and `sum_outgrads` adds the shares with
`add_outgrads`, the same function reverse mode accumulates cotangents with. So forward mode makes
5 `add_outgrads` calls here: 2 for `multiply` (x sits in both positions), 1 for `sin`, 2 for `add`.
Every tangent is checked against the closed form, the reference engine's `run_tangents` and
central finite differences.
"""

import sys
from collections import Counter

import autograd.numpy as anp
import numpy as np

from adtrace.tools.experiment import Outcome, main, repo_root
from adtrace.report import render
from adtrace.report.format import fmt
from adtrace.report.tables import table
from adtrace.compare.traced_call import trace_call
from adtrace.recording.values import plain

INTRO = """\
**What this shows.** In forward mode (`make_jvp(f)(3.0)(1.0)`) there is no backward pass: each
`JVPNode` receives its tangent while it is built. Its JVP rule computes one share per boxed
argument (the local derivative times that parent's tangent) and `sum_outgrads` adds the shares
with `add_outgrads`, the very function reverse mode uses for cotangents. For `x*x + sin(x)`:
`multiply` makes 2 calls (x is boxed in both positions), `sin` 1, `add` 2; 5 in all. The
tangents equal the reference engine's (`run_tangents`) and the closed form `2x + cos x`."""

X = 3.0


def f(x):
    return x * x + anp.sin(x)


def closed_form_tangents(x):
    """d/dx of every intermediate, by hand: the Wengert list's tangents with x_dot = 1."""
    return {"v0_root": 1.0, "v1_multiply": 2 * x, "v2_sin": np.cos(x), "v3_add": 2 * x + np.cos(x)}


def closed_form_shares(x):
    """Per node, the share of each argument position: local partial derivative times 1 * (d parent/dx)."""
    return {"v1_multiply": [x * 1.0, x * 1.0], "v2_sin": [np.cos(x) * 1.0], "v3_add": [1.0 * 2 * x, 1.0 * np.cos(x)]}


def run():
    call = trace_call(f, (X,), mode="both", capture="full", relative_to=repo_root(__file__))
    rec = call.forward_recording
    nodes = rec.of_kind("jvp_root", "jvp_node")
    built = rec.of_kind("jvp_node")
    sums = [e for e in rec.of_kind("add_outgrads") if e.mode == "fwd"]
    recorded = {e.label: plain(e.tangent) for e in nodes}
    reference = {s.label: plain(s.tangent) for s in call.reference_tangents}
    calls = Counter(e.node for e in sums)
    index = {id(e): i for i, e in enumerate(rec.events)}
    h = 1e-6
    lines = [f"{e.label}: tangent {fmt(e.tangent)}, add_outgrads calls {calls[e.label]}" for e in nodes]
    lines.append(f"output tangent {fmt(call.tangent)} = 2x + cos x = {fmt(2 * X + np.cos(X))}; "
                 f"add_outgrads calls in forward mode: {len(sums)}")
    checks = {
        "output tangent equals the closed form 2x + cos x": np.isclose(call.tangent, 2 * X + np.cos(X), rtol=1e-15),
        "output tangent equals central finite differences": np.isclose(call.tangent, (f(X + h) - f(X - h)) / (2 * h)),
        "every node's tangent equals the closed-form derivative of its value":
            all(np.isclose(recorded[k], v, rtol=1e-15) for k, v in closed_form_tangents(X).items()),
        "every node's tangent equals the reference engine's (run_tangents)":
            recorded.keys() == reference.keys() and all(recorded[k] == reference[k] for k in recorded),
        "add_outgrads calls: one per boxed argument of each JVPNode (5 in all)":
            all(calls[e.label] == len(e.parents) for e in built) and len(sums) == sum(len(e.parents) for e in built),
        "each share is the local derivative times the parent's tangent":
            all(np.isclose([plain(e.contribution) for e in sums if e.node == k], v, rtol=1e-15).all()
                for k, v in closed_form_shares(X).items()),
        "a node's add_outgrads calls come before its jvp_node event":
            all(index[id(s)] < index[id(rec.nodes[s.node])] for s in sums),
        "each tangent is the running sum its last add_outgrads call returned":
            all(plain(e.tangent) == plain([s for s in sums if s.node == e.label][-1].result[0]) for e in built),
        "forward mode ran no toposort and no backward pass": not rec.of_kind("toposort", "backward_start"),
        "reverse mode's gradient equals the forward tangent (scalar input and output)":
            np.isclose(plain(call.gradient), call.tangent, rtol=1e-15),
        "every report check passes": all(c.passed for c in call.checks),
    }
    report = (render(call, title="Experiment: forward mode (x*x + sin(x) at 3)", intro=INTRO)
              + sum_section(sums, rec) + tangents_section(nodes, reference) + questions(rec, sums, call))
    return Outcome(lines, checks, report, call)


def sum_section(sums, rec):
    rows = [(i, e.node, rec.nodes[e.node].primitive, e.position, e.parent, fmt(e.previous), fmt(e.contribution),
             fmt(e.result)) for i, e in enumerate(sums, 1)]
    return "\n".join([
        "", "## `sum_outgrads` in forward mode: who makes which call", "",
        "Each row is one `add_outgrads` call made by `sum_outgrads` inside the JVP rule of the node "
        "being built; the share is the local derivative times the parent's tangent.", "",
        table(["call", "JVPNode being built", "primitive", "argument position", "parent (its tangent)",
               "previous", "share", "result (value, mutable)"], rows), ""])


def tangents_section(nodes, reference):
    closed = closed_form_tangents(X)
    formulas = {"v0_root": "x_dot = 1", "v1_multiply": "2x", "v2_sin": "cos x", "v3_add": "2x + cos x"}
    rows = [(e.label, formulas[e.label], fmt(closed[e.label]), fmt(e.tangent), fmt(reference[e.label]))
            for e in nodes]
    return "\n".join([
        "", "## Tangents: closed form, autograd, reference engine", "",
        table(["node", "d(node)/dx", "closed form", "JVPNode tangent (autograd)", "reference run_tangents"], rows),
        ""])


def questions(rec, sums, call):
    mult = [e for e in sums if e.node == "v1_multiply"]
    add = [e for e in sums if e.node == "v3_add"]
    return f"""
## Self-test questions

1. **Why does `v1_multiply` make two `add_outgrads` calls though it has one parent node?** Its
   parents by position are `{", ".join(rec.nodes["v1_multiply"].parents)}`: one share per boxed
   argument, `{fmt(mult[0].contribution)}` and `{fmt(mult[1].contribution)}`, summed to
   `{fmt(mult[-1].result)}`, the same `(value, mutable)` bookkeeping as a cotangent in reverse mode.
2. **Why does forward mode need no `toposort`?** Tangents are computed in creation order, which is
   already topological: when `v3_add` was built its parents' tangents `{fmt(add[0].contribution)}` and
   `{fmt(add[1].contribution)}` existed. The forward recording holds
   {len(rec.of_kind("toposort"))} `toposort` and {len(rec.of_kind("backward_start"))} `backward_start` events.
3. **How many passes does a derivative of `R -> R` cost in each mode?** Forward mode: one traced
   pass ({len(rec.of_kind("trace"))} `trace` event) gives `{fmt(call.tangent)}`. Reverse mode: one trace plus
   {len(call.recording.queries)} backward query, giving `{fmt(call.gradient)}`; with one input and one output
   both give the whole derivative.
"""


if __name__ == "__main__":
    sys.exit(main(run, __file__))

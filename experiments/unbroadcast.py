"""Unbroadcast: where autograd reduces a broadcast cotangent back to its parent's shape.

In f(M) = sum(M + r) + mean(r + c), with r = sum(M, axis=0) (a row vector) and c = mean(M) (a
scalar), two adds broadcast: matrix + row vector and vector + scalar. Each add's local VJP
(`unbroadcast_f` in autograd's rule) sums the cotangent over the broadcast axes, so the recorded
`vjp` event's ingrads already have the parents' shapes before `add_outgrads` runs. Recorded with
capture="full"; every number is checked against numpy directly or a closed form.
"""

import sys

import autograd.numpy as anp
import numpy as np

from adtrace.tools.experiment import Outcome, main, repo_root
from adtrace.report import render
from adtrace.report.format import fmt
from adtrace.report.tables import table
from adtrace.compare.traced_call import trace_call

INTRO = """\
**What this shows.** `f(M) = sum(M + r) + mean(r + c)` with `r = sum(M, axis=0)` (shape `(3,)`) and
`c = mean(M)` (shape `()`) broadcasts twice: matrix + row vector and vector + scalar. The cotangent
of each add has the broadcast shape, but what reaches `add_outgrads` has the parent's shape: autograd
reduces it inside the local VJP (`unbroadcast_f` in the rule of `add`), so the recorded `vjp` event's
`ingrads` are already `(2, 3)` and `(3,)`, or `(3,)` and `()`. `sum` goes the other way (its VJP
broadcasts a scalar back to the input's shape) and `mean` divides by the number of elements N."""


def broadcasting(M):
    r = anp.sum(M, axis=0)
    c = anp.mean(M)
    return anp.sum(M + r) + anp.mean(r + c)


def closed_form(M):
    """df/dM_ij = 1 + R (sum of M + r: M once, r R times) + 1/C (mean of r) + 1/N (c), R x C = N."""
    rows, cols = M.shape
    return np.full(M.shape, 1 + rows + 1 / cols + 1 / M.size)


def run():
    M = np.arange(1.0, 7.0).reshape(2, 3)
    call = trace_call(broadcasting, (M,), capture="full", relative_to=repo_root(__file__))
    rec = call.recording
    nodes, adds, vjps = rec.nodes, rec.of_kind("add_outgrads"), {e.node: e for e in rec.of_kind("vjp")}
    root = rec.of_kind("root")[0].label
    shape = {label: np.shape(n.value if n.kind == "node" else M) for label, n in nodes.items()}
    node = {(e.primitive, tuple(shape[p] for p in e.parents)): e.label for e in rec.of_kind("node")}
    matrix_row, vector_scalar = node["add", ((2, 3), (3,))], node["add", ((3,), ())]
    mean_all, total_sum = node["mean", ((2, 3),)], node["sum", ((2, 3),)]
    matrix, row = nodes[matrix_row].parents
    vector, scalar = nodes[vector_scalar].parents

    def into(parent, source):
        return next(a.contribution for a in adds if a.parent == parent and a.node == source)

    g_mr, g_vs, g_mean = vjps[matrix_row].outgrad, vjps[vector_scalar].outgrad, vjps[mean_all].outgrad
    lines = [f"{label} ({kind}): g {np.shape(vjps[label].outgrad)} -> ingrads "
             f"{', '.join(str(np.shape(i)) for i in vjps[label].ingrads)}; into {parent}: {fmt(into(parent, label))}"
             for label, kind, parent in ((matrix_row, "matrix + row", row), (vector_scalar, "vector + scalar", scalar))]
    lines += [f"{mean_all}: contribution per element {fmt(into(root, mean_all).flat[0])} = 1/N, N = {M.size}",
              f"gradient: {fmt(call.gradient)} (closed form {fmt(closed_form(M))})"]
    checks = {
        "every contribution's shape equals its parent's value shape":
            all(np.shape(a.contribution) == shape[a.parent] for a in adds),
        "every local VJP's ingrads already have the parents' shapes (before add_outgrads)":
            all(tuple(np.shape(i) for i in vjps[label].ingrads) == tuple(shape[p] for p in n.parents)
                for label, n in nodes.items() if n.kind == "node"),
        "add_outgrads receives the local VJP's ingrads unchanged":
            all(np.array_equal(a.contribution, vjps[a.node].ingrads[a.position]) for a in adds),
        "matrix + row: the row's contribution is g summed over axis 0 (numpy)":
            np.array_equal(into(row, matrix_row), np.sum(g_mr, axis=0)),
        "vector + scalar: the scalar's contribution is g summed over all axes (numpy)":
            into(scalar, vector_scalar) == np.sum(g_vs),
        "the operands with the broadcast shape get g itself (no reduction)":
            np.array_equal(into(matrix, matrix_row), g_mr) and np.array_equal(into(vector, vector_scalar), g_vs),
        "sum's VJP broadcasts its scalar g to the input's shape": np.array_equal(
            into(*nodes[total_sum].parents, total_sum), np.broadcast_to(vjps[total_sum].outgrad, M.shape)),
        "the gradient of mean equals g/N, N = M.size":
            np.allclose(into(root, mean_all), np.full(M.shape, g_mean / M.size), rtol=1e-15, atol=0),
        "gradient equals the closed form 1 + R + 1/C + 1/N":
            np.allclose(call.gradient, closed_form(M), rtol=1e-12, atol=0),
        "the reference engine's gradient equals autograd's":
            np.allclose(call.reference.adjoint, call.gradient, rtol=1e-12, atol=0),
        "every report check passes": all(c.passed for c in call.checks),
    }
    report = (render(call, title="Experiment: unbroadcast (matrix + row, vector + scalar, sum, mean)", intro=INTRO)
              + shape_sections(rec, vjps, shape, (matrix_row, vector_scalar))
              + questions(call, matrix_row, vector_scalar, mean_all))
    return Outcome(lines, checks, report, call)


def shape_sections(rec, vjps, shape, broadcasting_adds):
    contribution_rows = [[a.node, rec.nodes[a.node].primitive, np.shape(vjps[a.node].outgrad), a.parent,
                          np.shape(a.contribution), shape[a.parent]] for a in rec.of_kind("add_outgrads")]
    vjp_rows = [[label, np.shape(vjps[label].outgrad), position, parent, np.shape(vjps[label].ingrads[position]),
                 shape[parent], fmt(vjps[label].ingrads[position])]
                for label in broadcasting_adds for position, parent in enumerate(rec.nodes[label].parents)]
    return f"""
## Contribution shapes against parent shapes

One row per `add_outgrads`: the shape of the cotangent `g` the node popped, of the contribution it
passed to the parent, and of the parent's value.

{table(["node", "primitive", "g shape", "parent", "contribution shape", "parent value shape"], contribution_rows)}

## Where the reduction happens

The `vjp` events of the two broadcasting adds: `g` has the broadcast shape, the ingrads returned by
`node.vjp(g)` already have the parents' shapes. `add_outgrads` only adds same-shape arrays.

{table(["node", "g shape", "position", "parent", "ingrad shape", "parent value shape", "ingrad"], vjp_rows)}
"""


def questions(call, matrix_row, vector_scalar, mean_all):
    rec = call.recording
    vjps = {e.node: e for e in rec.of_kind("vjp")}
    row = rec.nodes[matrix_row].parents[1]
    return f"""
## Self-test questions

1. **Who sums the cotangent of `M + r` over the rows?** The local VJP of `{matrix_row}`: for
   `g = {fmt(vjps[matrix_row].outgrad)}` it returned `{fmt(vjps[matrix_row].ingrads[1])}` for `{row}`
   (shape `{np.shape(vjps[matrix_row].ingrads[1])}`), before any `add_outgrads` call.
2. **Why is the scalar's contribution from `r + c` equal to `{fmt(vjps[vector_scalar].ingrads[1])}`?** `c` was
   broadcast over {np.size(vjps[vector_scalar].outgrad)} elements, so unbroadcast sums
   `g = {fmt(vjps[vector_scalar].outgrad)}` over its only axis.
3. **What does `mean`'s VJP pass back?** `{fmt(vjps[mean_all].ingrads[0])}`: `g = {fmt(vjps[mean_all].outgrad)}`
   divided by the {call.args[0].size} elements, broadcast to shape `{np.shape(vjps[mean_all].ingrads[0])}`.
"""


if __name__ == "__main__":
    sys.exit(main(run, __file__))

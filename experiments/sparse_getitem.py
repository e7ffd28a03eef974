"""Sparse contributions: x[0]*x[1] + x[0] at x = [2, 5].

Each x[i] is a node of ArrayBox.__getitem__ whose local VJP returns a SparseObject (a one-hot
cotangent that knows how to add itself into a dense array). add_outgrads takes its sparse_add
branch: the first contribution comes back already flagged mutable (True), unlike a first dense
contribution (g, False), and the later ones are added into that array in place. The densified
contributions sum to the gradient [x1 + 1, x0].
"""

import sys

import numpy as np

from adtrace.tools.experiment import Outcome, main, repo_root
from adtrace.report import render
from adtrace.report.format import fmt
from adtrace.report.tables import table
from adtrace.compare.traced_call import trace_call
from adtrace.recording.values import Sparse, plain

INTRO = """\
**What this shows.** In `x[0]*x[1] + x[0]` every `x[i]` is an `ArrayBox.__getitem__` node. Its
local VJP does not build a dense array: it returns a `SparseObject` (recorded as `Sparse`, shown
densified), one-hot at index `i`. `add_outgrads` sees the sparse type and calls `sparse_add`: the
first contribution into the root is added into fresh zeros and comes back `(array, True)`, already
mutable, while a first dense contribution is kept as is, `(g, False)`. The next sparse contributions
are written into that same array in place. Their dense values sum to the gradient `[x1 + 1, x0]`."""


def indexed(x):
    return x[0] * x[1] + x[0]


def closed_form(x):
    return np.array([x[1] + 1, x[0]])


def branch(event):
    """The statement of add_outgrads that ran, from the contribution's type and the previous flag."""
    sparse = type(event.contribution) is Sparse
    if event.previous is None:
        return "sparse_add(vs, None, g), True" if sparse else "g, False"
    if event.previous[1]:
        return "sparse_add(vs, prev_g, g), True  (in place)" if sparse else "vs.mut_add(prev_g, g), True"
    return "sparse_add(vs, vs.mut_add(None, prev_g), g), True" if sparse else "vs.add(prev_g, g), True"


def run():
    x = np.array([2.0, 5.0])
    call = trace_call(indexed, (x,), capture="full", relative_to=repo_root(__file__))
    rec = call.recording
    adds = rec.of_kind("add_outgrads")
    sparse = [a for a in adds if type(a.contribution) is Sparse]
    dense_firsts = [a for a in adds if type(a.contribution) is not Sparse and a.previous is None]
    getitems = [e for e in rec.of_kind("node") if e.primitive == "ArrayBox.__getitem__"]
    vjps = {e.node: e for e in rec.of_kind("vjp")}
    densified = [plain(a.contribution) for a in sparse]
    lines = [f"{a.node} -> {a.parent}: {fmt(a.contribution)}, previous {fmt(a.previous)}, result {fmt(a.result)}"
             for a in sparse]
    lines.append(f"densified sum: {' + '.join(fmt(d) for d in densified)} = {fmt(sum(densified))} "
                 f"(closed form [x1+1, x0] = {fmt(closed_form(x))})")
    checks = {
        "every getitem VJP returns a SparseObject of the input's shape":
            all(type(i) is Sparse and np.shape(i.dense) == x.shape for g in getitems for i in vjps[g.label].ingrads),
        "each densified contribution is one-hot and carries its getitem node's cotangent":
            all(np.count_nonzero(d) == 1 and d.sum() == float(vjps[a.node].outgrad) for a, d in zip(sparse, densified)),
        "every sparse contribution, the first included, is flagged mutable (sparse_add's fresh array)":
            bool(sparse) and all(a.result[1] for a in sparse) and any(a.previous is None for a in sparse),
        "every first dense contribution is flagged False":
            bool(dense_firsts) and not any(a.result[1] for a in dense_firsts),
        "the recorded history is true: each result = previous + densified contribution":
            all(np.array_equal(a.result[0], (0 if a.previous is None else a.previous[0]) + d)
                for a, d in zip(sparse, densified)),
        "the densified contributions sum to autograd's gradient": np.array_equal(sum(densified), call.gradient),
        "the gradient equals the closed form [x1 + 1, x0]": np.array_equal(call.gradient, closed_form(x)),
        "the reference engine's gradient equals autograd's": np.array_equal(call.reference.adjoint, call.gradient),
        "every report check passes": all(c.passed for c in call.checks),
    }
    report = (render(call, title="Experiment: sparse contributions (x[0]*x[1] + x[0] at [2, 5])", intro=INTRO)
              + flags_section(adds) + questions(call, sparse, getitems))
    return Outcome(lines, checks, report, call)


def flags_section(adds):
    rows = [[a.node, a.parent, "Sparse" if type(a.contribution) is Sparse else "dense", fmt(plain(a.contribution)),
             fmt(a.previous), fmt(a.result), f"`{branch(a)}`"] for a in adds]
    return f"""
## The branches of `add_outgrads`

Every `add_outgrads` call with the type of its contribution (a `Sparse` one shown densified), the
`(value, mutable)` pairs before and after, and the statement of `add_outgrads` that ran (read off
the contribution's type and the previous flag).

{table(["node", "parent", "type", "contribution (dense)", "previous", "result", "branch"], rows)}
"""


def questions(call, sparse, getitems):
    first = sparse[0]
    x0_nodes = [g.label for g in getitems if g.value == call.args[0][0]]
    return f"""
## Self-test questions

1. **Why is the first sparse contribution flagged `True` when a first dense one is `False`?**
   `sparse_add(vs, None, g)` adds the one-hot `{fmt(first.contribution)}` into fresh zeros that
   `outgrads` owns, so it returned `{fmt(first.result)}`: later contributions may write into it. A
   dense `g` may be shared with the VJP that made it, so it is kept as `(g, False)`.
2. **How did `{first.parent}`'s entry change?** {" -> ".join(fmt(a.result) for a in sparse)}: the
   second and third `sparse_add` wrote into the array the first one made (in place); adtrace copied
   it before each write, so the recorded history shows every intermediate value.
3. **Why are there {len(getitems)} getitem nodes for a 2-element input?** Each `x[i]` on the box is one
   primitive call: `x[0]` was evaluated twice ({", ".join(x0_nodes)}), and each node sent its own
   sparse contribution to the root.
"""


if __name__ == "__main__":
    sys.exit(main(run, __file__))

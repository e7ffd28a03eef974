"""An output independent of the input: make_vjp's zeros branch, and no backward pass at all.

For f(x) = 3.0, for floor(x) + 1 (floor is registered notrace: it unboxes its argument) and for
x.shape[0] * 2.0 (a constant path: only the shape is read), the traced output is not a box, so
`trace` returns end_node None and warns "Output seems independent of input."; make_vjp's closure
is then `vspace(x).zeros()` and backward_pass never runs. 0.0 * x, whose gradient is zero too,
does run one: independence is about the graph, not the numbers.
"""

import sys
import warnings

import autograd.numpy as anp
import numpy as np
from autograd import make_vjp
from autograd.core import vspace

import adtrace
from adtrace.tools.experiment import Outcome, main, repo_root
from adtrace.report import render
from adtrace.report.format import fmt
from adtrace.report.tables import table
from adtrace.compare.traced_call import trace_call

INTRO = """\
**What this shows.** `floor` is one of autograd's notrace primitives: called on a box it unboxes
its argument and returns a plain array, so `floor(x) + 1` never reaches a `VJPNode`. `trace`
finds that the output is not a box of its trace, warns "Output seems independent of input." and
returns `end_node = None`; `make_vjp` then returns the closure `vjp(g) = vspace(x).zeros()`, and
`backward_pass` never runs: no `backward_start`, no `toposort`, no `add_outgrads`. The same holds
for a constant (`3.0`) and for a constant path (`x.shape[0] * 2.0`). The reference engine returns
zeros too. `0.0 * x`, with the same zero gradient, is the contrast: it has a node and a backward pass."""

WARNING = "Output seems independent of input."
X = np.array([1.5, -0.5])


def constant(x):
    return 3.0


def through_floor(x):
    return anp.floor(x) + 1.0


def through_shape(x):
    return x.shape[0] * 2.0


def times_zero(x):
    return 0.0 * x


FUNCTIONS = (constant, through_floor, through_shape, times_zero)
INDEPENDENT = (constant, through_floor, through_shape)


def recorded_vjp(f, x):
    """make_vjp(f)(x) and the VJP with a seed of ones, recorded, with autograd's warnings caught."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with adtrace.record(capture="full") as rec:
            vjp, output = make_vjp(f)(x)
            gradient = vjp(vspace(output).ones())
    return {"rec": rec, "vjp": vjp, "gradient": gradient, "warnings": [str(w.message) for w in caught]}


def finite_differences(f, x, h=1e-6):
    """Central differences per coordinate of sum(f), in plain numpy."""
    steps = np.eye(x.size) * h
    return np.array([np.sum(np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * h) for e in steps])


def run():
    runs = {f.__name__: recorded_vjp(f, X) for f in FUNCTIONS}
    calls = {f.__name__: trace_call(f, (X,), relative_to=repo_root(__file__)) for f in FUNCTIONS}
    independent = [f.__name__ for f in INDEPENDENT]
    lines = [f"{name}: warnings {r['warnings']}, trace end {r['rec'].of_kind('trace')[0].end}, "
             f"{len(r['rec'].nodes)} nodes, {len(r['rec'].queries)} backward queries, gradient {fmt(r['gradient'])}"
             for name, r in runs.items()]
    checks = {
        "autograd warns 'Output seems independent of input.' exactly when the output is independent":
            all((r["warnings"] == [WARNING]) == (name in independent) for name, r in runs.items()),
        "the trace event says independent=True, end None, for the independent outputs":
            all([(t.independent, t.end) for t in runs[n]["rec"].of_kind("trace")] == [(True, None)]
                for n in independent),
        "no backward pass ran for them (no backward_start, toposort or add_outgrads event)":
            all(not runs[n]["rec"].of_kind("backward_start", "toposort", "add_outgrads") for n in independent),
        "make_vjp returned the zeros closure (it calls vspace().zeros, not backward_pass)":
            all(("backward_pass" in r["vjp"].__code__.co_names) == (name not in independent)
                for name, r in runs.items()),
        "only the root node was created for them": all(list(runs[n]["rec"].nodes) == ["v0_root"] for n in independent),
        "every gradient equals numpy's zeros of the input's shape": all(
            np.array_equal(r["gradient"], np.zeros(X.shape)) for r in runs.values()),
        "every gradient equals central finite differences": all(
            np.allclose(r["gradient"], finite_differences(f, X), atol=1e-9) for f, r in zip(FUNCTIONS, runs.values())),
        "0.0 * x, with the same zero gradient, runs a backward pass for its one vjp call":
            len(runs["times_zero"]["rec"].queries) == len(runs["times_zero"]["rec"].of_kind("trace")) == 1,
        "the reference engine returns the same zeros, with no step for the independent outputs": all(
            np.array_equal(c.reference.adjoint, runs[n]["gradient"]) and (not c.reference.steps) == (n in independent)
            for n, c in calls.items()),
        "trace_call saw the same warning": all((calls[n].warnings == [WARNING]) == (n in independent) for n in calls),
        "every report check passes": all(c.passed for call in calls.values() for c in call.checks),
    }
    rendered = render(calls["through_floor"], title="Experiment: output independent of the input", intro=INTRO)
    checks["the trace_call report still renders, saying no backward pass ran"] = (
        not calls["through_floor"].recording.queries and "_No backward pass ran in this recording._" in rendered)
    report = rendered + cases_section(runs, calls) + questions(runs)
    return Outcome(lines, checks, report, calls["through_floor"])


def cases_section(runs, calls):
    rows = []
    for name, r in runs.items():
        trace = r["rec"].of_kind("trace")[0]
        rows.append([f"`{name}`", "; ".join(r["warnings"]) or "-", trace.independent, trace.end,
                     len(r["rec"].nodes), len(r["rec"].queries), ", ".join(r["vjp"].__code__.co_names),
                     fmt(r["gradient"]), fmt(calls[name].reference.adjoint), len(calls[name].reference.steps)])
    headers = ["function", "warning", "independent", "trace end", "nodes", "backward queries",
               "names the vjp closure calls", "gradient (autograd)", "gradient (reference)", "reference steps"]
    return f"""
## Four functions, one zero gradient

Each function recorded directly (`adtrace.record(capture="full")` around `make_vjp(f)(x)` and
`vjp(ones)`, warnings caught with `warnings.catch_warnings`), and through `trace_call` for the
reference engine. The column of names is the `co_names` of the closure `make_vjp` returned: the
zeros branch calls `vspace(x).zeros()`, the other `backward_pass(g, end_node)`.

{table(headers, rows)}

The lecture mapping above shows 0 runs in both engines: for an independent output `run_gradient`
returns zeros without entering the lecture's loop ({len(calls["through_floor"].reference.steps)} steps).
"""


def questions(runs):
    floor, zero = runs["through_floor"]["rec"], runs["times_zero"]["rec"]
    return f"""
## Self-test questions

1. **Why does `floor(x) + 1` create no node?** `floor` is notrace: it ran on the unboxed value, so
   `+ 1` saw a plain array too. The recording holds {len(floor.events)} events:
   {", ".join(e.kind for e in floor.events)}, and the trace output is `{fmt(floor.of_kind("trace")[0].output)}`,
   not a box.
2. **What does `vjp(g)` compute here?** Nothing from `g`: the closure calls
   `{", ".join(runs["through_floor"]["vjp"].__code__.co_names)}` and returns
   `{fmt(runs["through_floor"]["gradient"])}` without visiting any node.
3. **`0.0 * x` also has gradient `{fmt(runs["times_zero"]["gradient"])}`: why does it run a backward
   pass?** `multiply` saw a box, so `{zero.of_kind("node")[0].label}` exists and the trace ends there
   (`end = {zero.of_kind("trace")[0].end}`); autograd decides independence from the graph, not from
   the numbers, and ran {len(zero.queries)} backward query.
"""


if __name__ == "__main__":
    sys.exit(main(run, __file__))

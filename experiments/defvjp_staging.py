"""defvjp staging: registration, capture at node creation, application in the backward pass.

A custom primitive `logsumexp` with a VJP rule maker `ans, x -> (g -> g * exp(x - ans))`:
(1) `defvjp` stores a maker in `autograd.core.primitive_vjps[logsumexp]` when this module is
imported, before any call; (2) the maker runs inside `VJPNode.__init__`, while the forward pass
builds the node, and captures `ans` and `x` in a closure; (3) the closure runs once per backward
query (`ingrads = node.vjp(outgrad[0])`). The maker and the closure log the number of recorded
events at the moment they run, which places them between the recorded events.
"""

import inspect
import sys

import autograd.numpy as anp
import numpy as np
from autograd import make_vjp
from autograd.core import primitive_vjps
from autograd.extend import defvjp, primitive

import adtrace
from adtrace.tools.experiment import Outcome, main, repo_root
from adtrace.report import render
from adtrace.report.format import fmt
from adtrace.report.tables import table
from adtrace.compare.traced_call import trace_call
from adtrace.recording.values import plain

INTRO = """\
**What this shows.** The seed's "three moments of `defvjp`" (registration, capture, application)
on a custom primitive `logsumexp`. (1) `defvjp(logsumexp, maker)` runs at import time and stores a
rule in `autograd.core.primitive_vjps[logsumexp]`; nothing is differentiated yet. (2) When the
forward pass builds the `VJPNode`, `VJPNode.__init__` calls the maker with this call's `ans` and
`x`; the maker returns a closure waiting for `g`. (3) Each backward query calls that closure once.
The maker and the closure note how many events the recording held when they ran."""

X = np.array([0.5, -1.0, 2.0])


class Moments:
    """When the maker and the closure ran: the number of recorded events at that moment."""

    def __init__(self):
        self.recording, self.maker, self.closure = None, [], []

    def now(self):
        return None if self.recording is None else len(self.recording.events)


MOMENTS = Moments()


@primitive
def logsumexp(x):
    top = np.max(x)
    return top + np.log(np.sum(np.exp(x - top)))


def logsumexp_vjp_maker(ans, x):
    MOMENTS.maker.append((MOMENTS.now(), ans))

    def logsumexp_vjp(g):
        MOMENTS.closure.append(MOMENTS.now())
        return g * anp.exp(x - ans)

    return logsumexp_vjp


REGISTERED_BEFORE = logsumexp in primitive_vjps
defvjp(logsumexp, logsumexp_vjp_maker)
REGISTERED = primitive_vjps[logsumexp]
MAKER_RUNS_AT_REGISTRATION = len(MOMENTS.maker)


def loss(x):
    return logsumexp(x)


def softmax(x):
    e = np.exp(x - np.max(x))
    return e / e.sum()


def finite_differences(fun, x, h=1e-6):
    return np.array([(fun(x + h * e) - fun(x - h * e)) / (2 * h) for e in np.eye(x.size)])


def record_two_queries(seeds):
    """make_vjp once (the forward pass), then vjp(g) once per seed (one backward query each)."""
    MOMENTS.maker.clear()
    MOMENTS.closure.clear()
    with adtrace.record(capture="full") as rec:
        MOMENTS.recording = rec
        vjp, _ = make_vjp(loss)(X)
        gradients = [vjp(g) for g in seeds]
    MOMENTS.recording = None
    return rec, gradients, list(MOMENTS.maker), list(MOMENTS.closure)


def run():
    seeds = (1.0, 2.0)
    rec, gradients, maker_runs, closure_runs = record_two_queries(seeds)
    call = trace_call(loss, (X,), capture="full", relative_to=repo_root(__file__))
    node = next(e for e in rec.of_kind("node") if e.primitive == "logsumexp")
    at = {id(e): i for i, e in enumerate(rec.events)}
    starts = {e.query: at[id(e)] for e in rec.of_kind("backward_start")}
    ends = {e.query: at[id(e)] for e in rec.of_kind("backward_end")}
    vjps = [e for e in rec.of_kind("vjp") if e.node == node.label]
    wrapped = inspect.getclosurevars(REGISTERED).nonlocals.get("vjps_dict", {})
    lines = [f"registration: maker runs {MAKER_RUNS_AT_REGISTRATION}, registered {REGISTERED.__qualname__}",
             f"capture: maker ran at event {maker_runs[0][0]} ({node.label} is event {at[id(node)]}, "
             f"first backward_start event {min(starts.values())})",
             "application: closure ran at events " + ", ".join(str(n) for n in closure_runs) +
             f" in queries {', '.join(str(q) for q in rec.queries)}",
             "gradients: " + ", ".join(fmt(g) for g in gradients)]
    checks = {
        "gradient equals the closed form g * softmax(x)":
            all(np.allclose(grad, g * softmax(X), rtol=1e-14) for grad, g in zip(gradients, seeds)),
        "gradient equals central finite differences": np.allclose(gradients[0], finite_differences(loss, X), rtol=1e-6),
        "registration: defvjp filled primitive_vjps[logsumexp] at import, before any call":
            not REGISTERED_BEFORE and MAKER_RUNS_AT_REGISTRATION == 0 and primitive_vjps[logsumexp] is REGISTERED,
        "registration: the registered rule wraps our maker (defvjp's vjps_dict)": wrapped.get(0) is logsumexp_vjp_maker,
        "capture: the maker ran once per node creation":
            len(maker_runs) == sum(e.primitive == "logsumexp" for e in rec.of_kind("node")) == 1,
        "capture: the maker ran inside VJPNode.__init__ (its event is appended when __init__ returns)":
            maker_runs[0][0] == at[id(node)],
        "capture: the maker ran before the backward pass, with this call's ans":
            maker_runs[0][0] < min(starts.values()) and maker_runs[0][1] == plain(node.value),
        "application: the closure ran once per backward query": len(closure_runs) == len(rec.queries) == len(seeds),
        "application: each closure run lies inside its query, at that query's vjp event":
            closure_runs == [at[id(e)] for e in vjps]
            and all(starts[e.query] < at[id(e)] < ends[e.query] for e in vjps),
        "application: the vjp event's ingrads are outgrad * softmax(x)":
            all(np.allclose(e.ingrads[0], plain(e.outgrad) * softmax(X), rtol=1e-14) for e in vjps),
        "every report check passes": all(c.passed for c in call.checks),
    }
    report = (render(call, title="Experiment: defvjp staging (a custom logsumexp)", intro=INTRO)
              + moments_section(rec, node, maker_runs, closure_runs, vjps, at)
              + timeline_section(rec, maker_runs, closure_runs) + questions(node, maker_runs, closure_runs, vjps))
    return Outcome(lines, checks, report, call)


def moments_section(rec, node, maker_runs, closure_runs, vjps, at):
    rows = [("1. registration", "import of this module: `defvjp(logsumexp, maker)`",
             f"`primitive_vjps[logsumexp]` = `{REGISTERED.__qualname__}`; maker runs so far: "
             f"{MAKER_RUNS_AT_REGISTRATION}"),
            ("2. capture", f"forward pass, inside `VJPNode.__init__` of {node.label}",
             f"maker ran when {maker_runs[0][0]} events were recorded, so just before the node event "
             f"(index {at[id(node)]}), which is appended when `__init__` returns; ans = {fmt(maker_runs[0][1])}")]
    rows += [(f"3. application, query {e.query}", "`ingrads = node.vjp(outgrad[0])`",
              f"closure ran at event {n}: outgrad {fmt(e.outgrad)} -> ingrads {fmt(e.ingrads)}")
             for e, n in zip(vjps, closure_runs)]
    return "\n".join([
        "", "## The three moments of `defvjp`", "",
        table(["moment", "where", "recorded evidence"], rows), ""])


def timeline_section(rec, maker_runs, closure_runs):
    marks = {maker_runs[0][0]: "maker runs (then the node event is appended)"}
    marks.update({n: "closure runs (then the vjp event is appended)" for n in closure_runs})
    rows = [(i, e.kind, "-" if e.query is None else e.query,
             getattr(e, "label", None) or getattr(e, "node", None) or getattr(e, "end", None) or "-",
             marks.get(i, "")) for i, e in enumerate(rec.events)]
    return "\n".join([
        "", "## Timeline: `make_vjp` once, then `vjp(1)` and `vjp(2)`", "",
        "Event index = number of events recorded before it; a mark says the maker or the closure "
        "ran just before that event was appended.", "",
        table(["event", "kind", "query", "node", "maker / closure"], rows), ""])


def questions(node, maker_runs, closure_runs, vjps):
    return f"""
## Self-test questions

1. **Does `defvjp` differentiate anything when it is called?** No: at registration the maker had run
   {MAKER_RUNS_AT_REGISTRATION} times; `defvjp` only stored `{REGISTERED.__qualname__}`, a function of
   `(argnums, ans, args, kwargs)` that will call the maker once a node exists.
2. **Where do the closure's `ans` and `x` come from?** From the forward pass: the maker ran once
   ({len(maker_runs)} run), while `{node.label}` was built, with `ans = {fmt(maker_runs[0][1])}`. Both
   backward queries reused that closure ({len(closure_runs)} closure runs) without calling the maker again.
3. **Why is the second query's result exactly twice the first?** The closure is linear in `g`: the
   seeds `{fmt(vjps[0].outgrad)}` and `{fmt(vjps[1].outgrad)}` gave `{fmt(vjps[0].ingrads)}` and
   `{fmt(vjps[1].ingrads)}`; the captured `exp(x - ans)` (the softmax) did not change between queries.
"""


if __name__ == "__main__":
    sys.exit(main(run, __file__))

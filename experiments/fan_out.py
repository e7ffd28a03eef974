"""Fan-out: a shared subexpression s = sin(x) consumed by three different operations.

In f(x) = s * (exp(x) * cos(s)) + tanh(s), the node s feeds multiply, cos and tanh. autograd's
toposort first counts s's children (one per parent edge: 3), and yields s only when the count
reaches zero, so s is visited after its three add_outgrads. On this graph autograd's order and the
lecture's depth-first reverse_topo_order differ (exp before or after s); both are valid.
"""

import sys

import autograd.numpy as anp
import numpy as np

from adtrace.tools.experiment import Outcome, main, repo_root
from adtrace.reference import is_reverse_topological
from adtrace.report import render
from adtrace.report.format import fmt
from adtrace.report.tables import table
from adtrace.compare.traced_call import trace_call

INTRO = """\
**What this shows.** In `f(x) = s * (exp(x) * cos(s)) + tanh(s)` with `s = sin(x)`, the node `s`
feeds three operations: `multiply`, `cos` and `tanh`. Before yielding anything, autograd's
`toposort` walks the graph and counts each parent edge: `s` has 3 children. It yields `s` only when
the last of them has been visited, so `outgrads.pop(s)` returns the sum of all three contributions.
On this graph autograd's order and the lecture's depth-first `reverse_topo_order` differ: both are
valid reverse topological orders."""


def fan_out(x):
    s = anp.sin(x)
    return s * (anp.exp(x) * anp.cos(s)) + anp.tanh(s)


def closed_form(x):
    """df/dx by hand: s' = cos x; d[s e^x cos s] = e^x (s' cos s + s cos s - s sin s s'); d tanh s = s'/cosh^2 s."""
    s, ds = np.sin(x), np.cos(x)
    return np.exp(x) * (ds * np.cos(s) + s * np.cos(s) - s * np.sin(s) * ds) + ds / np.cosh(s) ** 2


def child_counts(graph, end):
    """autograd's toposort, first loop: one count per parent edge reaching a node (the end counts 1)."""
    counts, stack = {}, [end]
    while stack:
        label = stack.pop()
        if label in counts:
            counts[label] += 1
        else:
            counts[label] = 1
            stack.extend(graph[label])
    return counts


def run():
    x = 0.7
    call = trace_call(fan_out, (x,), relative_to=repo_root(__file__))
    rec = call.recording
    events = rec.query_events(1)
    end = events[0].end
    graph = rec.graph(end)
    s = next(e.label for e in rec.of_kind("node") if e.primitive == "sin")
    counts = child_counts(graph, end)
    consumers = [label for label, parents in graph.items() if s in parents]
    arrivals = [i for i, e in enumerate(events) if e.kind == "add_outgrads" and e.parent == s]
    visit = next(i for i, e in enumerate(events) if e.kind == "toposort" and e.node == s)
    popped = next(e.outgrad for e in events if e.kind == "vjp" and e.node == s)
    contributions = [float(events[i].contribution) for i in arrivals]
    autograd_order, lecture_order = rec.visit_order(1), list(call.reference.order)
    lines = [f"child counts: {' '.join(f'{k}={v}' for k, v in counts.items())}",
             f"{s}: contributions at events {arrivals}, visited at event {visit}, "
             f"popped {fmt(popped)} = {' + '.join(fmt(c) for c in contributions)}",
             f"autograd toposort: {' '.join(autograd_order)}",
             f"lecture DFS:       {' '.join(lecture_order)}",
             f"gradient: {fmt(call.gradient)} (closed form {fmt(closed_form(x))})"]
    checks = {
        "s is consumed by three different operations": len({rec.nodes[c].primitive for c in consumers}) == 3,
        "toposort's child count of s equals its parent edges and its consumer nodes":
            counts[s] == sum(p == s for parents in graph.values() for p in parents) == len(consumers),
        "s receives one add_outgrads per child": len(arrivals) == counts[s],
        "s is visited only after its three contributions arrived": all(i < visit for i in arrivals),
        "s's popped cotangent is the sum of its contributions": bool(np.isclose(float(popped), sum(contributions))),
        "every node is visited after all its contributions": all_arrived_before_visit(events),
        "autograd's toposort and the lecture's DFS order differ": autograd_order != lecture_order,
        "autograd's order is reverse topological": is_reverse_topological(autograd_order, graph),
        "the lecture's order is reverse topological": is_reverse_topological(lecture_order, call.reference.parents),
        "gradient equals the closed form (rtol 1e-12)":
            bool(np.isclose(call.gradient, closed_form(x), rtol=1e-12, atol=0)),
        "the reference engine's gradient equals autograd's (rtol 1e-12)":
            bool(np.isclose(call.reference.adjoint, call.gradient, rtol=1e-12, atol=0)),
        "every report check passes": all(c.passed for c in call.checks),
    }
    report = (render(call, title="Experiment: fan-out (s = sin(x) feeds three operations)", intro=INTRO)
              + fan_out_sections(rec, counts, s, arrivals, visit, autograd_order, lecture_order)
              + questions(call, s, counts, contributions, popped))
    return Outcome(lines, checks, report, call)


def all_arrived_before_visit(events):
    visits = {e.node: i for i, e in enumerate(events) if e.kind == "toposort"}
    return all(i < visits[e.parent] for i, e in enumerate(events) if e.kind == "add_outgrads")


def fan_out_sections(rec, counts, s, arrivals, visit, autograd_order, lecture_order):
    events = rec.query_events(1)
    count_rows = [[label, getattr(rec.nodes[label], "primitive", "(input)"), n] for label, n in counts.items()]
    arrival_rows = [[i, events[i].node, fmt(events[i].contribution), fmt(events[i].previous), fmt(events[i].result)]
                    for i in arrivals]
    arrival_rows.append([visit, f"toposort yields {s}", "-", "-", "-"])
    order_rows = [[i, a, b, "same" if a == b else "differs"]
                  for i, (a, b) in enumerate(zip(autograd_order, lecture_order))]
    return f"""
## Child counts (toposort's first loop)

`toposort(end_node)` pops nodes from a stack and adds 1 to a node's count each time a parent edge
reaches it (the end node counts itself once). Computed here from the recorded graph the same way.

{table(["node", "primitive", "child count"], count_rows)}

## Why `{s}` waits for all three contributions

Events of query 1 (index into `rec.query_events(1)`): the three `add_outgrads` into `{s}` and the
`toposort` event that yields it.

{table(["event", "from node", "contribution", "previous", "accumulated"], arrival_rows)}

## Two valid visit orders

{table(["position", "autograd toposort", "lecture reverse_topo_order (DFS)", "comparison"], order_rows)}
"""


def questions(call, s, counts, contributions, popped):
    rec = call.recording
    exp = next(e.label for e in rec.of_kind("node") if e.primitive == "exp")
    order, dfs = rec.visit_order(1), list(call.reference.order)
    return f"""
## Self-test questions

1. **How does `toposort` know that `{s}` has three children?** Its first loop pushes every node's
   parents and counts arrivals: `{s}` was reached {counts[s]} times, once per parent edge
   (from {", ".join(label for label, parents in rec.graph().items() if s in parents)}).
2. **What would go wrong if `{s}` were visited after its first contribution?** `outgrads.pop` would
   return `{fmt(contributions[0])}` instead of `{fmt(popped)}`, and the later contributions
   {" and ".join(fmt(c) for c in contributions[1:])} would start a new entry that is never visited.
3. **autograd visits `{s}` at position {order.index(s)} and `{exp}` at {order.index(exp)}; the
   lecture's DFS visits them at {dfs.index(s)} and {dfs.index(exp)}. Why are both right?** Neither
   depends on the other (both are parents of different nodes, and `{exp}` is not an input of `{s}`), so
   any order with every node before its inputs works. `toposort` yields `{s}` as soon as its count
   reaches zero; the depth-first post-order appends `{s}` the first time a path reaches it, before
   it explores the branch holding `{exp}`, so the reversed list puts `{s}` after `{exp}`.
"""


if __name__ == "__main__":
    sys.exit(main(run, __file__))

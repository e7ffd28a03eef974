"""A wrong VJP rule: which node does the error show up at?

`double(x) = 2x` is a custom primitive whose autograd rule is deliberately wrong
(`g -> 3g`), used inside `h(x) = sin(double(x)) * x`. autograd's `check_grads` fails but names only
`h`. The reference engine, given a correct own rule for `double`, is aligned with autograd node by
node: both agree until the node that receives `double`'s contribution (its input), where the
totals part ways by exactly (3 - 2) * x * cos(2x), the error the wrong factor predicts.
"""

import inspect
import re
import sys

import autograd.numpy as anp
import numpy as np
from autograd.extend import defvjp, primitive
from autograd.test_util import check_grads

import adtrace.reference as ref
from adtrace.compare.align import first_divergence
from adtrace.tools.experiment import Outcome, main, repo_root
from adtrace.report import render
from adtrace.report.format import fmt
from adtrace.report.tables import table
from adtrace.checker import check_call
from adtrace.compare.traced_call import trace_call
from adtrace.recording.values import plain

INTRO = """\
**What this shows.** `double(x) = 2x` is registered with a wrong VJP rule, `g -> 3g`, and used in
`h(x) = sin(double(x)) * x`. autograd's own `check_grads` fails, but its message names only the
function it was given, `h`. The reference engine gets a correct own rule for `double` and is
aligned with autograd's `outgrads` node by node: the first node whose totals differ is the node
that receives `double`'s contribution, and the difference is exactly what the wrong factor
predicts, `(3 - 2) * x * cos(2x)`. adtrace's per-node checker (`adtrace.check`, the "Checks per
node" section) tests every node's local rule alone and names `double` itself, its argument and the
line of `h` that called it."""

X = 0.7
WRONG, RIGHT = 3.0, 2.0


@primitive
def double(x):
    return RIGHT * x


defvjp(double, lambda ans, x: lambda g: WRONG * g)  # deliberately wrong: d(2x)/dx is 2


def h(x):
    return anp.sin(double(x)) * x


def correct_gradient(x):
    return np.sin(2 * x) + 2 * x * np.cos(2 * x)


def predicted_error(x):
    """The wrong factor scales double's contribution x*cos(2x) * 2 to x*cos(2x) * 3."""
    return (WRONG - RIGHT) * x * np.cos(2 * x)


def check_grads_message(x):
    """autograd's verdict, with a fixed random state (check_grads draws random directions)."""
    state = np.random.get_state()
    np.random.seed(0)
    try:
        check_grads(h, modes=["rev"], order=1)(x)
        return None
    except AssertionError as error:  # its first three lines; under pytest, which rewrites asserts in
        # autograd/test_util.py (it matches test_*.py), they come indented and followed by an explanation
        return "\n".join(line.strip() for line in str(error).splitlines()[:3])
    finally:
        np.random.set_state(state)


def trace_with_correct_reference(x):
    """trace_call with the reference engine's own (correct) rule for double, restored afterwards."""
    had, previous = double in ref.primitive_vjps, ref.primitive_vjps.get(double)
    ref.defvjp(double, lambda ans, x: lambda g: RIGHT * g)
    try:
        folder = repo_root(__file__)
        return check_call(trace_call(h, (x,), capture="full", relative_to=folder), h, relative_to=folder)
    finally:
        if had:
            ref.primitive_vjps[double] = previous
        else:
            del ref.primitive_vjps[double]


def run():
    message = check_grads_message(X)
    call = trace_with_correct_reference(X)
    rec = call.recording
    doubled = next(e for e in rec.of_kind("node") if e.primitive == "double")
    divergent = first_divergence(call.alignment)
    rows = {r.label: r for r in call.alignment}
    before = call.alignment[:[r.label for r in call.alignment].index(divergent)]
    autograd_grad, reference_grad = float(plain(call.gradient)), float(call.reference.adjoint)
    eps = 1e-6
    numeric = (h(X + eps) - h(X - eps)) / (2 * eps)
    failed = sorted(c.name for c in call.checks if not c.passed)
    named = re.findall(r"check of (\S+) failed", message or "")
    verdict = call.node_checks.first_failure
    call_line = next(i for i, line in enumerate(inspect.getsource(h).splitlines()) if "double(x)" in line)
    lines = [f"autograd {fmt(autograd_grad)}, reference {fmt(reference_grad)}, finite differences {fmt(numeric)}",
             f"difference {fmt(autograd_grad - reference_grad)}, predicted (3-2)*x*cos(2x) = {fmt(predicted_error(X))}",
             f"first divergent node: {divergent}; check_grads names: {', '.join(named)}",
             f"per-node checker: {verdict.node} argument {verdict.argnum} at {verdict.site}"]
    checks = {
        "check_grads fails and its message names only h": named == [h.__name__] and "double" not in message,
        "first divergent node is the input of double (the node its wrong contribution goes to)":
            divergent == doubled.parents[0],
        "every node visited before it is exact (double's own cotangent is still right)":
            bool(before) and all(r.status == "exact" for r in before) and doubled.label in {r.label for r in before},
        "autograd minus finite differences is the predicted error (3-2)*x*cos(2x)":
            abs(autograd_grad - numeric - predicted_error(X)) < 1e-8,
        "autograd minus the reference engine is the predicted error":
            np.isclose(autograd_grad - reference_grad, predicted_error(X), rtol=1e-12),
        "the reference gradient equals the closed form and finite differences":
            np.isclose(reference_grad, correct_gradient(X), rtol=1e-14) and abs(reference_grad - numeric) < 1e-8,
        "the divergent node's difference is |predicted error|":
            np.isclose(rows[divergent].difference, abs(predicted_error(X)), rtol=1e-12),
        "the report's failing checks are exactly the engines', the finite-difference and the per-node ones":
            failed == ["central finite differences", "per-node local rules", "reference engine vs autograd, per node"],
        "the per-node checker names double, argument 0, at the line of h that calls it":
            (verdict.node, verdict.argnum) == (doubled.label, 0)
            and verdict.site.endswith(f":{inspect.getsourcelines(h)[1] + call_line}"),
        "its analytic and numeric VJPs differ by the wrong factor 3/2":
            np.isclose(verdict.analytic / verdict.numeric, WRONG / RIGHT, rtol=1e-6),
        "the reference engine's rule table is restored": double not in ref.primitive_vjps,
    }
    report = (render(call, title="Experiment: a wrong VJP rule (double(x) = 2x, rule g -> 3g)", intro=INTRO)
              + verdict_section(message) + contributions_section(call, doubled, divergent)
              + error_section(autograd_grad, reference_grad, numeric) + questions(call, doubled, divergent, message))
    return Outcome(lines, checks, report, call)


def verdict_section(message):
    return "\n".join(["", "## autograd's verdict: `check_grads(h, modes=[\"rev\"], order=1)`", "",
                      "It compares one random VJP with a numeric JVP of the whole function, so it can "
                      "only say that `h` is wrong:", "", "```", message, "```", ""])


def contributions_section(call, doubled, divergent):
    arrived = [e for e in call.recording.query_events(call.recording.queries[-1])
               if e.kind == "add_outgrads" and e.parent == divergent]
    sent = {s.label: c.value for s in call.reference.steps for c in s.contributions if c.parent == divergent}
    rows = [(e.node, call.recording.nodes[e.node].primitive, fmt(e.contribution), fmt(sent.get(e.node)))
            for e in arrived]
    return "\n".join([
        "", f"## Where the engines part ways: what arrives at `{divergent}`", "",
        f"`{doubled.label}` pops the same cotangent in both engines; its local VJP then hands "
        f"`{divergent}` a contribution {fmt(WRONG / RIGHT)} times too large.", "",
        table(["from node", "primitive", "contribution (autograd)", "partial adjoint (reference)"], rows), ""])


def error_section(autograd_grad, reference_grad, numeric):
    rows = [("autograd gradient (wrong rule)", fmt(autograd_grad)),
            ("reference engine (correct own rule)", fmt(reference_grad)),
            ("closed form sin(2x) + 2x cos(2x)", fmt(correct_gradient(X))),
            ("central finite differences", fmt(numeric)),
            ("predicted error (3 - 2) x cos(2x)", fmt(predicted_error(X))),
            ("autograd - reference", fmt(autograd_grad - reference_grad)),
            ("autograd - finite differences", fmt(autograd_grad - numeric))]
    return "\n".join(["", f"## The size of the error at x = {fmt(X)}", "", table(["quantity", "value"], rows), ""])


def questions(call, doubled, divergent, message):
    row = next(r for r in call.alignment if r.label == doubled.label)
    bad = next(r for r in call.alignment if r.label == divergent)
    return f"""
## Self-test questions

1. **Why can `check_grads` not name `double`?** It only sees `h`: one analytic VJP against one numeric
   JVP of the whole function (`{message.splitlines()[0]}`). Which local rule broke is invisible
   at that level.
2. **Why is `{doubled.label}` itself not the divergent node?** A wrong rule corrupts what a node
   *sends*, not what it receives: `{doubled.label}` popped `{fmt(row.popped)}` in autograd against
   `{fmt(row.v_i_bar)}` in the reference ({row.status}); the error first appears in the total of its input
   `{divergent}`: `{fmt(bad.popped)}` against `{fmt(bad.v_i_bar)}`.
3. **How large must the error be?** The rule multiplies `double`'s incoming cotangent
   `{fmt(row.popped)}` (= x cos 2x) by 3 instead of 2, so the excess is `{fmt(row.popped)}` x (3 - 2) =
   `{fmt(predicted_error(X))}`, the recorded difference `{bad.difference:.6g}` at `{divergent}`.
"""


if __name__ == "__main__":
    sys.exit(main(run, __file__))

"""Why a gradient is NaN: the `where` trap and its double-`where` fix, side by side, and the other
boundaries, each explained by `adtrace explain` at its first non-finite value.

`np.where(x > 0, np.log(x), 0.0)` has a finite value at x = 0 and a NaN gradient there: `where`'s VJP
sends a 0 into the branch it did not select, and `log`'s VJP multiplies that 0 by 1/0 = inf. The fix
takes the log of a safe value (`np.where(x > 0, x, 1.0)`): the branch then has a finite derivative,
and 0 * finite is 0. `norm(x)**2` at 0 (the norm's VJP divides by the norm) and `sqrt` of a negative
(NaN already in the forward pass) are the same question with other answers.
"""

import inspect
import sys

import autograd.numpy as np
from autograd import grad

import adtrace
from adtrace.compare.traced_call import trace_call
from adtrace.explain import render_explanations
from adtrace.report.format import code, fmt
from adtrace.report.tables import table
from adtrace.tools.experiment import Outcome, main, repo_root

INTRO = """\
**What this shows.** A NaN gradient is made by one VJP, usually far from where it is seen.
`adtrace explain` reads the recorded backward pass in the order `backward_pass` ran it and names the
first `vjp` that turned a finite `outgrad` into a non-finite contribution on the element's own paths,
with the numbers there (the `outgrad`, the node's inputs and its local derivative) and the user's
line; when a forward value was already NaN, the node that made it from finite inputs. The `where`
trap: `where`'s VJP gives the unselected branch an `outgrad` of 0, and `log`'s VJP at 0 makes
`0 * inf = nan`. The double-`where` fix feeds `log` a safe value, so its derivative is finite and the
gradient is the 0 `where` meant: the explanation then says zero, cut by `where`."""

X = np.array([2.0, 0.0, 0.5])


def trap(x):
    logs = np.where(x > 0, np.log(x), 0.0)  # log(0) = -inf is not selected, but its VJP still runs
    return np.sum(logs)


def fix(x):
    safe = np.where(x > 0, x, 1.0)  # the branch never sees 0
    logs = np.where(x > 0, np.log(safe), 0.0)
    return np.sum(logs)


def norm_squared(x):
    r = np.linalg.norm(x)  # its VJP is g * x / r: 0 / 0 at x = 0
    return r ** 2


def sum_of_squares(x):
    return np.sum(x ** 2)


def sqrt_of_shifted(x):
    y = np.sqrt(x - 1.0)  # x < 1: NaN in the forward pass already
    return np.sum(np.sin(y))


def line_of(f, text):
    """``experiments/why_nan.py:N``: the line of ``f``'s source holding ``text``."""
    lines, first = inspect.getsourcelines(f)
    at = next(i for i, line in enumerate(lines) if text in line)
    return f"experiments/why_nan.py:{first + at}"


def run():
    root = repo_root(__file__)
    explained = {f.__name__: adtrace.explain(f, at, wrt=["x[1]"], relative_to=root)[0]
                 for f, at in ((trap, X), (fix, X), (norm_squared, np.zeros(2)), (sum_of_squares, np.zeros(2)),
                               (sqrt_of_shifted, np.array([2.0, 0.5])))}
    with np.errstate(all="ignore"):
        gradients = {"trap": grad(trap)(X), "fix": grad(fix)(X)}
    lines = [f"{name}: x[1] gradient {fmt(e.gradient)}, {e.verdict}, "
             f"{', '.join(f'{c.node} {c.reason}' for c in e.causes) or 'no cause'}" for name, e in explained.items()]
    trap_cause, trap_forward = explained["trap"].causes
    checks = {
        "autograd's gradient of the trap is NaN at x[1] = 0 and finite elsewhere":
            np.isnan(gradients["trap"][1]) and np.isfinite(gradients["trap"][[0, 2]]).all(),
        "explain reads the same gradient and says not finite": explained["trap"].verdict == "nonfinite"
            and np.isnan(explained["trap"].gradient),
        "its first cause is log's VJP in the unselected branch, at the trap's line": (
            trap_cause.primitive, trap_cause.reason, trap_cause.line) == (
            "log", "where-unselected-branch", line_of(trap, "np.log(x)")),
        "the numbers there are the trap's: outgrad 0, input 0, local derivative inf, ingrad NaN":
            trap_cause.values["outgrad"] == 0 and trap_cause.values["input[0]"] == 0
            and trap_cause.values["derivative"] == np.inf and np.isnan(trap_cause.values["ingrad"]),
        "the forward origin is log at 0: log-of-zero, -inf not selected": (
            trap_forward.forward, trap_forward.reason) == (True, "log-of-zero"),
        "the fix's gradient is the trap's wherever that is finite, and 0 at x[1]":
            np.array_equal(gradients["fix"][[0, 2]], gradients["trap"][[0, 2]]) and gradients["fix"][1] == 0,
        "the fix's gradient is 1/x where x > 0 (the derivative of log)": np.allclose(
            gradients["fix"][[0, 2]], 1 / X[[0, 2]], rtol=1e-15),
        "explain says the fix's x[1] is zero, cut by the safe value's where (it selected 1.0 there)":
            explained["fix"].verdict == "zero" and [(c.reason, c.name) for c in explained["fix"].causes] == [
                ("where-unselected-branch", "safe")],
        "norm(x)**2 at 0 is the norm's VJP (norm-at-zero), its outgrad 0 (2r = 0)": (
            explained["norm_squared"].causes[0].reason, explained["norm_squared"].causes[0].values["outgrad"]) == (
            "norm-at-zero", 0.0),
        "sum(x**2) at 0 has the gradient 2x = 0, nothing to explain but its contributions":
            explained["sum_of_squares"].verdict == "zero" and explained["sum_of_squares"].gradient == 0,
        "sqrt of a negative is named in the forward pass as a domain error, not an overflow": [
            (c.primitive, c.reason) for c in explained["sqrt_of_shifted"].causes if c.forward] == [
            ("sqrt", "sqrt-of-negative")],
    }
    with np.errstate(all="ignore"):
        call = trace_call(trap, (X,), relative_to=root)
    report = "\n".join([f"# Experiment: why is this gradient NaN?\n\n{INTRO}\n", side_by_side(gradients, explained),
                        sections(explained), questions(explained)])
    return Outcome(lines, checks, report, call)


def side_by_side(gradients, explained):
    rows = [(i, fmt(X[i]), fmt(gradients["trap"][i]), fmt(gradients["fix"][i])) for i in range(X.size)]
    cause = lambda e: "; ".join(f"{code(c.reason)} at {c.node}" for c in e.causes) or "-"  # noqa: E731
    return f"""## The trap and the fix, side by side

```python
{inspect.getsource(trap)}
{inspect.getsource(fix)}```

{table(["element", "x", "gradient (trap)", "gradient (fix)"], rows)}

At `x[1]` the trap's gradient is {fmt(explained["trap"].gradient)} ({cause(explained["trap"])}) and the fix's
{fmt(explained["fix"].gradient)} ({cause(explained["fix"])}).
"""


def sections(explained):
    titles = {"trap": "The trap", "fix": "The double where fix", "norm_squared": "The norm squared at 0",
              "sum_of_squares": "The sum of squares at 0: the same function, a gradient of 0",
              "sqrt_of_shifted": "The square root of x - 1 at x = 0.5: NaN forward"}
    parts = []
    for name, e in explained.items():
        rendered = render_explanations([e], title=titles[name])
        parts.append("\n".join("#" + line if line.startswith("#") else line for line in rendered.splitlines()))
    return "\n\n".join(parts) + "\n"


def questions(explained):
    trap_cause = explained["trap"].causes[0]
    with np.errstate(all="ignore"):
        value = trap(X)
    return f"""## Self-test questions

1. **The trap's value at x = 0 is finite ({fmt(value)} in total): where does the NaN come from?** From
   `{trap_cause.node}`'s VJP, `g / x` with `g` = {fmt(trap_cause.values["outgrad"])} (the `where` sent 0 to the
   branch it did not select) and `x` = {fmt(trap_cause.values["input[0]"])}: 0 times a derivative of
   {fmt(trap_cause.values["derivative"])}.
2. **Why does the fix's `where` not make the same NaN?** Its `log` sees `safe` = 1 at `x[1]`, a
   derivative of 1: the unselected branch gets 0 * 1 = 0, and the explanation says zero, cut by
   {explained["fix"].causes[0].node}.
3. **`norm(x)**2` and `sum(x**2)` are the same function: why does one give NaN at 0?** The norm's VJP
   divides by the norm: `{explained["norm_squared"].causes[0].node}` gets an outgrad of
   {fmt(explained["norm_squared"].causes[0].values["outgrad"])} (2r) and makes 0 * 0 / 0; `x**2`'s derivative
   2x is 0 with no division.
"""


if __name__ == "__main__":
    sys.exit(main(run, __file__))

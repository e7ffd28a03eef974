"""Why a gradient is zero: a dead relu unit, a saturated clip, a value that left autograd's trace and
an output that does not depend on the input, each explained by `adtrace explain`.

A zero gradient is one of two things. Either every path from the input element to the output is cut
by a local derivative of 0 (a relu that is off, a clip at its bound): the numbers do not move, and
central differences agree that the gradient is 0. Or the path was never recorded: a value taken out of
its box (`._value`, a plain numpy call) or a function of the input autograd did not trace; then the
output does move with the input while autograd says 0, and only running the function again shows it.
"""

import sys

import autograd.numpy as np
import numpy as onp
from autograd import grad

import adtrace
from adtrace.compare.traced_call import trace_call
from adtrace.explain import render_explanations
from adtrace.report.format import code, fmt
from adtrace.report.tables import table
from adtrace.tools.experiment import Outcome, main, repo_root

INTRO = """\
**What this shows.** `adtrace explain` follows the input element forward through every recorded node,
element by element (each node's local Jacobian is its own VJP rule re-run on unit cotangents), and
names the node where every path of the element met a local derivative of 0, with the reason, the
values there, the user's line and variable, and the share of the element's paths it cut. A dead
relu unit of an MLP (its pre-activation negative for every example) cuts 100% of its weights' paths.
When no recorded path reaches the output at all, explain runs the function again with the element
moved: if the output moves, the value `left-trace` (a gradient of 0 that is wrong); if not, it is
`independent` (a gradient of 0 that is right). Central differences tell the two apart the same way."""

X = np.array([[1.0, 0.5], [0.2, -0.3], [-1.0, 1.0]])  # three examples, two features
PARAMS = {"W1": np.array([[1.0, -1.0], [0.5, -2.0], [-1.0, 1.0]]), "b1": np.array([0.0, -5.0, 0.1]),
          "W2": np.array([1.0, 2.0, -1.0])}  # unit 1's bias -5 keeps it off for every example


def mlp(params):
    h = np.maximum(0.0, X @ params["W1"].T + params["b1"])
    out = h @ params["W2"]
    return np.mean(out ** 2)


def clipped(x):
    y = np.clip(x, -1.0, 1.0)
    return np.sum(y ** 2)


def left_trace(x):
    y = np.sin(x)
    plain = getattr(y, "_value", y)  # y's value leaves autograd's trace (a plain array when called untraced)
    return x[0] * 1.0 + onp.sum(plain)


def not_taken(x):
    return x[0] * 2.0  # x[1] is not read


CASES = {  # name -> (function, argument, element, the reason expected)
    "dead relu unit": (mlp, PARAMS, "params['W1'][1, 0]", "relu-off"),
    "saturated clip": (clipped, np.array([0.5, 4.0]), "x[1]", "clip-saturated"),
    "left the trace": (left_trace, np.array([1.0, 2.0]), "x[1]", "left-trace"),
    "not read": (not_taken, np.array([1.0, 2.0]), "x[1]", "independent"),
}


def central_difference(f, arg, selector, h=1e-6):
    """d f / d arg[selector] by central differences, in plain numpy on copies."""
    from adtrace.explain.elements import parse_selector

    element = parse_selector(selector)[1]

    def moved(step):
        copy = {k: onp.array(v) for k, v in arg.items()} if isinstance(arg, dict) else onp.array(arg)
        leaf = copy
        for key in element.keys:
            leaf = leaf[key]
        leaf[element.index] += step
        return float(f(copy))
    return (moved(h) - moved(-h)) / (2 * h)


def run():
    root = repo_root(__file__)
    explained = {name: adtrace.explain(f, arg, wrt=[selector], relative_to=root)[0]
                 for name, (f, arg, selector, _) in CASES.items()}
    gradients = {name: _component(grad(f)(arg), selector) for name, (f, arg, selector, _) in CASES.items()}
    differences = {name: central_difference(f, arg, selector) for name, (f, arg, selector, _) in CASES.items()}
    lines = [f"{name}: {e.selector} gradient {fmt(e.gradient)}, central difference {fmt(differences[name])}, "
             f"{', '.join(f'{c.node} {c.reason}' for c in e.causes)}" for name, e in explained.items()]
    dead = explained["dead relu unit"].causes
    checks = {
        "autograd's gradient is 0 for each element, and explain reads the same 0":
            all(gradients[n] == 0 and explained[n].gradient == 0 and explained[n].verdict == "zero" for n in CASES),
        "each is explained by its expected reason, alone":
            all([c.reason for c in explained[n].causes] == [CASES[n][3]] for n in CASES),
        "the dead unit is cut by the relu's maximum, 100% of its paths, at h's line":
            (dead[0].primitive, dead[0].fraction, dead[0].name) == ("maximum", 1.0, "h"),
        "its pre-activation is negative for every example (the unit is dead, not just off once)":
            bool((X @ PARAMS["W1"][1] + PARAMS["b1"][1] < 0).all()),
        "a cut by a zero derivative: central differences are 0 too": all(
            differences[n] == 0 for n in ("dead relu unit", "saturated clip", "not read")),
        "a value that left the trace: the output moves (central difference cos(2)), autograd says 0":
            abs(differences["left the trace"] - onp.cos(2.0)) < 1e-8,
    }
    call = trace_call(mlp, (PARAMS,), relative_to=root)
    report = "\n".join([f"# Experiment: why is this gradient zero?\n\n{INTRO}\n", overview(explained, differences),
                        sections(explained), questions(explained, differences)])
    return Outcome(lines, checks, report, call)


def _component(gradient, selector):
    from adtrace.explain.elements import component, parse_selector

    return component(gradient, parse_selector(selector)[1])


def overview(explained, differences):
    rows = [(name, code(e.selector), fmt(e.gradient), fmt(differences[name]),
             "; ".join(f"{code(c.reason)} at {c.node}" for c in e.causes)) for name, e in explained.items()]
    return f"""## Four zeros

{table(["case", "element", "gradient (autograd)", "central difference", "cause"], rows)}
"""


def sections(explained):
    titles = {"dead relu unit": "A dead relu unit", "saturated clip": "A saturated clip",
              "left the trace": "A value that left the trace", "not read": "An element not read"}
    parts = []
    for name, e in explained.items():
        rendered = render_explanations([e], title=titles[name])
        parts.append("\n".join("#" + line if line.startswith("#") else line for line in rendered.splitlines()))
    return "\n\n".join(parts) + "\n"


def questions(explained, differences):
    dead = explained["dead relu unit"].causes[0]
    return f"""## Self-test questions

1. **Which weights of the MLP get no gradient, and why?** Every weight into unit 1 (and its bias): its
   pre-activation is negative for all three examples, so `{dead.node}` (`h`'s relu) passes 0 back for
   each; it cuts {dead.fraction:.0%} of the paths of `{explained["dead relu unit"].selector}`.
2. **Two gradients of 0, one right and one wrong: how does explain tell `left-trace` from
   `independent`?** It runs the function again with the element moved: the output moved for
   `left_trace` (central difference {fmt(differences["left the trace"])}) and not for `not_taken`
   ({fmt(differences["not read"])}).
3. **Why does a saturated clip give 0?** At 4, `clip` returns its bound 1: a constant there, its local
   derivative is 0 (`{explained["saturated clip"].causes[0].node}`, `clip-saturated`).
"""


if __name__ == "__main__":
    sys.exit(main(run, __file__))

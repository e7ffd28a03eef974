"""Why a micrograd gradient is zero: a dead ReLU unit of an MLP, a weight reading that dead unit, a
value whose `.data` left the engine and an input nothing read, each explained by `adtrace explain
--engine micrograd`.

micrograd has no graph to inspect after `backward()`: only `.grad` on each value. adtrace's recording
of the pass holds every write into a `.grad` with its contribution, each value's op and data: enough
to say where every path from a leaf to the loss was cut, and by what.
"""

import random
import sys

from micrograd.engine import Value
from micrograd.nn import MLP

import adtrace
from adtrace.explain import render_explanations
from adtrace.recording.events import NodeCreated
from adtrace.report.format import code, fmt
from adtrace.report.tables import table
from adtrace.tools.experiment import Outcome, main, repo_root

INTRO = """\
**What this shows.** `adtrace explain` reads micrograd's recorded pass, not only autograd's: per leaf,
the writes its `.grad` received (they add up to it bit for bit) and, for a gradient of 0, the node
where every path from the leaf to the loss met a local derivative of 0. A 2-3-1 micrograd MLP whose
second hidden unit has a bias of -5 is dead at this input: its ReLU is off, so its two weights and its
bias get 0 (`relu-off`, 100% of their paths), and the output weight that reads the dead unit gets 0
too, a product with a factor 0 (`zero-derivative`). Beside it, two zeros of another kind: a value
remade from another's `.data` (`Value(a.data)`) leaves the engine, and the gradient of 0 is wrong
(`left-trace`: moving `a` moves the output); an input nothing reads gets a right 0 (`independent`).
Central differences, through micrograd itself, tell the two kinds apart."""

X = (0.5, -1.0)


def mlp_model():
    random.seed(0)
    model = MLP(2, [3, 1])
    model.layers[0].neurons[1].b.data = -5.0  # the dead unit: its pre-activation < 0 here
    return model


def detached(a, b):
    c = Value(a.data * 2.0)  # a's data, not a: the engine sees a new leaf
    return c * b


def unread(a, b):
    return b * 3.0


def central_difference(f, args, i, h=1e-6):
    def at(step):
        moved = [Value(x + (step if j == i else 0.0)) for j, x in enumerate(args)]
        return f(*moved).data
    return (at(h) - at(-h)) / (2 * h)


def run():
    root = repo_root(__file__)
    with adtrace.record(engine="micrograd", capture="full", sites=True, relative_to=root) as rec:
        model = mlp_model()
        loss = model([Value(x) for x in X])
        loss = loss * loss
        loss.backward()
    params = model.parameters()
    labels = [e.label for e in rec.of_kind(NodeCreated) if not e.parents][:len(params)]
    label = dict(zip(map(id, params), labels))
    dead = model.layers[0].neurons[1]
    reader = model.layers[1].neurons[0].w[1]  # the output unit's weight on the dead unit
    chosen = [label[id(dead.w[0])], label[id(dead.b)], label[id(reader)]]
    mlp = rec.explain(wrt=chosen)
    others = {"left the engine": adtrace.explain(detached, 1.5, 2.0, wrt=["a"], engine="micrograd",
                                                 relative_to=root)[0],
              "not read": adtrace.explain(unread, 1.5, 2.0, wrt=["a"], engine="micrograd", relative_to=root)[0]}
    differences = {"left the engine": central_difference(detached, (1.5, 2.0), 0),
                   "not read": central_difference(unread, (1.5, 2.0), 0)}
    lines = [f"{e.selector}: gradient {fmt(e.gradient)}, {', '.join(f'{c.node} {c.reason}' for c in e.causes)}"
             for e in list(mlp) + list(others.values())]
    lines += [f"central difference, {name}: {fmt(d)}" for name, d in differences.items()]
    relu = mlp[0].causes[0]
    checks = {
        "micrograd's .grad of each chosen MLP parameter is 0, and explain reads the same 0":
            all(p.grad == 0 for p in (dead.w[0], dead.b, reader)) and all(e.gradient == 0 for e in mlp),
        "the dead unit's weight and bias: cut by its ReLU, 100% of their paths":
            all([c.reason for c in e.causes] == ["relu-off"] and e.causes[0].node == relu.node
                and e.causes[0].fraction == 1.0 for e in mlp[:2]),
        "its pre-activation is negative (computed again in plain Python)":
            sum(w.data * x for w, x in zip(dead.w, X)) + dead.b.data < 0 and relu.values["input[0]"] < 0,
        "the weight reading the dead unit: a product with a factor 0":
            [c.reason for c in mlp[2].causes] == ["zero-derivative"] and mlp[2].causes[0].values["input[1]"] == 0,
        "every explained gradient's contributions add up to it bit for bit":
            all(e.exact for e in mlp if e.contributions),
        "Value(a.data): left-trace, and the output moves with a (central difference 2 b = 4)":
            [c.reason for c in others["left the engine"].causes] == ["left-trace"]
            and abs(differences["left the engine"] - 4.0) < 1e-6,
        "an input nothing reads: independent, and central differences are 0 too":
            [c.reason for c in others["not read"].causes] == ["independent"] and differences["not read"] == 0,
    }
    report = "\n".join([f"# Experiment: why is this micrograd gradient zero?\n\n{INTRO}\n",
                        overview(mlp, others, differences), sections(mlp, others), questions(mlp, relu)])
    # (no page: micrograd keeps a value's children in a set, so its visit order changes from run to run)
    return Outcome(lines, checks, report)


def overview(mlp, others, differences):
    names = ["dead unit's weight", "dead unit's bias", "weight reading the dead unit"]
    rows = [(name, code(e.selector), fmt(e.gradient), "-", "; ".join(f"{code(c.reason)} at {c.node}"
                                                                       for c in e.causes))
            for name, e in zip(names, mlp)]
    rows += [(name, code(e.selector), fmt(e.gradient), fmt(differences[name]),
              "; ".join(f"{code(c.reason)} at {c.node}" for c in e.causes)) for name, e in others.items()]
    return f"""## Five zeros

{table(["case", "leaf", "gradient (micrograd)", "central difference", "cause"], rows)}
"""


def sections(mlp, others):
    parts = []
    for title, e in [("The dead unit's weight", mlp[0]), ("The weight reading the dead unit", mlp[2]),
                     ("A value that left the engine", others["left the engine"]),
                     ("An input not read", others["not read"])]:
        rendered = render_explanations([e], title=title)
        parts.append("\n".join("#" + line if line.startswith("#") else line for line in rendered.splitlines()))
    return "\n\n".join(parts) + "\n"


def questions(mlp, relu):
    return f"""## Self-test questions

1. **Why do the dead unit's weight and bias get 0?** Its pre-activation is {fmt(relu.values["input[0]"])}:
   `{relu.node}`, its ReLU, is off, its local derivative 0; it cuts {relu.fraction:.0%} of their paths.
2. **Why does the output weight `{mlp[2].selector}` get 0, though its own unit is alive?** Its
   derivative is the value it multiplies, the dead unit's output, 0 (`zero-derivative`).
3. **Both `Value(a.data)` and an unread input give 0: which 0 is wrong?** The first: the output moves
   with `a` (central difference 4), but the engine saw a new leaf (`left-trace`).
"""


if __name__ == "__main__":
    sys.exit(main(run, __file__))

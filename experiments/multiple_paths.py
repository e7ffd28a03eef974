"""Multiple paths: in z = x*x the two input positions of multiply both point at the root.

autograd's backward_pass hands the root two contributions, 3 and 3, and add_outgrads merges them:
None + 3 -> (3, False), then vs.add(3, 3) -> (6, True). Recorded through adtrace.record() on
grad(lambda x: x*x)(3.0); every claim is checked against values computed independently.
"""

import sys

from autograd import grad

import adtrace


def square(x):
    return x * x


def fmt(value):
    return f"{float(value):g}"


def fmt_pair(pair):
    return "None" if pair is None else f"({fmt(pair[0])},{pair[1]})"


def main():
    x = 3.0
    with adtrace.record() as rec:
        gradient = grad(square)(x)
    calls = rec.of_kind("add_outgrads")
    for i, call in enumerate(calls, 1):
        print(f"call {i}: previous={fmt_pair(call.previous)}, contribution={fmt(call.contribution)}, "
              f"accumulated={fmt_pair(call.result)}")
    contributions = [float(c.contribution) for c in calls]
    print(f"gradient contributions: {' + '.join(fmt(c) for c in contributions)} = {fmt(sum(contributions))}")

    multiply = next(e.label for e in rec.of_kind("node") if e.primitive == "multiply")
    root = next(e.label for e in rec.of_kind("root"))
    checks = {
        "gradient is 2x = 6": float(gradient) == 2 * x,
        "contributions are exactly [x, x] = [3.0, 3.0]": contributions == [x, x],
        "the recorded return value is the gradient": float(rec.gradient(1)) == float(gradient),
        "both contributions go to the root": all(c.parent == root for c in calls),
        "flags: first (3,False), then (6,True)": [c.result[1] for c in calls] == [False, True],
        "visit order: multiply node, then root": rec.visit_order(1) == [multiply, root],
    }
    failed = [name for name, ok in checks.items() if not ok]
    for name in failed:
        print(f"check failed: {name}")
    if failed:
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

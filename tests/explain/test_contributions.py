"""An input element's gradient as the sum of its recorded contributions, per line: exact on random
programs (seeded), with the rounding of the recorded additions stated and bounded."""

import random
from fractions import Fraction

import autograd.numpy as np
from autograd import grad

import adtrace
from adtrace.explain.contributions import Contribution, by_line, fold, rounding, rounding_bound
from adtrace.explain.explainer import explain_recording
from adtrace.recording.events import AddOutgrads

# one operation per line: a contribution's line tells which operation made it
OPS = [
    lambda a, b: a + b,
    lambda a, b: a * b,
    lambda a, b: np.sin(a) - b,
    lambda a, b: np.tanh(a * b),
    lambda a, b: np.maximum(a, b),
    lambda a, b: a / (1.0 + b * b),
    lambda a, b: np.exp(-a * a) + b * 3.0,
    lambda a, b: a * b[1],
]
FIRST_OP_LINE = OPS[0].__code__.co_firstlineno


def random_program(rng):
    steps = [(rng.randrange(len(OPS)), rng.random(), rng.random()) for _ in range(rng.randint(2, 9))]

    def program(x):
        values = [x]
        for op, i, j in steps:
            values.append(OPS[op](values[int(i * len(values))], values[int(j * len(values))]))
        return np.sum(values[-1]) + np.sum(values[len(values) // 2] * 0.5)
    return program


def lines(program):
    """The lines a random program's nodes come from: its operations' and its own."""
    first = program.__code__.co_firstlineno
    return {FIRST_OP_LINE + k for k in range(len(OPS))} | {first + k for k in range(5)}


def recorded(f, x):
    with np.errstate(all="ignore"), adtrace.record(capture="full", sites=True, calls=True) as rec:
        g = grad(f)(x)
    return rec, g


def test_the_contributions_add_up_to_the_gradient_on_random_programs():
    rounded = 0
    for seed in range(60):
        rng = random.Random(seed)
        x = np.array([rng.uniform(-2, 2) * 10.0 ** rng.randint(-3, 3) for _ in range(3)])
        f = random_program(rng)
        rec, g = recorded(f, x)
        into_root = [e for e in rec.of_kind(AddOutgrads) if e.parent == "v0_root"]
        for i, e in enumerate(explain_recording(rec, [f"x[{i}]" for i in range(3)])):
            assert e.gradient == g[i] or (np.isnan(e.gradient) and np.isnan(g[i])), seed
            assert len(e.contributions) == len(into_root)
            if not np.isfinite(e.gradient):
                continue
            assert e.exact, seed  # folded in the recorded order: the recorded gradient, bit for bit
            elsewhere = [c for c in e.contributions if not c.covers]  # x[j]'s sparse cotangent, read at x[i]
            assert all(c.value == 0 for c in elsewhere), seed
            assert sum(s.contributions for s in e.attribution) == len(into_root) - len(elsewhere)
            for share in e.attribution:  # each line's share: its own contributions' exact sum
                mine = [c for c in e.contributions if c.line == share.line]
                assert share.exact == sum((Fraction(float(c.value)) for c in mine), Fraction(0))
                assert int(share.line.rsplit(":", 1)[1]) in lines(f)
            total = sum((s.exact for s in e.attribution), Fraction(0)) + e.rounding
            assert total == Fraction(float(e.gradient))
            assert abs(e.rounding) <= rounding_bound(e.contributions)
            rounded += e.rounding != 0
    assert rounded > 0  # the rounding term is not always zero: the test sees it


def contribution(value, line="a.py:1"):
    return Contribution("v1_add", "add", 0, line, value, None)


def test_fold_adds_in_the_recorded_order():
    values = [np.float64(1e16), np.float64(1.0), np.float64(-1e16)]
    assert fold([contribution(v) for v in values]) == 0.0  # (1e16 + 1) - 1e16: the 1 is lost
    assert fold([contribution(v) for v in (values[0], values[2], values[1])]) == 1.0


def test_a_line_share_is_exact_and_the_rounding_is_what_the_additions_lost():
    contributions = [contribution(np.float64(1e16), "a.py:1"), contribution(np.float64(1.0), "b.py:2"),
                     contribution(np.float64(-1e16), "a.py:1")]
    shares = by_line(contributions)
    assert [(s.line, s.share) for s in shares] == [("b.py:2", 1.0), ("a.py:1", 0.0)]
    assert rounding(fold(contributions), shares) == -1


def test_float32_contributions_fold_in_float32():
    values = [np.float32(0.1), np.float32(0.2), np.float32(0.3)]
    total = fold([contribution(v) for v in values])
    assert total.dtype == np.float32 and total == (values[0] + values[1]) + values[2]


def test_contributions_into_other_items_of_a_dict_are_no_line_of_it():
    params = {"W": np.array([2.0]), "b": np.array([1.0])}
    with adtrace.record(capture="full", sites=True) as rec:
        grad(lambda p: np.sum(p["W"] * 3.0) + np.sum(p["b"]))(params)
    (e,) = explain_recording(rec, ["params['W'][0]"], name="params")
    assert [c.covers for c in e.contributions] == [False, True]  # b's take is added first (toposort)
    (share,) = e.attribution
    assert (share.share, share.contributions) == (3.0, 1) and e.exact

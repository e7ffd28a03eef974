"""The JSON form: issue 27's field names, numbers or "nan"/"inf"."""

import json

import autograd.numpy as np

from adtrace.explain import explain
from adtrace.explain.explanation import number


def test_json_fields_of_a_zero_and_a_nonfinite_gradient():
    zero, = explain(lambda x: np.sum(np.maximum(x, 0.0)), np.array([-1.0, 2.0]), wrt=["x[0]"])
    out = json.loads(json.dumps(zero.to_json()))
    assert out["selector"] == "x[0]" and out["gradient"] == 0.0 and out["verdict"] == "zero"
    (cause,) = out["causes"]
    assert set(cause) >= {"node", "primitive", "argnum", "line", "reason"}
    assert cause["reason"] == "relu-off" and ":" in cause["line"]
    assert [set(a) >= {"line", "share"} for a in out["attribution"]] == [True]
    nan, = explain(lambda x: np.sqrt(x), np.float64(0.0))
    assert nan.to_json()["gradient"] == "inf" and nan.to_json()["verdict"] == "nonfinite"


def test_numbers():
    assert [number(v) for v in (np.float64(2.5), np.nan, -np.inf, None)] == [2.5, "nan", "-inf", None]


def test_json_flags_paths_whose_products_do_not_sum_to_the_gradient():
    from learner_shapes import BUGGY, SlotsValue

    def g(x):
        a = x * x
        b = a + x
        c = a + b  # the buggy + assigns a.grad: the pass writes 294 where the paths' products sum to 546
        return c * c

    (wrong,) = explain(g, 3.0, engine=BUGGY[SlotsValue])
    (right,) = explain(g, 3.0, engine=SlotsValue)
    assert json.loads(json.dumps(wrong.to_json()))["paths_differ"] is True
    assert right.to_json()["paths_differ"] is False and right.to_json()["paths"]
    nan, = explain(lambda x: np.sqrt(x), np.float64(0.0))  # a gradient not finite: not compared
    assert nan.to_json()["paths_differ"] is None


def test_the_paths_sum_of_a_real_graph_is_a_real_number():
    from learner_shapes import SlotsValue

    (e,) = explain(lambda x: x * x + x, 3.0, engine=SlotsValue)
    total, differs = e.paths_sum()
    assert type(total) is float and total == 7.0 and differs is False

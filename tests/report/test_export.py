"""The JSON export (``--json``): every value whole, none lost to JSON's string keys."""

import json

import numpy as np
import pytest
from autograd import grad

import adtrace
from adtrace.report.export import _indented, events_json, to_jsonable


def test_a_dict_whose_keys_are_not_all_strings_keeps_every_entry():
    assert to_jsonable({1: 10.0, "1": 20.0}) == {"dict_items": [[1, 10.0], ["1", 20.0]]}
    assert to_jsonable({(0, 1): 1.0}) == {"dict_items": [[[0, 1], 1.0]]}
    assert to_jsonable({"a": 1.0, "b": [2.0]}) == {"a": 1.0, "b": [2.0]}  # string keys: a JSON object, as ever


@pytest.mark.parametrize("value", [{1: 2.0}, np.array([1.0]), 1 + 2j, {1: 2.0, "x": 1.0}])
def test_a_dict_keyed_like_a_tagged_value_is_not_read_as_one(value):
    """A tagged value (``{"dict_items": ...}``, ``{"array": ...}``, ``{"complex": ...}``) and a dict
    of strings that holds the same JSON under the same keys are exported differently."""
    exported = to_jsonable(value)
    lookalike = json.loads(json.dumps(exported))
    assert to_jsonable(lookalike) != exported


def test_the_exported_gradient_of_a_dict_argument_keeps_both_keys():
    with adtrace.record(capture="full") as rec:
        gradient = grad(lambda d: d[1] * d["1"])({1: 10.0, "1": 20.0})
    end = [e for e in json.loads(events_json(rec))["events"] if e["kind"] == "backward_end"][-1]
    exported = {json.dumps(key): value["array"] for key, value in end["result"]["dict_items"]}
    assert exported == {"1": gradient[1], '"1"': gradient["1"]} == {"1": 20.0, '"1"': 10.0}



@pytest.mark.parametrize("capture", ["auto", "full"])
def test_the_export_is_the_json_module_s_own_indented_document(capture):
    """The export's own writer (json's indented one is slow on a large recording) writes what
    ``json.dumps(..., indent=1)`` writes: arrays, summaries, nested and empty containers, escapes."""
    import autograd.numpy as anp

    def f(x):
        return anp.sum(anp.sin(x) * anp.array([1.0, 2.0, 3.0])) + x[0] ** 2

    with adtrace.record(capture=capture) as rec:
        grad(f)(np.array([0.5, -1.0, 3.0]))
    exported = events_json(rec)
    assert exported == json.dumps(json.loads(exported), indent=1) + "\n"
    odd = {"\u00e9\n\"": [[], {}, [1, -0.0, float("nan"), -float("inf"), 5e-324, True, None, {"x": [[2]]}]],
           "long": [{"i": i, "v": [i / 7, None]} for i in range(3000)]}  # (a long list's items written apart)
    parts = []
    _indented(odd, parts, "\n")
    assert "".join(parts) == json.dumps(odd, indent=1)

"""The JSON export (``--json``): every value whole, none lost to JSON's string keys."""

import json

import numpy as np
import pytest
from autograd import grad

import adtrace
from adtrace.report.export import events_json, to_jsonable


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

"""The JSON export (``--json``): every value whole, none lost to JSON's string keys."""

import json

from autograd import grad

import adtrace
from adtrace.report.export import events_json, to_jsonable


def test_a_dict_whose_keys_are_not_all_strings_keeps_every_entry():
    assert to_jsonable({1: 10.0, "1": 20.0}) == {"dict_items": [[1, 10.0], ["1", 20.0]]}
    assert to_jsonable({(0, 1): 1.0}) == {"dict_items": [[[0, 1], 1.0]]}
    assert to_jsonable({"a": 1.0, "b": [2.0]}) == {"a": 1.0, "b": [2.0]}  # string keys: a JSON object, as ever


def test_the_exported_gradient_of_a_dict_argument_keeps_both_keys():
    with adtrace.record(capture="full") as rec:
        gradient = grad(lambda d: d[1] * d["1"])({1: 10.0, "1": 20.0})
    end = [e for e in json.loads(events_json(rec))["events"] if e["kind"] == "backward_end"][-1]
    exported = {json.dumps(key): value["array"] for key, value in end["result"]["dict_items"]}
    assert exported == {"1": gradient[1], '"1"': gradient["1"]} == {"1": 20.0, '"1"': 10.0}

"""Selectors and elements: x, x[3], params['W'][0, 1], and a value's number at an element."""

import numpy as np
import pytest
from autograd import grad

import adtrace
from adtrace.explain.elements import Element, component, elements, flat, flat_index, parse_selector, select
from adtrace.recording.events import AddOutgrads


@pytest.mark.parametrize("text, name, element", [
    ("x", "x", Element()),
    ("x[3]", "x", Element((), (3,))),
    ("params['W'][0, 1]", "params", Element(("W",), (0, 1))),
    ("params['layers'][2]['b'][0]", "params", Element(("layers", 2, "b"), (0,))),
])
def test_a_selector_parses_and_prints_back(text, name, element):
    assert parse_selector(text) == (name, element)
    assert element.selector(name) == text


def test_a_selector_must_be_a_name_with_subscripts():
    with pytest.raises(ValueError):
        parse_selector("f(x)[0]")


def test_flat_order_is_the_containers_own():
    value = {"W": np.arange(6.0).reshape(2, 3), "b": np.array([10.0, 11.0])}
    vector = flat(value)
    for element in elements(value):
        assert vector[flat_index(value, element)] == component(value, element)
    assert [e.selector("p") for e in elements(value)][-1] == "p['b'][1]"


def test_a_sparse_contribution_into_a_dict_is_read_at_its_key():
    params = {"W": np.array([[1.0, 2.0]]), "b": np.array([3.0])}
    with adtrace.record(capture="full") as rec:
        grad(lambda p: p["W"][0, 1] * 5.0 + p["b"][0])(params)
    into_root = [e.contribution for e in rec.of_kind(AddOutgrads) if e.parent == "v0_root"]
    assert [component(c, Element(("W",), (0, 1)), params) for c in into_root] == [0.0, 5.0]
    assert [component(c, Element(("b",), (0,)), params) for c in into_root] == [1.0, 0.0]


def test_a_sparse_contribution_into_a_list_of_layers():
    layers = [(np.array([1.0, 2.0]), np.array([3.0])), (np.array([4.0]), np.array([5.0]))]
    with adtrace.record(capture="full") as rec:
        grad(lambda ls: ls[1][0][0] * 2.0)(layers)
    (into_root,) = [e.contribution for e in rec.of_kind(AddOutgrads) if e.parent == "v0_root"]
    assert component(into_root, Element((1, 0), (0,)), layers) == 2.0
    assert component(into_root, Element((0, 1), (0,)), layers) == 0.0


def test_a_negative_index_into_a_list_is_its_position_from_the_end():
    layers = [(np.array([1.0]),), (np.array([4.0]),)]
    with adtrace.record(capture="full") as rec:
        grad(lambda ls: ls[-1][0][0] * 2.0)(layers)
    (into_root,) = [e.contribution for e in rec.of_kind(AddOutgrads) if e.parent == "v0_root"]
    assert component(into_root, Element((1, 0), (0,)), layers) == 2.0


def test_a_slice_of_a_list_of_layers():
    layers = [np.array([1.0]), np.array([2.0]), np.array([3.0])]
    with adtrace.record(capture="full") as rec:
        grad(lambda ls: sum(layer[0] * 2.0 for layer in ls[:-1]))(layers)
    into_root = [e.contribution for e in rec.of_kind(AddOutgrads) if e.parent == "v0_root"]
    assert [component(c, Element((0,), (0,)), layers) for c in into_root] == [2.0]
    assert [component(c, Element((2,), (0,)), layers) for c in into_root] == [0.0]


def test_select_reads_a_selector_against_the_value():
    layers = [(np.ones((2, 2)), np.array([1.0, 2.0])), (np.ones(3), 2.0)]
    (item,) = select("layers[1][1]", layers)  # a number that is a list's item: a key, not an array index
    assert item == Element((1, 1), ()) and item.selector("layers") == "layers[1][1]"
    assert select("layers[1]", layers) == [Element((1, 0), (i,)) for i in range(3)] + [Element((1, 1), ())]
    params = {"W": np.zeros((2, 2)), "b": np.zeros(1)}
    assert select("params['W']", params) == [Element(("W",), i) for i in np.ndindex(2, 2)]
    assert select("params['W'][1]", params) == [Element(("W",), (1, 0)), Element(("W",), (1, 1))]
    assert select("x", np.zeros(2)) == [Element((), (0,)), Element((), (1,))]
    assert select("x[-1]", np.zeros(3)) == [Element((), (2,))]


@pytest.mark.parametrize("text, message", [
    ("params['w'][0, 1]", r"params has no item \['w'\]"),
    ("params['W'][2, 0]", r"params\['W'\] has shape \(2, 2\)"),
    ("zzz['W'][0, 1]", "called params, not zzz"),
])
def test_select_refuses_naming_the_users_argument(text, message):
    with pytest.raises(ValueError, match=message):
        select(text, {"W": np.zeros((2, 2))}, "params")


def test_an_arrays_shape_is_said_once():
    with pytest.raises(ValueError) as error:
        select("y[5]", np.zeros(2), "y")
    assert str(error.value) == "no such element: y has shape (2,)"

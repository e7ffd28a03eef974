"""The user's variable names of nodes, from the assignment on the line that made each."""

import importlib.util
import textwrap

import autograd.numpy as np
import pytest
from autograd import grad

import adtrace
from adtrace.recording.names import named_site, variable_names

PROGRAM = '''
import autograd.numpy as np

def loss(params, x):
    W = params["W"]
    h = np.tanh(W @ x)
    for _ in range(2):
        h = np.sin(h)
    g = np.tanh(np.tanh(h))
    a, b = h[0], h[1]
    h += a * b
    total = (np.sum(h)
             + np.sum(g))
    return total * 2.0
'''


def names_of(tmp_path, program=PROGRAM, module_name="model_for_names"):
    path = tmp_path / "model.py"
    path.write_text(textwrap.dedent(program))
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    params, x = {"W": np.array([[0.5, -0.2], [0.1, 0.3]])}, np.array([1.0, 2.0])
    with adtrace.record(capture="full", sites=True) as rec:
        grad(module.loss)(params, x)
    names = variable_names(rec)
    return {label: (rec.nodes[label].primitive, names.get(label)) for label in rec.nodes if label != "v0_root"}


@pytest.fixture(scope="module")
def found(tmp_path_factory):
    """The program's names, from one file (two files shown alike name nothing: the last test)."""
    return names_of(tmp_path_factory.mktemp("names"))


def test_the_value_of_the_assignment_is_named_not_its_inner_operations(found):
    assert found["v1_container_take"] == ("container_take", "W")
    assert found["v2_matmul"] == ("matmul", None) and found["v3_tanh"] == ("tanh", "h")


def test_a_loop_line_names_each_of_its_nodes(found):
    assert [name for primitive, name in found.values() if primitive == "sin"] == ["h", "h"]


def test_an_operation_nested_in_itself_names_the_outer_one(found):
    assert [found[label] for label in ("v6_tanh", "v7_tanh")] == [("tanh", None), ("tanh", "g")]


def test_tuple_targets_and_returns_name_nothing_and_augmented_and_long_statements_do(found):
    assert [name for primitive, name in found.values() if primitive == "ArrayBox.__getitem__"] == [None, None]
    assert [(p, n) for p, n in found.values() if n in ("h", "total") and p in ("add", "multiply")] == [
        ("add", "h"), ("add", "total")]
    assert [name for primitive, name in found.values() if primitive == "multiply"] == [None, None]


def test_a_named_site_reads_name_at_line():
    assert named_site("h", "model.py:4") == "h@model.py:4" and named_site(None, "model.py:4") == "model.py:4"


def test_two_files_shown_alike_name_nothing_they_could_be_either(tmp_path, found):
    other = PROGRAM.replace("g = np.tanh", "q = np.tanh").replace("np.sum(g)", "np.sum(q)")  # another name, same lines
    assert names_of(tmp_path, other, module_name="model_for_names") == {
        label: (primitive, None) for label, (primitive, _) in found.items()}

"""Node labels shared by the recorder and the reference engine."""

import autograd.core as core
import autograd.numpy as anp
from autograd.numpy.numpy_boxes import ArrayBox

from adtrace.recording.labels import node_label, op_name, primitive_name


def test_primitive_names_distinguish_vspace_methods():
    assert primitive_name(anp.add) == "add"
    assert primitive_name(core.VSpace.add) == "VSpace.add"
    assert primitive_name(ArrayBox.__getitem__) == "ArrayBox.__getitem__"


def test_labels_are_identifier_safe():
    assert node_label(0, "root") == "v0_root"
    assert node_label(3, "VSpace.mut_add") == "v3_VSpace_mut_add"
    assert node_label(4, 'a|b\n"c<d>') == "v4_a_b_c_d"
    assert node_label(5, "|||") == "v5_op"


def test_symbolic_ops_get_readable_names():
    names = {op: op_name(op) for op in ("+", "*", "-", "/", "**2", "**-1", "**0.5", "ReLU", "tanh", "")}
    assert names == {"+": "add", "*": "mul", "-": "sub", "/": "div", "**2": "pow2", "**-1": "pow_neg1",
                     "**0.5": "pow0.5", "ReLU": "ReLU", "tanh": "tanh", "": "op"}
    assert node_label(3, op_name("**0.5")) == "v3_pow0_5" and op_name("", leaf=True) == "leaf"


def test_a_reduced_name_gives_the_same_label_as_the_raw_one():
    from adtrace.recording.labels import label_for, label_name, unrecorded_label

    assert label_for(7, label_name("VSpace.add")) == node_label(7, "VSpace.add") == "v7_VSpace_add"
    assert unrecorded_label(2) == "u2_unrecorded"

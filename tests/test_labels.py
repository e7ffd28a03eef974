"""Node labels shared by the recorder and the reference engine."""

import autograd.core as core
import autograd.numpy as anp
from autograd.numpy.numpy_boxes import ArrayBox

from adtrace.recording.labels import node_label, primitive_name


def test_primitive_names_distinguish_vspace_methods():
    assert primitive_name(anp.add) == "add"
    assert primitive_name(core.VSpace.add) == "VSpace.add"
    assert primitive_name(ArrayBox.__getitem__) == "ArrayBox.__getitem__"


def test_labels_are_identifier_safe():
    assert node_label(0, "root") == "v0_root"
    assert node_label(3, "VSpace.mut_add") == "v3_VSpace_mut_add"
    assert node_label(4, 'a|b\n"c<d>') == "v4_a_b_c_d"
    assert node_label(5, "|||") == "v5_op"

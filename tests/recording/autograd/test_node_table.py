"""The node table: one place where nodes get their labels (labels.py's form), levels and argnums."""

import autograd.numpy as anp
from autograd import grad, make_jvp

import adtrace
from adtrace.recording.autograd.node_table import UNARY, NodeTable
from adtrace.recording.labels import label_name, node_label, primitive_name


class Frame:
    def __init__(self, level):
        self.level = level


def test_roots_and_nodes_made_before_the_recording_are_named_in_labels_form():
    frames = []
    table = NodeTable(frames)
    first, second, old = object(), object(), object()
    assert table.new_root(first, 0) == "v0_root"
    assert table.new_root(second, 1) == "v1_root"
    assert table.made == 2 and table.levels[id(second)] == 1 and table.argnums[id(first)] == ()
    frames.append(Frame(3))  # an unrecorded node takes the level of the innermost open frame
    assert table.label(old) == "u0_unrecorded" and table.levels[id(old)] == 3
    assert table.label(old) == "u0_unrecorded"  # named once
    assert table.label(object()) == "u1_unrecorded"


def test_a_primitives_names_are_made_once_and_give_its_node_labels():
    table = NodeTable([])
    name, reduced = table.name_of(anp.multiply)
    assert (name, reduced) == (primitive_name(anp.multiply), label_name(primitive_name(anp.multiply)))
    assert table.names[anp.multiply] == (name, reduced)


def test_parent_labels_join_and_take_the_first_parents_level():
    table = NodeTable([])
    a, b, c = object(), object(), object()
    table.add(a, "v0_root", 1)
    table.add(b, "v1_sin", 1)
    assert table.parent_labels((a, b, c)) == ("v0_root,v1_sin,u0_unrecorded", 1)
    table.add(c, "v5_cos", 2)  # an id seen again (Python reused it): the new entry wins
    assert table.label(c) == "v5_cos" and table.levels[id(c)] == 2


def test_a_recordings_labels_are_the_reference_engines_form():
    """The recorder's labels come out as ``labels.node_label`` makes them (numbered in creation order),
    in reverse and in forward mode (each hot path writes the form out)."""
    for differentiate in (grad, lambda f: lambda x: make_jvp(f)(x)(1.0)):
        with adtrace.record(capture="structure") as rec:
            differentiate(lambda x: anp.sin(x) * x)(0.5)
        nodes = [e for e in rec.events if e.is_node]
        assert len(nodes) == 3
        assert [e.label for e in nodes] == [node_label(i, getattr(e, "primitive", "root")) for i, e in enumerate(nodes)]


def test_levels_and_argnums_keep_only_what_differs_and_an_id_seen_again_takes_its_new_entry():
    """Most nodes are of level 0 with one boxed argument: those are not kept, and read so."""
    table = NodeTable([])
    node = object()
    table.add(node, "v0_sin", 0, UNARY)
    assert id(node) not in table.levels and id(node) not in table.argnums
    assert (table.levels[id(node)], table.argnums[id(node)]) == (0, (0,))
    table.add(node, "v1_multiply", 1, (0, 1))
    assert (table.levels[id(node)], table.argnums[id(node)]) == (1, (0, 1))
    table.add(node, "v2_sin", 0, UNARY)  # Python reused the id of a node that died: the new entry wins
    assert (table.label(node), table.levels[id(node)], table.argnums[id(node)]) == ("v2_sin", 0, (0,))


def test_a_recordings_levels_and_argnums_come_from_the_sparse_table():
    with adtrace.record() as rec:
        grad(grad(lambda x: anp.sin(x) * x))(0.5)
    nodes = [e for e in rec.events if e.is_node]
    assert {e.level for e in nodes} == {0, 1}
    assert {getattr(e, "argnums", None) for e in nodes} >= {(0,), (0, 1)}
    adds = [e for e in rec.of_kind("add_outgrads") if e.node is not None]
    assert {a.argnum for a in adds} >= {0, 1}

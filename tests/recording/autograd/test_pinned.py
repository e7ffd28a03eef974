"""autograd behaviour adtrace explains and relies on, pinned: each failure names the behaviour.

If one of these fails after an autograd upgrade, upstream changed what adtrace records or
explains: update the recorder, the reports and ../shared/AUTOGRAD_NOTES.md together.
"""

import autograd.core as core
import autograd.differential_operators as differential_operators
import autograd.numpy as anp
import autograd.util as util
import numpy as np
from autograd import grad
from autograd.core import VJPNode, add_outgrads, primitive_vjps, vspace
from autograd.extend import defvjp, primitive
from autograd.numpy.numpy_vjps import untake
from autograd.tracer import trace


def test_add_outgrads_dense_flag_sequence():
    g = np.array([1.0, 2.0])
    first = add_outgrads(None, g)
    assert first[0] is g and first[1] is False, "PINNED: first dense contribution is stored as (g, False)"
    second = add_outgrads(first, np.array([1.0, 2.0]))
    assert second[1] is True and second[0] is not g and second[0].tolist() == [2, 4], \
        "PINNED: second dense contribution is vs.add into a new array, flagged (sum, True)"
    third = add_outgrads(second, np.array([1.0, 2.0]))
    assert third[0] is second[0] and third[0].tolist() == [3, 6] and third[1] is True, \
        "PINNED: third dense contribution is vs.mut_add in place into the same array"


def test_add_outgrads_sparse_flag_sequence():
    vs = vspace(np.zeros(3))
    first = add_outgrads(None, untake(1.0, 0, vs))
    assert first[1] is True and first[0].tolist() == [1, 0, 0], \
        "PINNED: a first sparse contribution is densified by sparse_add and flagged mutable"
    dense = add_outgrads(None, np.ones(3))
    mixed = add_outgrads(dense, untake(2.0, 2, vs))
    assert mixed[1] is True and mixed[0].tolist() == [1, 1, 3] and dense[0].tolist() == [1, 1, 1], \
        "PINNED: sparse after an unflagged entry copies it (mut_add(None, prev)) before sparse_add"


def test_toposort_order_on_fixed_graphs():
    root = VJPNode.new_root()
    _, end = trace(root, lambda x: (lambda a, b: b * (a * b))(x * x, anp.sin(x)), 0.3)
    order = list(util.toposort(end))
    kinds = [len(n.parents) for n in order]
    assert order[0] is end and order[-1] is root, "PINNED: toposort yields the output first, the input root last"
    assert kinds == [2, 2, 1, 2, 0], "PINNED: toposort's stack order on b*(a*b) with a=x*x, b=sin(x)"


def test_defvjp_returns_a_generator_for_three_or_more_arguments():
    @primitive
    def f3(a, b, c):
        return a + b + c

    defvjp(f3, lambda ans, a, b, c: lambda g: g, lambda ans, a, b, c: lambda g: g, lambda ans, a, b, c: lambda g: g)
    two = primitive_vjps[f3]((0, 1), 3.0, (1.0, 1.0, 1.0), {})(1.0)
    three = primitive_vjps[f3]((0, 1, 2), 3.0, (1.0, 1.0, 1.0), {})(1.0)
    assert isinstance(two, tuple), "PINNED: defvjp's VJP for two arguments returns a tuple"
    assert not isinstance(three, tuple) and hasattr(three, "__next__"), \
        "PINNED: defvjp's VJP for three or more arguments returns a generator"


def test_binding_sites_the_recorder_patches(monkeypatch):
    seen = []
    original_toposort, original_add, original_backward = core.toposort, core.add_outgrads, core.backward_pass
    monkeypatch.setattr(core, "toposort", lambda end, *a: (seen.append("toposort"), original_toposort(end, *a))[1])
    monkeypatch.setattr(core, "add_outgrads", lambda p, g: (seen.append("add_outgrads"), original_add(p, g))[1])
    monkeypatch.setattr(core, "backward_pass", lambda g, e: (seen.append("backward_pass"), original_backward(g, e))[1])
    grad(lambda x: x * x)(3.0)
    assert seen == ["backward_pass", "toposort", "add_outgrads", "add_outgrads"], \
        "PINNED: backward_pass and make_vjp read toposort, add_outgrads, backward_pass as autograd.core globals"


def test_patching_core_make_vjp_does_not_reach_grad(monkeypatch):
    calls = []
    original = core.make_vjp
    monkeypatch.setattr(core, "make_vjp", lambda *a: (calls.append(1), original(*a))[1])
    grad(lambda x: x * x)(3.0)
    assert calls == [] and differential_operators._make_vjp is original, \
        "PINNED: differential_operators imported make_vjp by value: grad does not see autograd.core.make_vjp"


def test_root_skips_init_and_vjpnode_has_slots():
    node = VJPNode(None, anp.sin, (0.0,), {}, (0,), ())
    assert VJPNode.__slots__ == ["parents", "vjp"] and not hasattr(node, "__dict__"), \
        "PINNED: VJPNode has __slots__ parents/vjp and no __dict__"
    root = VJPNode.new_root()
    assert root.parents == [] and root.vjp(1.0) == (), "PINNED: the root is made by initialize_root, not __init__"


def test_sparse_objects_keep_index_and_value_in_their_closure():
    from autograd.builtins import container_untake

    from adtrace.recording.autograd.sparse import sparse_parts

    array = untake(np.float64(2.0), 1, vspace(np.zeros(3)))
    container = container_untake(np.ones(2), 1, vspace([np.zeros(3), np.zeros(2)]))
    assert sparse_parts(array) == (1, 2.0), "PINNED: untake's mut_add closes over idx and x"
    index, value = sparse_parts(container)
    assert index == 1 and value.tolist() == [1, 1], \
        "PINNED: container_untake's mut_add closes over idx and accum, which closes over x"


def test_autograd_jvp_makers_return_sum_outgrads():
    from adtrace.recording.autograd.forward import SUMMING_JVP_MAKERS

    assert len(SUMMING_JVP_MAKERS) == 2, "PINNED: defjvp and defjvp_argnum each build one jvp_argnums"
    assert core.primitive_jvps[anp.sin].__code__ in SUMMING_JVP_MAKERS, "PINNED: defjvp's maker (sin)"
    assert core.primitive_jvps[anp.sum].__code__ in SUMMING_JVP_MAKERS, "PINNED: def_linear's maker (sum)"


def test_summing_jvp_makers_tolerate_a_wrapped_defjvp(monkeypatch):
    import functools

    from adtrace.recording.autograd.forward import _summing_jvp_makers

    monkeypatch.setattr(core, "defjvp", functools.partial(core.defjvp))  # another tool's wrapper: no __code__
    assert len(_summing_jvp_makers()) == 1  # defjvp_argnum's only: nothing is credited that cannot be read

"""Which elements are explained by default, and a recording with no backward pass."""

import autograd.numpy as np
import pytest
from autograd import grad

import adtrace
from adtrace.explain.explainer import default_elements, explain_recording


def test_default_elements_are_the_nonfinite_the_zero_and_the_largest():
    value = np.zeros(6)
    gradient = np.array([1.0, 0.0, np.nan, -7.0, 0.0, 3.0])
    chosen = [e.index[0] for e in default_elements(value, gradient, each=2)]
    assert chosen == [2, 1, 4, 3, 5]


def test_default_zeros_come_from_each_part_of_the_input_first():
    """A dead unit zeroes its column of W1 (three rows), its bias and its row of W2: one of each part
    says more than three of W1's; without the largest (the report's section) only the zeros."""
    value = {"W1": np.ones((3, 2)), "b1": np.ones(2), "W2": np.ones(2)}
    gradient = {"W1": np.array([[0.0, 1.0]] * 3), "b1": np.array([0.0, 2.0]), "W2": np.array([0.0, 5.0])}
    chosen = [e.selector("params") for e in default_elements(value, gradient, each=3, largest=False)]
    assert chosen == ["params['W1'][0, 0]", "params['b1'][0]", "params['W2'][0]"]


@pytest.mark.filterwarnings("ignore:Output seems independent of input")
def test_an_output_independent_of_the_input():
    with adtrace.record(capture="full") as rec:
        grad(lambda x: 2.0)(np.array([1.0, 2.0]))
    explanations = explain_recording(rec)
    assert [(e.selector, e.verdict) for e in explanations] == [("x[0]", "zero"), ("x[1]", "zero")]
    assert explanations[0].causes[0].reason == "independent"


def test_a_recording_explains_itself():
    with adtrace.record(capture="full", sites=True, calls=True) as rec:
        grad(lambda x: np.sum(np.maximum(x, 0.0)))(np.array([-1.0, 2.0]))
    zero, largest = rec.explain()
    assert (zero.selector, zero.verdict, zero.causes[0].reason) == ("x[0]", "zero", "relu-off")
    assert (largest.selector, largest.gradient) == ("x[1]", 1.0)
    assert [e.selector for e in rec.explain(wrt=["w[1]"], name="w")] == ["w[1]"]


def test_an_input_of_another_vector_space_is_refused_clearly():
    from autograd.extend import Box, defvjp, primitive
    from user_vspace import Pair as UserPair, PairSpace

    class Pair(UserPair):  # (its own type: boxed here only)
        pass

    class PairBox(Box):
        pass
    PairSpace.register(Pair)
    PairBox.register(Pair)

    @primitive
    def total(p):
        return p.a + p.b
    defvjp(total, lambda ans, p: lambda g: Pair(g, g))
    with adtrace.record(capture="full") as rec:
        grad(total)(Pair(1.0, 2.0))
    with pytest.raises(TypeError, match="numbers and arrays.* it holds a Pair"):
        explain_recording(rec)


# What explain finds on autograd's own examples (their sdist's examples/, loaded as the upstream tests load them),
# each read by hand: rnn/lstm: a character no input holds (its row of 'change' multiplies zeros) and the last
# step's prediction, which the likelihood does not use; variational_autoencoder: a bias the batch normalisation
# after it subtracts again (its contributions cancel). Every other default element's gradient is a sum of
# contributions that folds to it bit for bit.
ZERO_REASONS = {"rnn": {"zero-derivative", "left-trace"}, "lstm": {"zero-derivative", "left-trace"},
                "variational_autoencoder": {"cancellation"}}


def test_no_false_cause_on_autograds_examples():
    import warnings

    from adtrace.explain import explain
    from adtrace.tools.autograd_examples import EXAMPLES

    explained = with_paths = 0
    for name, example in EXAMPLES.items():
        if name == "rkhs":  # its input is a function of its own vector space: refused (see above)
            continue
        args, kwargs = example.arguments()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            found = explain(lambda *a: example.function(*a, **kwargs), *args, argnum=example.argnum)
        reasons = {c.reason for e in found for c in e.causes}
        assert reasons == ZERO_REASONS.get(name, set()), name
        assert all(e.exact for e in found), name
        assert all(e.verdict == ("zero" if e.causes else "contributions") for e in found), name
        for e in found:  # the paths, where listed whole, are the chain rule expanded: within rounding of it
            if e.paths and not e.more_paths:
                assert np.isclose(sum(p.value for p in e.paths), e.gradient, rtol=1e-9, atol=1e-15), name
        with_paths += sum(bool(e.paths) for e in found)
        explained += len(found)
    assert len(EXAMPLES) >= 23 and explained > 60 and with_paths > 10


def test_values_kept_as_summaries_are_refused_with_the_capture_to_use():
    with adtrace.record() as rec:  # capture="auto": arrays above 64 elements as summaries
        grad(lambda x: np.sum(x * x))(np.ones(100))
    with pytest.raises(ValueError, match='capture="full"'):
        explain_recording(rec)
    with adtrace.record(capture="full") as rec:
        grad(lambda x: np.sum(np.ones(100) * x[0]))(np.ones(3))  # its contributions: whole, though large nodes
    assert [e.exact for e in explain_recording(rec, ["x[0]"])] == [True]


def test_another_engines_recording_is_explained_by_its_leaves():
    from value_classes import Value

    with adtrace.record(engine=Value, capture="full") as rec:
        a = Value(2.0)
        (a * a).backward()
    (found,) = rec.explain()
    assert (found.selector, found.gradient, found.exact) == ("v0_leaf", 4.0, True)


def test_a_recording_of_two_gradient_calls_explains_the_last():
    f = lambda x: np.sum(np.maximum(x, 0.0) ** 2)  # noqa: E731
    with adtrace.record(capture="full", sites=True, calls=True) as rec:
        grad(f)(np.array([1.0, -2.0]))
        grad(f)(np.array([3.0, -1.0, 2.0]))
    found = {e.selector: e for e in rec.explain()}
    assert set(found) == {"x[0]", "x[1]", "x[2]"}  # the last call's input
    assert found["x[0]"].gradient == 6.0 and found["x[1]"].causes[0].reason == "relu-off"


def test_a_recordings_selectors_keep_the_name_the_user_wrote():
    def loss(params):
        return np.sum(np.maximum(np.dot(params["W"], np.array([1.0, 1.0])), 0.0))
    params = {"W": np.array([[1.0, 2.0], [-3.0, -1.0]])}
    with adtrace.record(capture="full", sites=True, calls=True) as rec:
        grad(loss)(params)
    (e,) = rec.explain(wrt=["params['W'][1, 0]"])
    assert e.selector == "params['W'][1, 0]" and e.verdict == "zero"
    assert [d.selector for d in rec.explain()][0].startswith("x['W']")  # no selector written: x
    (named,) = rec.explain(wrt=["params['W'][1, 0]"], name="p")
    assert named.selector == "p['W'][1, 0]"

"""A cast to an integer dtype on the paths: autograd passes the gradient through it, the numbers do not."""

import autograd.numpy as np

from adtrace.explain import explain


def test_a_gradient_through_astype_int_names_the_cast():
    def f(x):
        k = x.astype(int)  # autograd's VJP: g cast back, as if k were x
        return np.sum(x * k)
    first, second = explain(f, np.array([1.5, 2.5]), wrt=["x[0]", "x[1]"])
    assert (first.verdict, first.gradient) == ("contributions", 2.5)  # k + x, where d(x * floor(x))/dx = k = 1
    (cause,) = first.causes
    assert (cause.node, cause.reason) == ("v1_astype", "integer-cast")
    assert cause.primitive in ("astype", "_astype")  # (autograd's name for it under numpy 1.x: _astype)
    assert cause.line.endswith(f":{f.__code__.co_firstlineno + 1}") and cause.fraction == 0.5
    assert [c.reason for c in second.causes] == ["integer-cast"]


def test_a_float_cast_and_a_cast_of_other_elements_name_nothing():
    def f(x):
        y = x.astype(np.float32)  # a float cast has the identity's derivative
        k = x[1:].astype(int)  # a cast of x[1] only
        return np.sum(y) + np.sum(k * 2.0)
    (e,) = explain(f, np.array([1.5, 2.5]), wrt=["x[0]"])
    assert e.verdict == "contributions" and e.causes == ()

"""The non-differentiable primitives the input went through, seen by a profile hook, and the
profile the user had put back."""

import sys

import autograd.numpy as np

from adtrace.explain.escapes import escapes


def f(x):
    y = np.sin(x)
    return np.round(x) + np.sign(y) + (x > 0)  # sign(y): y is not the input itself


def test_the_inputs_own_escapes_in_call_order_with_their_lines():
    found = escapes(f, 1.5)
    line = f"{f.__code__.co_firstlineno + 2}"
    assert [(e.primitive, e.reason, e.line.rsplit(":", 1)[1]) for e in found] == [
        ("round", "zero-derivative", line), ("greater", "comparison", line)]


def test_the_users_profile_is_put_back():
    calls = []

    def mine(frame, event, arg):
        calls.append(event)
    sys.setprofile(mine)
    try:
        escapes(f, 1.5)
        assert sys.getprofile() is mine
    finally:
        sys.setprofile(None)

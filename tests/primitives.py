"""Primitives the tests define once and share, and what they record."""

from autograd import grad
from autograd.extend import defvjp, primitive

import adtrace


@primitive
def cube(x):
    return x**3


# its rule runs a backward pass of its own (three nodes: root, two multiplies), as fixed_point's and odeint's do
defvjp(cube, lambda ans, x: lambda g: g * grad(lambda y: y * y * y)(x))


def recorded_from_inside_a_vjp(f):
    """``grad(f)(2.0)``, where ``f(x, tap)`` calls ``tap``, the identity, whose VJP enters a recording
    (left open to the end of the pass): ``(that recording, the gradient)``."""
    holder = {}

    @primitive
    def tap(x):
        return x

    def rule(ans, x):
        def vjp(g):
            holder["record"] = adtrace.record()
            holder["rec"] = holder["record"].__enter__()
            return g
        return vjp

    defvjp(tap, rule)
    try:
        gradient = grad(lambda x: f(x, tap))(2.0)
    finally:
        holder["record"].__exit__(None, None, None)
    return holder["rec"], gradient


def fails_in_its_vjp(error):
    """The identity as a primitive, ``fails``, whose VJP raises ``error``: a backward pass stopped midway."""

    @primitive
    def fails(x):
        return x

    def rule(ans, x):
        def vjp(g):
            raise error
        return vjp

    defvjp(fails, rule)
    return fails

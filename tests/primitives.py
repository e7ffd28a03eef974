"""Primitives the tests define once and share."""

from autograd import grad
from autograd.extend import defvjp, primitive


@primitive
def cube(x):
    return x**3


# its rule runs a backward pass of its own (three nodes: root, two multiplies), as fixed_point's and odeint's do
defvjp(cube, lambda ans, x: lambda g: g * grad(lambda y: y * y * y)(x))

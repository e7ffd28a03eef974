"""The benchmark workloads: each a zero-argument callable that runs one gradient computation. ``wrap``, when
given, is applied to the workload's own function (the one a user writes: the loss, ``f``, the training
step), as a user decorates theirs with a line tracer (benchmarks/peers.py)."""

import autograd.numpy as anp
import numpy as np
from autograd import grad
from autograd.core import make_jvp


def scalar_chain(n=10_000, wrap=None):
    """A Python-bound chain of ``n`` scalar operations (sin and multiply alternating)."""

    def f(x):
        for _ in range(n // 2):
            x = anp.sin(x) * 1.0001
        return x

    g = grad(_wrapped(f, wrap))
    return lambda: g(0.3)


def tanh_mlp(width=100, layers=200, batch=100, wrap=None):
    """An array-bound tanh MLP: ``layers`` of ``width`` x ``width`` weights."""
    rng = np.random.default_rng(0)
    weights = [rng.standard_normal((width, width)) / np.sqrt(width) for _ in range(layers)]
    inputs = rng.standard_normal((batch, width))

    def loss(ws):
        h = inputs
        for w in ws:
            h = anp.tanh(anp.dot(h, w))
        return anp.sum(h * h)

    g = grad(_wrapped(loss, wrap))
    return lambda: g(weights)


def lstm_like(steps=50, width=64, batch=32, wrap=None):
    """An LSTM-like recurrence over arrays: gates from one weight matrix, indexed time steps."""
    rng = np.random.default_rng(1)
    W = rng.standard_normal((2 * width, 4 * width)) / np.sqrt(2 * width)
    xs = rng.standard_normal((steps, batch, width))

    def sigmoid(z):
        return 0.5 * (anp.tanh(0.5 * z) + 1.0)

    def loss(W):
        h = anp.zeros((batch, width))
        c = anp.zeros((batch, width))
        for t in range(steps):
            z = anp.dot(anp.concatenate([xs[t], h], axis=1), W)
            i, f, o, u = (z[:, k * width:(k + 1) * width] for k in range(4))
            c = sigmoid(f) * c + sigmoid(i) * anp.tanh(u)
            h = sigmoid(o) * anp.tanh(c)
        return anp.sum(h * h)

    g = grad(_wrapped(loss, wrap))
    return lambda: g(W)


def second_derivative(wrap=None):
    """``grad(grad(f))`` on a small scalar function."""
    def f(x):
        return anp.sin(x) * x * x + anp.exp(-x * x)

    g2 = grad(grad(_wrapped(f, wrap)))
    return lambda: g2(0.7)


def forward_chain(n=2_000, size=12):
    """Forward mode: ``make_jvp`` through a chain of ``n`` operations on a small array (sin and add
    alternating), the kind of node autograd's own ``check_grads`` makes most of; ``size=None``: on a scalar
    (each tangent a float: forward mode's recording beside little of autograd's own work)."""
    x = 0.3 if size is None else np.linspace(0.0, 1.0, size)
    tangent = 1.0 if size is None else np.ones(size)

    def f(x):
        for _ in range(n // 2):
            x = anp.sin(x) + x
        return x

    jvp = make_jvp(f, x)
    return lambda: jvp(tangent)


def micrograd_mlp(points=20, wrap=None):
    """One training step of micrograd's own ``nn.MLP(2, [16, 16, 1])``: its squared loss over ``points``
    random points, then ``backward()``. Raises ImportError when micrograd is not installed."""
    import random

    from micrograd import nn

    rng = random.Random(0)
    xs = [[rng.uniform(-1, 1), rng.uniform(-1, 1)] for _ in range(points)]
    ys = [1.0 if a * b > 0 else -1.0 for a, b in xs]
    model = nn.MLP(2, [16, 16, 1])

    def step():
        model.zero_grad()
        loss = sum((model(x) - y) ** 2 for x, y in zip(xs, ys))
        loss.backward()

    return _wrapped(step, wrap)



def _wrapped(function, wrap):
    return function if wrap is None else wrap(function)


WORKLOADS = {
    "scalar chain (10,000 nodes)": scalar_chain,
    "tanh MLP (100x100, 200 layers)": tanh_mlp,
    "LSTM-like recurrence (50 steps)": lstm_like,
    "grad(grad(f)) small": second_derivative,
}
# engine -> its workloads, recorded with record(engine=...)
ENGINE_WORKLOADS = {"micrograd": {"micrograd MLP(2,[16,16,1]) x 20 points": micrograd_mlp}}

"""``explain(f, *args, wrt=None)``: record one reverse-mode call of ``f`` with everything an
explanation needs, and explain it.

The gradient is ``f``'s VJP with a seed of ones (its gradient for a scalar output), with respect to
argument ``argnum``. Where autograd traced no path from the input element to the output, only
running ``f`` again tells an output that does not depend on the input (``independent``) from one
whose value does but left the trace: first under a profile hook, for autograd's non-differentiable
primitives (``floor``, ``round``, ``sign``, comparisons: they make no node; ``escapes.py``), then with
the input element moved by ``PROBE`` (relative), for a value taken out of its box (``._value``, a
plain numpy call), the output compared.
"""

import copy
import inspect
import warnings
from dataclasses import replace

import numpy as np
from autograd import make_vjp
from autograd.core import vspace

from ..recording.events import NodeCreated
from ..recording.registry import engine_named, unrecorded
from ..recording.session import record
from .elements import Element, parse_selector
from .escapes import escapes
from .explainer import explain_recording
from .explanation import Cause, Explanations
from .value_class import explain_values

PROBE = 1e-3
INDEPENDENT = "Output seems independent of input"  # autograd's warning (trace)
INDEPENDENT_PROBED = ("the output does not depend on the input: autograd traced no path, and moving this element "
                      "does not move the output")


def explain(f, *args, wrt=None, argnum=0, relative_to=None, engine=None):
    """``Explanations`` (a list of ``Explanation``): one per selector of ``wrt`` (``"x[3]"``,
    ``"params['W'][0, 1]"``) or, by default, per element whose gradient is zero, non-finite or largest;
    its ``lines`` and ``leaves``: the gradient's scale per source line and per part of the input.
    ``engine``: ``"micrograd"`` or a ``Value`` class of its shape: each argument a leaf ``Value``,
    ``backward()`` run on the result, ``wrt`` the arguments' names or leaves' labels (``v3_leaf``). Run
    unseen by any recording open here (its own is not nested in them)."""
    if engine is not None:
        return unrecorded(_explain_engine, f, args, wrt, engine, relative_to)
    return unrecorded(_explain_autograd, f, args, wrt, argnum, relative_to)


def _explain_autograd(f, args, wrt, argnum, relative_to):
    name = argument_name(f, argnum)
    of_x = lambda x: f(*args[:argnum], x, *args[argnum + 1:])  # noqa: E731
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.filterwarnings("ignore", INDEPENDENT)  # (the explanation says it, with the reason)
        with record(capture="full", sites=True, calls=True, relative_to=relative_to) as rec:
            vjp, output = make_vjp(of_x)(args[argnum])
            vjp(vspace(output).ones())
    elements = None if wrt is None else [s if isinstance(s, Element) else parse_selector(s)[1] for s in wrt]
    explanations = explain_recording(rec, elements, name)
    probed = Explanations(_probed(e, of_x, args[argnum], output, relative_to) for e in explanations)
    probed.lines, probed.leaves = explanations.lines, explanations.leaves
    return probed


def _explain_engine(f, args, wrt, engine, relative_to):
    """A value class's pass explained (``value_class.py``): an argument whose paths all end before the output
    (``independent``) is run again with its leaf moved: if the output moves, the value where they end had its
    ``.data`` read outside the engine (``left-trace``)."""
    adapter = engine_named(engine)
    args = tuple(float(a) if type(a) is int else a for a in args)
    with np.errstate(all="ignore"), record(engine=engine, capture="full", sites=True, relative_to=relative_to) as rec:
        out = f(*[adapter.leaf(a) for a in args])
        if not isinstance(out, adapter.cls):
            raise TypeError(f"the function returned a {type(out).__name__}, not a {adapter.cls.__qualname__}: "
                            "nothing to call backward() on")
        adapter.backward(out)
    made = [e.label for e in rec.of_kind(NodeCreated) if not e.parents][:len(args)]  # (each argument's leaf first)
    names = dict(zip(made, argument_names(f, len(args))))
    explanations = explain_values(rec, wrt, names, arguments=made)
    arguments = {name: i for i, name in enumerate(names.values())}
    probed = Explanations(_moved_leaf(e, f, adapter, args, arguments, out) for e in explanations)
    probed.lines, probed.leaves = explanations.lines, explanations.leaves
    return probed


def _moved_leaf(explanation, f, adapter, args, arguments, out):
    causes = explanation.causes
    i = arguments.get(explanation.selector)
    if i is None or not causes or any(c.reason != "independent" for c in causes):
        return explanation
    moved = list(args)
    moved[i] = args[i] + PROBE * max(abs(args[i]), 1.0)
    with np.errstate(all="ignore"):
        again = adapter.data(f(*[adapter.leaf(a) for a in moved]))
    if again == adapter.data(out) or (again != again and adapter.data(out) != adapter.data(out)):
        return explanation
    detail = ("the output moves with this input, but no traced path from it reaches the output: the .data of this "
              "value was read outside the engine (a new Value made of it)")
    return replace(explanation, causes=tuple(replace(c, reason="left-trace", detail=detail) for c in causes))


def argument_names(f, n):
    """The names of ``f``'s first ``n`` positional parameters (``args[i]`` for a ``*args``), else ``x0``, ``x1``, ..."""
    try:
        parameters = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        parameters = []
    names = []
    for p in parameters:
        if p.kind == p.VAR_POSITIONAL:
            names += [f"{p.name}[{j}]" for j in range(n - len(names))]
        elif p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            names.append(p.name)
        if len(names) >= n:
            break
    return (names + [f"x{i}" for i in range(len(names), n)])[:n]


def argument_name(f, argnum):
    try:
        names = [p.name for p in inspect.signature(f).parameters.values()]
        return names[argnum]
    except (TypeError, ValueError, IndexError):
        return "x"


def _probed(explanation, of_x, x, output, relative_to):
    """An ``independent`` verdict at the input checked by running ``f`` again: the non-differentiable
    primitives the input went through (``escapes.py``), else ``left-trace`` when the output moves with
    the element."""
    causes = explanation.causes
    if not (len(causes) == 1 and causes[0].reason == "independent" and causes[0].primitive == "root"):
        return explanation
    found = escapes(of_x, x, relative_to)
    if found:
        return replace(explanation, causes=tuple(
            Cause(f"{e.primitive} (no node)", e.primitive, 0, e.line, e.reason, 1 / len(found),
                  "a non-differentiable primitive: autograd ran it on the plain value and made no node")
            for e in found))
    element = parse_selector(explanation.selector)[1]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.filterwarnings("ignore", INDEPENDENT)
        moved = make_vjp(of_x)(_moved(x, element))[1]  # traced, as the recorded call was (._value needs a box)
    if np.array_equal(np.asarray(moved), np.asarray(output), equal_nan=True):
        return replace(explanation, causes=(replace(causes[0], detail=INDEPENDENT_PROBED),))
    cause = Cause(causes[0].node, "root", None, None, "left-trace", 1.0,
                  "the output moves with this element, but autograd traced no path from it: its value left the "
                  "trace (._value, a plain numpy call, or a non-differentiable floor/round/sign)")
    return replace(explanation, causes=(cause,))


def _moved(x, element):
    x = copy.deepcopy(x)
    if not element.keys and not element.index and np.ndim(x) == 0:
        return x + PROBE * max(abs(x), 1.0)
    holder = x
    for key in element.keys[:-1]:
        holder = holder[key]
    leaf = holder[element.keys[-1]] if element.keys else holder
    leaf = np.array(leaf, dtype=float)
    leaf[element.index] += PROBE * max(abs(leaf[element.index]), 1.0)
    if element.keys:
        holder[element.keys[-1]] = leaf
        return x
    return leaf

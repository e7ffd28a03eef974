"""``explain(f, *args, wrt=None)``: record one reverse-mode call of ``f`` with everything an
explanation needs, and explain it.

The gradient is ``f``'s VJP with a seed of ones (its gradient for a scalar output; for an array
output, the gradient of the sum of its elements), with respect to argument ``argnum``. Where autograd
traced no path from the input element to the output, only running ``f`` again tells an output that
does not depend on the input (``independent``) from one whose value does but left the trace: once
more at the same point under a profile hook, for autograd's non-differentiable primitives (``floor``,
``round``, ``sign``, comparisons: they make no node; ``escapes.py``), its output compared with the
recorded one (not the same: ``nondeterministic``, nothing more can be told), then once per such
element with it moved by ``PROBE`` (relative), for a value taken out of its box (``._value``, a plain
numpy call), the output compared.
"""

import copy
import inspect
import warnings
from dataclasses import replace

import numpy as np
from autograd import make_vjp
from autograd.core import vspace
from autograd.tracer import getval, isbox

from ..recording.events import NodeCreated
from ..recording.registry import engine_named, unrecorded
from ..recording.session import record
from .elements import Element, leaves, parse_selector, select
from .escapes import escapes
from .explainer import explain_recording
from .explanation import Cause, Explanations
from .value_class import explain_values

PROBE = 1e-3
INDEPENDENT = "Output seems independent of input"  # autograd's warning (trace)
NONDETERMINISTIC = ("the output is not the same when the function runs again at the same point (random numbers, a "
                    "counter, other state): whether it depends on this element cannot be told")
LOOSE = ("the function returned a {kind} holding traced values: autograd differentiates one array or number (a "
         "plain {kind} is not traced, no path reaches it). Return one value (e.g. the sum of them), or each in turn")
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
            _refuse_loose(output)
            vjp(vspace(output).ones())
    if isinstance(wrt, (str, Element)):  # one selector
        wrt = [wrt]
    known = name if name != "x" or argument_name(f, argnum, None) else None  # (checked: the user's own name)
    elements = None if wrt is None else [e for s in wrt for e in select(s, args[argnum], known)]
    explanations = explain_recording(rec, elements, name)
    rerun = {}  # the run at the same point (escapes and output), made once for every element that needs it
    probed = Explanations(_probed(e, of_x, args[argnum], output, relative_to, rerun) for e in explanations)
    probed.lines, probed.leaves, probed.summed = explanations.lines, explanations.leaves, explanations.summed
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
    """(An argument of arrays: its element moved, ``x[3]``.)"""
    causes = explanation.causes
    i, element = arguments.get(explanation.selector), Element()  # (a number's name: w, args[0])
    if i is None:
        name, element = parse_selector(explanation.selector)
        i = arguments.get(name)
    if i is None or element.keys or not causes or any(c.reason != "independent" for c in causes):
        return explanation
    moved = list(args)
    if element.index:
        moved[i] = np.array(args[i], dtype=float)
        moved[i][element.index] += PROBE * max(abs(moved[i][element.index]), 1.0)
    else:
        moved[i] = args[i] + PROBE * max(abs(args[i]), 1.0)
    with np.errstate(all="ignore"):
        again = np.asarray(adapter.data(f(*[adapter.leaf(a) for a in moved])))
    before = np.asarray(adapter.data(out))
    if again.shape == before.shape and np.array_equal(again, before, equal_nan=True):
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


def argument_name(f, argnum, otherwise="x"):
    try:
        names = [p.name for p in inspect.signature(f).parameters.values()]
        return names[argnum]
    except (TypeError, ValueError, IndexError):
        return otherwise


def _refuse_loose(output):
    """A tuple, list or dict of traced values is no traced value: autograd saw no path to it."""
    if isinstance(output, (tuple, list, dict)) and not isbox(output) and any(isbox(v) for _, v in leaves(output)):
        raise ValueError(LOOSE.format(kind=type(output).__name__))


def _same(a, b):
    """Whether two outputs are the same values (containers leaf by leaf, boxes by their values)."""
    a, b = list(leaves(getval(a))), list(leaves(getval(b)))
    if [k for k, _ in a] != [k for k, _ in b]:
        return False
    for (_, u), (_, v) in zip(a, b):
        u, v = np.asarray(getval(u)), np.asarray(getval(v))
        try:
            equal = np.array_equal(u, v, equal_nan=True)
        except TypeError:  # not numbers (equal_nan needs them)
            equal = np.array_equal(u, v)
        if not equal:
            return False
    return True


def _probed(explanation, of_x, x, output, relative_to, rerun):
    """An ``independent`` verdict at the input checked by running ``f`` again: at the same point, the
    non-differentiable primitives the input went through (``escapes.py``) and whether the output is
    the same (else ``nondeterministic``); then ``left-trace`` when the output moves with the element."""
    causes = explanation.causes
    if not (len(causes) == 1 and causes[0].reason == "independent" and causes[0].primitive == "root"):
        return explanation
    if not rerun:
        again = []
        rerun["escapes"] = escapes(of_x, x, relative_to, again)
        rerun["same"] = _same(again[0], output)
    if not rerun["same"]:
        return replace(explanation, causes=(replace(causes[0], reason="nondeterministic", fraction=None,
                                                    detail=NONDETERMINISTIC),))
    found = rerun["escapes"]
    if found:
        return replace(explanation, causes=tuple(
            Cause(f"{e.primitive} (no node)", e.primitive, 0, e.line, e.reason, 1 / len(found),
                  "a non-differentiable primitive: autograd ran it on the plain value and made no node")
            for e in found))
    (element,) = select(explanation.selector, x)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.filterwarnings("ignore", INDEPENDENT)
        moved = make_vjp(of_x)(_moved(x, element))[1]  # traced, as the recorded call was (._value needs a box)
    if _same(moved, output):
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

"""Explaining a recording of a value class (micrograd's ``Value``, a learner's class of its shape):
every value a number keeping its own ``.grad``, every leaf an input.

What such a recording holds (``recording/value_class/recorder.py``): each value's op, children and
data (``node``), each ``_backward`` call with the ``.grad`` it read and what it wrote per child
(``vjp``: ``outgrad``, ``ingrads``) and every write into a child's ``.grad`` with its contribution
(``add_outgrads``). So, per leaf:

- **where its gradient came from**: the writes into its ``.grad``, added in the recorded order, give
  the recorded ``.grad`` bit for bit (``Explanation.exact``), per source line and per path (each path's
  product of local partials);
- **why it is zero**: the edge whose local derivative is 0 on every path (``relu-off``: ReLU at <= 0;
  ``zero-derivative``: a product with a factor 0, ``x**k`` at 0; ``tanh-saturated``: tanh exactly at
  +-1), a value the output does not use (``independent``: a sink), an input nothing read
  (``independent`` at the leaf), or contributions that cancel (``cancellation``);
- **why it is NaN or infinite**: the first ``_backward`` that wrote a non-finite contribution from a
  finite ``.grad`` on the leaf's paths (``power-at-zero``: ``x**-1`` at 0, ``log-of-zero``,
  ``division-by-zero``, ``nonfinite-input``: a factor already infinite), the one that then made a NaN
  of infinities (``zero-times-inf``: ReLU off times an infinite ``.grad``), and the forward value
  that first was not finite.

A local partial is the class's own rule at the recorded values (``recording.code.ops``: ``+``, ``*``,
``**k``, ReLU, tanh, exp, log ...), else the recorded ``ingrad / outgrad``, else not known (NaN).

A class whose values are numpy arrays is explained element by element (``value_arrays.py``).

Selectors (``wrt``): a leaf's label (``v0_leaf``, ``u1_unrecorded`` for a value made before the
recording), or a name ``names`` gives a leaf (``adtrace explain --engine``: the target's argument names).
"""

import math
from dataclasses import replace

import numpy as np

from ..recording.events import AddOutgrads, BackwardStart, VJPCalled
from ..recording.names import variable_names
from ..report.format import fmt
from . import scale
from .contributions import Contribution, by_line, fold, line_of, rounding, same
from .explanation import Cause, Explanation, Explanations, verdict_of
from .graph import Graph
from .paths import paths
from .reasons import nonfinite_reason
from .value_arrays import arrays_in, explain_arrays

EACH = 3  # default leaves: this many of each kind (zero, non-finite, largest)

# an op as a value class writes it -> autograd's primitive of it (the reasons' vocabulary)
PRIMITIVES = {"+": "add", "-": "subtract", "*": "multiply", "/": "divide", "ReLU": "maximum", "relu": "maximum",
              "tanh": "tanh", "exp": "exp", "log": "log"}


class NoSuchLeaf(KeyError):
    """A selector names no leaf of the recorded pass."""


def explain_values(recording, wrt=None, names=None, largest=True, arguments=()):
    """``Explanations`` of a value class's recorded pass: one per leaf ``wrt`` names (labels, or names
    of ``names``: label -> name), by default the leaves whose gradient is zero, non-finite or (if
    ``largest``) largest in magnitude, ``EACH`` of each, among the leaves the output was computed from
    and the named ones (any leaf of the recording when ``wrt`` names it). ``arguments``: the labels of
    leaves adtrace made of a function's arguments (no line of the user's made them)."""
    names = dict(names or {})
    query = recording.user_query()
    start = next((e for e in recording.query_events(query) if type(e) is BackwardStart), None) \
        if query is not None else None
    if start is None:
        raise ValueError("nothing to explain: the recording holds no backward() pass")
    if recording.capture == "structure":
        raise ValueError("explain needs the values: record with capture=\"full\" (or \"auto\"), sites=True")
    events = recording.query_events(query)
    grads = _gradients(recording, events, start, names)
    if arrays_in(recording):  # a class of numpy arrays: element by element (value_arrays.py)
        used = _ancestors(recording.graph(), start.end) | set(names)
        return explain_arrays(recording, query, events, start, grads, wrt, names, largest, arguments, used,
                              variable_names(recording))
    if wrt is None:  # the leaves the output was computed from, and the named ones (a function's arguments)
        graph = recording.graph()
        used = _ancestors(graph, start.end) | set(names)
        chosen = default_leaves({label: g for label, g in grads.items() if label in used}, largest=largest)
    else:
        by_name = {name: label for label, name in names.items()}
        chosen = [_leaf(s, grads, by_name) for s in wrt]
    if not chosen:
        return Explanations()
    partials = local_partials(recording, events)
    variables = variable_names(recording)
    found = Explanations()
    for label in chosen:
        graph = Graph(recording.graph(), label, start.end, getattr(recording.nodes.get(label), "value", None))
        explanation = explain_leaf(recording, query, events, graph, partials, grads[label], names.get(label, label))
        found.append(_named(explanation, variables, set(arguments)))
    found.lines = scale.by_line(recording, query, skip=set(arguments))
    found.leaves = tuple(scale.Scale(names.get(label, label), 1, _magnitude(grads[label]), _magnitude(grads[label]))
                         for label in chosen)
    return found


def explain_leaf(recording, query, events, graph, partials, gradient, selector):
    found = contributions(recording, events, graph.root)
    verdict = verdict_of(gradient)
    causes = ()
    if verdict == "zero":
        causes = tuple(why_zero(recording, graph, partials))
    elif verdict == "nonfinite":
        causes = tuple(why_nonfinite(recording, events, graph, partials))
    causes += tuple(_replaced(recording, events, graph))
    shown, more, more_sum = paths(recording, query, graph, partials)
    shares = by_line(found)
    return Explanation(selector, gradient, verdict, causes, tuple(shares), tuple(found),
                       same(fold(found), gradient) if found else None, rounding(gradient, shares), shown, more,
                       more_sum)


# -------------------- leaves and their gradients --------------------


def leaves(recording, end):
    """The leaves of the recording (labels): the values made without children, and those made before it
    that the pass reached."""
    graph = recording.graph()
    made = [label for label, parents in graph.items() if not parents]
    reached = [p for p in _ancestors(graph, end) if p not in graph]  # made before the recording (u<j>_unrecorded)
    return made + sorted(reached, key=_number)


def _gradients(recording, events, start, names):
    """leaf label -> its ``.grad`` after the pass: the last write's result; 0 when the pass never wrote
    it (a value class starts ``.grad`` at 0)."""
    grads = {label: 0.0 for label in leaves(recording, start.end)}
    grads.update((label, 0.0) for label in names if label not in grads)
    for event in events:
        if type(event) is AddOutgrads and event.parent in grads and event.result is not None:
            grads[event.parent] = event.result[0]
    if start.end in grads:  # a leaf differentiated with respect to itself: its seed
        grads[start.end] = start.seed
    return grads


def default_leaves(grads, each=EACH, largest=True):
    numbers = {label: _float(g) for label, g in grads.items()}
    nonfinite = [label for label, g in numbers.items() if not np.isfinite(g)][:each]
    zero = [label for label, g in numbers.items() if g == 0][:each]
    big = sorted((label for label, g in numbers.items() if np.isfinite(g) and g != 0), key=lambda label: -abs(
        numbers[label]))[:each if largest else 0]
    return list(dict.fromkeys(nonfinite + zero + big))


def _leaf(selector, grads, by_name):
    label = by_name.get(selector, selector)
    head = selector.split("[", 1)[0].strip()
    if label not in grads and "[" in selector and by_name.get(head, head) in grads:
        raise NoSuchLeaf(f"{selector}: {head} has shape () (a number): select it as {head}")
    if label not in grads:
        known = ", ".join(list(by_name) + [g for g in grads if g not in by_name.values()][:12])
        more = ", ..." if len(grads) > 12 else ""
        raise NoSuchLeaf(f"{selector} names no leaf of the recorded pass (leaves: {known}{more})")
    return label


def contributions(recording, events, leaf):
    """The writes into the leaf's ``.grad`` in the pass, in order, as ``Contribution``s."""
    found = []
    for event in events:
        if type(event) is AddOutgrads and event.parent == leaf and event.node is not None:
            node = recording.nodes.get(event.node)
            value = event.contribution
            if value is None and event.result is not None and event.previous is not None:
                value = event.result[0] - event.previous[0]  # (a write adtrace could not split: what it changed)
            found.append(Contribution(event.node, getattr(node, "primitive", ""), event.argnum,
                                      line_of(node, event.node), value, event.result[0] if event.result else None))
    return found


def _replaced(recording, events, graph):
    """A ``grad-replaced`` cause per write that assigned ``.grad = c`` over a value not 0 (the classic bug)
    into the leaf's ``.grad`` or into a value on its paths (what was lost there never reached the leaf)."""
    mine = {graph.root} | {label for label in graph.descendants(graph.root) if graph.to_end.get(label)}
    for event in events:
        if type(event) is AddOutgrads and event.parent in mine and event.replaced and event.previous is not None \
                and _float(event.previous[0]) != 0:
            into = "" if event.parent == graph.root else f" of {event.parent}"
            yield _cause(recording, event.node, event.position, "grad-replaced", None,
                         f"its _backward assigned .grad{into} = {fmt(event.contribution)} over "
                         f"{fmt(event.previous[0])}, which was lost (write .grad += ...)",
                         {"previous": event.previous[0]})


# -------------------- local partials --------------------


def local_partials(recording, events):
    """``(node, position) -> d node / d child``: the class's rule at the recorded values, else the
    recorded ``ingrad / outgrad``, else NaN (not known)."""
    partials = {}
    for label, node in recording.nodes.items():
        for position, value in enumerate(_rule(recording, node)):
            partials[label, position] = value
    for event in events:
        if type(event) is not VJPCalled:
            continue
        for position, ingrad in enumerate(event.ingrads):
            if (event.node, position) in partials:
                continue
            with np.errstate(all="ignore"):
                outgrad = _float(event.outgrad)
                known = ingrad is not None and outgrad != 0 and np.isfinite(outgrad)
                partials[event.node, position] = _float(ingrad) / outgrad if known else math.nan
    return partials


def _rule(recording, node):
    """The local derivatives of a node by the class's rule at its recorded values (empty if none)."""
    parents = getattr(node, "parents", ())
    if not parents or None in (node.argnums or ()) or recording.code is None:
        return ()
    rule = recording.code.ops.derivatives(node.primitive, len(parents))
    inputs = [getattr(recording.nodes.get(p), "value", None) for p in parents]
    if rule is None or not all(_is_number(v) for v in [node.value, *inputs]):
        return ()
    try:
        with np.errstate(all="ignore"):
            return tuple(_float(d) for d in rule(node.value, *inputs))
    except (TypeError, ValueError, ZeroDivisionError, OverflowError):
        return ()


# -------------------- why zero --------------------


def why_zero(recording, graph, partials):
    """The ``Cause``s of a leaf's zero gradient: where its influence stops on the way to the output."""
    root = graph.root
    if not graph.consumers.get(root):
        return [Cause(root, "leaf", None, _site(recording, root), "independent", 1.0,
                      "no operation read this input: the output does not depend on it")]
    reached, cuts = {root}, []
    for label in graph.order:
        node = recording.nodes.get(label)
        for position, parent in enumerate(getattr(node, "parents", ())):
            if parent not in reached:
                continue
            partial = partials.get((label, position), math.nan)
            if partial != 0:  # (NaN: not known, taken as connecting)
                reached.add(label)
            elif graph.to_end.get(label):
                cuts.append((label, position))
    if graph.end in reached:
        return [_cause(recording, graph.end, None, "cancellation", None,
                       "the input reaches the output; its contributions cancel")]
    causes = [_cut(recording, graph, label, position) for label, position in cuts]
    causes += [_cause(recording, label, None, "independent", graph.fraction_ending_at(label),
                      "the output does not depend on this value: nothing on the way to the output read it (or "
                      "only its .data, outside the engine)")
               for label in graph.sinks() if label in reached]
    return causes or [Cause(root, "leaf", None, _site(recording, root), "independent", 1.0,
                            "no operation reading this input reaches the output")]


def _cut(recording, graph, label, position):
    node = recording.nodes[label]
    inputs = _inputs(recording, node)
    values = {"output": node.value, **{f"input[{a}]": v for a, v in inputs.items()}}
    op = node.primitive
    if op in ("ReLU", "relu"):
        reason, detail = "relu-off", f"ReLU at {fmt(inputs.get(0))} <= 0: its derivative is 0"
    elif op == "tanh" and abs(_float(node.value)) == 1:
        reason = "tanh-saturated"
        detail = f"tanh saturated to exactly {fmt(node.value)}: its derivative 1 - out**2 is 0"
    elif op == "*":
        other = inputs.get(1 - position)
        reason = "zero-derivative"
        detail = f"a product with a factor {fmt(other)}: its derivative by the other factor is that {fmt(other)}"
    else:
        reason, detail = "zero-derivative", f"the local derivative of {op} is 0 at these values"
    return _cause(recording, label, position, reason, graph.fraction(label, position), detail, values)


# -------------------- why NaN or Inf --------------------


def why_nonfinite(recording, events, graph, partials):
    """The first non-finite contribution on the leaf's paths and the ``_backward`` that wrote it from a
    finite ``.grad``, the one that made a NaN of infinities when another, and the forward value that
    first was not finite."""
    mine = graph.descendants(graph.root) | {graph.root}
    causes, origin, nan_maker = [], None, None
    for event in events:
        if type(event) is BackwardStart and not np.isfinite(_float(event.seed)):
            return [Cause(event.end, "seed", None, None, "nonfinite-seed", detail="the seed itself")]
        if type(event) is not VJPCalled or event.node not in mine:
            continue
        node = recording.nodes.get(event.node)
        for position, ingrad in enumerate(event.ingrads):
            if getattr(node, "parents", ())[position] not in mine or ingrad is None:
                continue
            made, outgrad = _float(ingrad), _float(event.outgrad)
            if origin is None and not np.isfinite(made) and np.isfinite(outgrad):
                origin = _backward_cause(recording, node, position, outgrad, made, partials)
            if nan_maker is None and np.isnan(made) and not np.isnan(outgrad):
                nan_maker = _backward_cause(recording, node, position, outgrad, made, partials)
    causes += [c for c in (origin, nan_maker) if c is not None]
    if origin is not None and nan_maker is not None and (origin.node, origin.argnum) == (nan_maker.node,
                                                                                       nan_maker.argnum):
        causes = [origin]
    forward = _forward_origin(recording, graph, mine)
    return causes + ([forward] if forward is not None else [])


def _backward_cause(recording, node, position, outgrad, made, partials):
    inputs = _inputs(recording, node)
    derivative = partials.get((node.label, position))
    primitive = _primitive(node.primitive)
    argnum = node.argnums[position] if node.argnums else position
    if not np.isfinite(outgrad):  # a NaN of infinities: 0 * inf (ReLU off, a factor 0), inf - inf
        reason = "zero-times-inf" if derivative == 0 or primitive == "multiply" else "nonfinite-input"
        detail = f"its _backward made {fmt(made)} from a .grad of {fmt(outgrad)} (local derivative {fmt(derivative)})"
    else:
        reason = nonfinite_reason(primitive, argnum, _reason_inputs(node, inputs), made, derivative, node.value)
        detail = f"its _backward wrote {fmt(made)} into its child's .grad from a finite .grad {fmt(outgrad)}"
    values = {"outgrad": outgrad, "ingrad": made, **{f"input[{a}]": v for a, v in inputs.items()},
              "output": node.value, "derivative": derivative}
    return Cause(node.label, node.primitive, argnum, node.site, reason, detail=detail,
                 values={k: v for k, v in values.items() if v is not None})


def _forward_origin(recording, graph, mine):
    """The first value on the leaf's paths that was not finite while its children's were."""
    for label in graph.order:
        node = recording.nodes.get(label)
        if label not in mine or label == graph.root or not _is_number(getattr(node, "value", None)):
            continue
        if np.isfinite(_float(node.value)):
            continue
        inputs = _inputs(recording, node)
        if all(np.isfinite(_float(v)) for v in inputs.values()):
            reason = nonfinite_reason(_primitive(node.primitive), 0, _reason_inputs(node, inputs), _float(node.value))
            return Cause(label, node.primitive, 0, node.site, reason, forward=True,
                         detail=f"its forward value was already {fmt(node.value)}",
                         values={f"input[{a}]": v for a, v in inputs.items()})
    return None


# -------------------- helpers --------------------


def _inputs(recording, node):
    """argnum -> the child's recorded data."""
    return {position: getattr(recording.nodes.get(parent), "value", None)
            for position, parent in enumerate(node.parents)
            if _is_number(getattr(recording.nodes.get(parent), "value", None))}


def _reason_inputs(node, inputs):
    """The inputs as the reasons read them: ``x**k`` is ``power(x, k)``."""
    k = exponent(node.primitive)
    return {0: inputs.get(0), 1: float(k)} if k is not None and 0 in inputs else inputs


def _primitive(op):
    return "power" if exponent(op) is not None else PRIMITIVES.get(op, str(op))


def exponent(op):
    if isinstance(op, str) and op.startswith("**"):
        try:
            return float(op[2:])
        except ValueError:
            return None
    return None


def _cause(recording, label, position, reason, fraction, detail, values=None):
    node = recording.nodes.get(label)
    argnum = node.argnums[position] if position is not None and getattr(node, "argnums", None) else position
    return Cause(label, getattr(node, "primitive", "leaf") or "leaf", argnum, getattr(node, "site", None), reason,
                 fraction, detail, values or {})


def _named(explanation, names, arguments):
    """The causes with their nodes' variable names; an argument's leaf on no line (adtrace made it)."""
    return replace(explanation, causes=tuple(
        replace(c, name=names.get(c.node), line=None if c.node in arguments else c.line) for c in explanation.causes))


def _site(recording, label):
    return getattr(recording.nodes.get(label), "site", None)


def _ancestors(graph, end):
    seen, stack = set(), [end]
    while stack:
        for parent in graph.get(stack.pop(), ()):
            if parent not in seen:
                seen.add(parent)
                stack.append(parent)
    return seen


def _is_number(value):
    return value is not None and np.ndim(value) == 0 and np.asarray(value).dtype.kind in "biuf"


def _float(value):
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def _magnitude(value):
    return abs(_float(value))


def _number(label):
    head = label.split("_", 1)[0]
    return int(head[1:]) if head[1:].isdigit() else math.inf

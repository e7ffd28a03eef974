"""Explaining a recording of a value class whose ``data`` and ``.grad`` are numpy arrays (a learner's tensor
engine: elementwise ops with broadcasting, ``@``, ``sum``), element by element (``w[0, 1]``).

- **where an element's gradient came from**: the writes into its leaf's ``.grad`` at that element (a write
  of a number or of an array numpy broadcast counts at every element), added in the recorded order, give
  the recorded ``.grad`` there bit for bit (``Explanation.exact``), per source line;
- **local Jacobians**: a class's ``_backward`` is a closure adtrace cannot run again on a unit cotangent,
  so a node's Jacobian is its op's rule (``recording.code.ops.vjp``: elementwise ops, ``**k``, ``@``,
  ``sum``) at the recorded values (an elementwise op's: its diagonal, broadcasting included; ``@``'s and
  ``sum``'s: on unit cotangents, a ``0 * inf`` NaN where the rule's structure has no entry read as 0), and
  only where the op computes the recorded value from the recorded inputs and its rule, run on the recorded
  ``.grad``, gives what the closure wrote (``SAME``). Else it is not known: the node is taken to connect
  every element to every element, and a zero that reaches the output through it is ``unknown``;
- **why zero**: the element's influence followed forward, element by element: an entry of a Jacobian that
  is 0 where the op's structure (its rule at other, random values) connects is a cut (``relu-off``,
  ``tanh-saturated``, ``zero-derivative``); a value nothing on the way to the output read is
  ``independent``, as is an input nothing read; reaching the output along known, non-zero entries only:
  ``cancellation``; a write ``.grad = c`` over a value not 0 on the element's paths: ``grad-replaced``;
- **why NaN or infinite**: the first ``_backward`` on the element's paths that wrote a non-finite value
  at an element it reaches from a finite ``.grad`` (``log-of-zero``, ``division-by-zero``, ``sqrt-at-zero``
  for ``**0.5``, ``power-at-zero``), the one that made a NaN of infinities, and the first forward value
  not finite there, each with its inputs at that element.

Paths: from the element through the nodes' elements along the ops' derivatives at the recorded values (the
rule's Jacobian where the op computes the recorded value, written by the class's ``_backward`` or not: the
table shows the derivative, ``Explanation.paths_sum`` says when the pass wrote another gradient), at most
``MAX_PATHS``.
"""

import math
from dataclasses import replace

import numpy as np

from ..recording.events import AddOutgrads, VJPCalled
from ..report.format import fmt
from .contributions import Contribution, by_line, fold, line_of, rounding, same
from .elements import select
from .explanation import Cause, Explanation, Explanations, Path, verdict_of
from .graph import Graph
from .reasons import nonfinite_reason
from . import scale

EACH = 3
MAX_ENTRIES = 1 << 20  # a Jacobian of more entries is not made (not known)
MAX_PATHS, SHOWN = 10_000, 10  # element paths enumerated at most; shown
MAX_RULE_CALLS = 200_000  # rule calls on unit cotangents per explanation, all Jacobians together; past it, not known
SAME = 1e-9  # relative: the rule reproduces the closure's write (a matmul's sums may round in another order)
STRUCTURAL = ("@", "sum", "mean")  # ops whose output element is not their inputs' element at the same place
UNKNOWN = "the gradient is 0 but the element reaches the output through this node, {}: why is not known"
WHY_NOT_KNOWN = {  # why a node's Jacobian is not known (Jacobians.why)
    "no-rule": "whose op adtrace has no rule for here (or whose rule does not compute its recorded value)",
    "not-its-rule": "whose _backward is not its op's rule here (the rule does not reproduce what it wrote)",
    "no-structure": "whose rule's structure adtrace cannot tell (a 0 of its Jacobian is not told from no edge)",
    "too-large": "too large to follow (its Jacobian exceeds adtrace's limits)",
    "not-read": "whose _backward's write adtrace could not read (what it added is not known)",
}


def arrays_in(recording):
    """Whether a value class's recording holds array-valued data."""
    return any(np.ndim(getattr(node, "value", None)) > 0 for node in recording.nodes.values())


def explain_arrays(recording, query, events, start, grads, wrt, names, largest, arguments, used, variables):
    """``Explanations`` of the elements ``wrt`` names (``x[3]``, ``w[0, 1]``, ``w``: each element), by
    default those whose gradient is zero, non-finite or largest, ``EACH`` of each, among the ``used`` leaves."""
    by_name = {name: label for label, name in names.items()}
    shapes = {label: np.shape(_data(recording, label)) for label in grads}
    if wrt is None:
        chosen = _default(grads, shapes, [label for label in grads if label in used], names, largest)
    else:
        chosen = [pick for s in ([wrt] if isinstance(wrt, str) else wrt) for pick in _selected(s, grads, by_name,
                                                                                               shapes, names)]
    found = Explanations()
    jacobians = Jacobians(recording, events)
    for label, index in chosen:
        graph = Graph(recording.graph(), label, start.end, _data(recording, label))
        name = names.get(label, label)
        explanation = explain_element(recording, events, graph, jacobians, grads[label], shapes[label], index, name,
                                      start.seed)
        found.append(replace(explanation, causes=tuple(
            replace(c, name=variables.get(c.node), line=None if c.node in arguments else c.line)
            for c in explanation.causes)))
    found.lines = scale.by_line(recording, query, skip=set(arguments))
    leaves = dict.fromkeys(label for label, _ in chosen)
    found.leaves = tuple(s for label in leaves for s in scale.by_leaf(_at_all(grads[label], shapes[label]),
                                                                      names.get(label, label)))
    return found


def explain_element(recording, events, graph, jacobians, grad, shape, index, name, seed=1.0):
    gradient = _element(grad, shape, index)
    found = contributions(recording, events, graph.root, shape, index)
    verdict = verdict_of(gradient)
    at = int(np.ravel_multi_index(index, shape)) if shape else 0
    replaced = tuple(_replaced(recording, events, graph, jacobians, shape, index, at))
    causes = ()
    if verdict == "zero":
        causes = tuple(c for c in why_zero(recording, graph, jacobians, at)
                       if not (replaced and c.reason in ("cancellation", "unknown")))
    elif verdict == "nonfinite":
        causes = tuple(why_nonfinite(recording, events, graph, jacobians, at, name))
    shares = by_line(found)
    exact = same(fold(found), gradient) if found and all(c.value is not None for c in found) else None
    selector = name + ("[" + ", ".join(str(i) for i in index) + "]" if index else "")
    shown, more, more_sum = element_paths(graph, jacobians, at, selector, seed)
    return Explanation(selector, gradient, verdict, causes + replaced, tuple(shares), tuple(found), exact,
                       rounding(gradient, shares) if exact is not None else None, shown, more, more_sum)


def element_paths(graph, jacobians, at, selector, seed):
    """``(shown, more, more_sum)``: the element's paths to the output's elements (``v3_ReLU[1]``) along the
    ops' derivatives not 0, each product times the seed there, largest first; ``((), 0, None)`` when a node on
    the way has no derivative here or the paths exceed ``MAX_PATHS``."""
    seed = np.ravel(np.asarray(seed, dtype=float))
    found, stack = [], [(((graph.root, at),), 1.0)]
    with np.errstate(all="ignore"):
        while stack:
            steps, product = stack.pop()
            label, k = steps[-1]
            if label == graph.end:
                names = (selector,) + tuple(f"{node}[{i}]" for node, i in steps[1:])
                found.append(Path(names, np.float64(product) * (seed[k] if k < seed.size else np.nan)))
                continue
            for consumer, position in graph.consumers.get(label, ()):
                if not graph.to_end.get(consumer):
                    continue
                J = jacobians.derivative(consumer, position)
                if J is None or k >= J.shape[1]:
                    return (), 0, None
                column = _column(J, k)
                for m in np.flatnonzero(column != 0):
                    stack.append((steps + ((consumer, int(m)),), product * column[m]))
            if len(found) + len(stack) > MAX_PATHS:
                return (), 0, None
    found.sort(key=lambda p: -abs(p.value) if np.isfinite(p.value) else -np.inf)
    rest = found[SHOWN:]
    return tuple(found[:SHOWN]), len(rest), (sum(p.value for p in rest) if rest else None)


# -------------------- elements and contributions --------------------


def contributions(recording, events, leaf, shape, index):
    """The writes into the leaf's ``.grad`` at the element, in order (a write adtrace could not split: what
    it changed there)."""
    found = []
    for event in events:
        if type(event) is AddOutgrads and event.parent == leaf and event.node is not None:
            node = recording.nodes.get(event.node)
            result = event.result[0] if event.result else None
            value = event.contribution
            if value is None and result is not None and event.previous is not None:
                value = _subtract(result, event.previous[0])
            found.append(Contribution(event.node, getattr(node, "primitive", ""), event.argnum,
                                      line_of(node, event.node), _element(value, shape, index),
                                      _element(result, shape, index)))
    return found


def _subtract(a, b):
    with np.errstate(all="ignore"):
        return np.subtract(a, b)


def _element(value, shape, index):
    """``value`` (a number, or an array numpy broadcasts to ``shape``) at ``index``; None when not."""
    if value is None:
        return None
    try:
        return np.broadcast_to(np.asarray(value), shape)[tuple(index)][()]
    except (ValueError, TypeError, IndexError):
        return None


def _at_all(value, shape):
    try:
        return np.broadcast_to(np.asarray(value, dtype=float), shape)
    except (ValueError, TypeError):
        return np.full(shape, np.nan)


def _default(grads, shapes, used, names, largest, each=EACH):
    entries = [(label, tuple(int(i) for i in index), _number(_element(grads[label], shapes[label], index)))
               for label in used for index in np.ndindex(*shapes[label])]
    nonfinite = [(label, index) for label, index, g in entries if not np.isfinite(g)][:each]
    zero = [(label, index) for label, index, g in entries if g == 0][:each]
    big = sorted((e for e in entries if np.isfinite(e[2]) and e[2] != 0), key=lambda e: -abs(e[2]))
    return list(dict.fromkeys(nonfinite + zero + [(label, index) for label, index, _ in big][:each if largest else 0]))


def _selected(selector, grads, by_name, shapes, names):
    from .value_class import NoSuchLeaf
    head = selector.split("[", 1)[0].strip()
    label = by_name.get(head, head)
    if label not in grads:
        known = ", ".join(names.get(g, g) for g in list(grads)[:12])
        raise NoSuchLeaf(f"{head} names no leaf of the recorded pass (leaves: {known})")
    try:
        picked = select(selector, np.zeros(shapes[label]), head)
    except ValueError as exc:
        raise NoSuchLeaf(str(exc)) from exc
    return [(label, e.index) for e in picked]


# -------------------- local Jacobians --------------------


class Jacobians:
    """Per (node, position): the class's rule's Jacobian at the recorded values when the rule reproduces the
    recorded write (else None: not known), and the rule's structure (its Jacobian at random values)."""

    def __init__(self, recording, events):
        self.recording = recording
        self.vjps = {e.node: e for e in events if type(e) is VJPCalled}
        self.made = {}
        self.calls = 0  # (MAX_RULE_CALLS)
        self.over = set()  # (kind, label, position) not made: past MAX_RULE_CALLS

    def local(self, label, position):
        return self._once(("local", label, position), self._local)

    def structure(self, label, position):
        return self._once(("structure", label, position), self._structure)

    def derivative(self, label, position):
        """The op's derivative at the recorded values (the rule's Jacobian where the op computes the recorded
        value), whether or not the class's ``_backward`` wrote it: what a path table shows."""
        return self._once(("derivative", label, position), self._derivative)

    def _derivative(self, label, position):
        rule, out, inputs = self._rule(label)
        return None if rule is None else self._masked(self._jacobian(label, rule, out, inputs, position), label,
                                                      position)

    def _jacobian(self, label, rule, out, inputs, position):
        """An elementwise op's Jacobian is its diagonal (``Diagonal``, broadcasting included); ``@``'s and
        ``sum``'s dense."""
        if self.recording.nodes[label].primitive not in STRUCTURAL:
            try:
                if np.broadcast_shapes(*(v.shape for v in inputs)) == out.shape:
                    return _diagonal(rule, out, inputs, position)
            except ValueError:
                return None
        return _jacobian(rule, out, inputs, position)

    def _masked(self, J, label, position):
        """A dense Jacobian's NaN where the rule's structure has no entry is a unit cotangent's ``0 * inf``: 0."""
        if J is None or isinstance(J, Diagonal):
            return J
        S = self.structure(label, position)
        if isinstance(S, np.ndarray) and S.shape == J.shape:
            J = np.where(np.isnan(J) & (S == 0), 0.0, J)
        return J

    def _once(self, key, make):
        if key not in self.made:
            size = int(np.size(getattr(self.recording.nodes.get(key[1]), "value", None)))
            self.calls += size
            self.made[key] = make(*key[1:]) if self.calls <= MAX_RULE_CALLS else None
            if self.calls > MAX_RULE_CALLS:
                self.over.add(key)
        return self.made[key]

    def why(self, label, position):
        """Why the node's Jacobian at ``position`` is not known: a key of ``WHY_NOT_KNOWN``."""
        if {("local", label, position), ("structure", label, position)} & self.over:
            return "too-large"
        rule, out, inputs = self._rule(label)
        if rule is None:
            return "no-rule"
        if (self.recording.nodes[label].primitive in STRUCTURAL
                and out.size * inputs[position].size > MAX_ENTRIES):
            return "too-large"
        event = self.vjps.get(label)
        if event is None or position >= len(event.ingrads) or event.ingrads[position] is None:
            return "not-read"
        if self.local(label, position) is not None and self.structure(label, position) is None:
            return "no-structure"
        return "not-its-rule"

    def _rule(self, label):
        node = self.recording.nodes.get(label)
        code = self.recording.code
        parents = getattr(node, "parents", ())
        if not parents or code is None or None in (node.argnums or (None,)):
            return None, None, None
        inputs = [np.asarray(getattr(self.recording.nodes.get(p), "value", None)) for p in parents]
        if any(v.dtype.kind not in "biuf" for v in inputs) or not _computes(code.ops, node, inputs):
            return None, None, None
        return code.ops.vjp(node.primitive, len(parents)), np.asarray(node.value), inputs

    def _local(self, label, position):
        rule, out, inputs = self._rule(label)
        event = self.vjps.get(label)
        if rule is None or event is None or not self._reproduces(rule, out, inputs, event, position):
            return None
        return self._masked(self._jacobian(label, rule, out, inputs, position), label, position)

    def _reproduces(self, rule, out, inputs, event, position):
        shape = inputs[position].shape
        try:
            with np.errstate(all="ignore"):
                made = np.broadcast_to(rule(np.asarray(event.outgrad, dtype=float), out, *inputs)[position], shape)
                written = np.broadcast_to(np.asarray(event.ingrads[position], dtype=float), shape)
                scale_ = np.nanmax(np.abs(np.where(np.isfinite(written), written, 0)), initial=0.0)
                return bool(np.allclose(made, written, rtol=SAME, atol=SAME * scale_, equal_nan=True))
        except (ValueError, TypeError, IndexError):
            return False

    def _structure(self, label, position):
        rule, out, inputs = self._rule(label)
        if rule is None:
            return None
        rng = np.random.default_rng(0)
        moved = [rng.uniform(0.5, 1.5, v.shape) if v.dtype.kind == "f" else v for v in inputs]
        forward = self.recording.code.ops.forward(self.recording.nodes[label].primitive, len(inputs))
        try:
            with np.errstate(all="ignore"):
                value = np.asarray(forward(*moved))
        except (ValueError, TypeError):
            return None
        return self._jacobian(label, rule, value, moved, position)


def _computes(ops, node, inputs):
    """Whether the op, as adtrace knows it, computes the recorded value from the recorded inputs (its rule is
    then the derivative of what the class computed)."""
    forward = ops.forward(node.primitive, len(inputs))
    if forward is None:
        return False
    try:
        with np.errstate(all="ignore"):
            value = np.asarray(forward(*inputs), dtype=float)
            recorded = np.asarray(node.value, dtype=float)
            return value.shape == recorded.shape and bool(np.allclose(value, recorded, rtol=SAME, atol=0,
                                                                      equal_nan=True))
    except (ValueError, TypeError):
        return False


class Diagonal:
    """An elementwise op's Jacobian: output element ``m`` reads only the input's element ``columns[m]`` (numpy's
    broadcasting), with the derivative ``values[m]``; no dense ``(out_size, in_size)`` matrix is made."""

    def __init__(self, values, columns, in_size):
        self.values, self.columns, self.shape = values, columns, (values.size, in_size)


def _diagonal(rule, out, inputs, position):
    """The rule on a cotangent of ones, the inputs spread to the output's shape: each element's derivative."""
    try:
        spread = [np.broadcast_to(v, out.shape) for v in inputs]
        with np.errstate(all="ignore"):
            values = np.ravel(np.broadcast_to(rule(np.ones(out.shape), out, *spread)[position], out.shape))
    except (ValueError, TypeError, IndexError):
        return None
    parent = inputs[position]
    columns = np.ravel(np.broadcast_to(np.arange(parent.size).reshape(parent.shape), out.shape))
    return Diagonal(values.astype(float), columns, parent.size)


def _column(J, k):
    """Input element ``k``'s entries, one per output element."""
    if isinstance(J, Diagonal):
        return np.where(J.columns == k, J.values, 0.0)
    return J[:, k]


def _entry(J, m, k):
    if isinstance(J, Diagonal):
        return J.values[m] if J.columns[m] == k else 0.0
    return J[m, k]


def _rows(J, S, mask):
    """Per output element: whether an input element of ``mask`` moves it (an entry not 0, or NaN), and whether
    an entry of one is 0 where the structure ``S`` connects (a cut)."""
    with np.errstate(invalid="ignore"):
        if isinstance(J, Diagonal):
            on = mask[J.columns]
            return on & ((J.values != 0) | np.isnan(J.values)), on & (S.values != 0) & (J.values == 0)
        entries = J[:, mask]
        return ((entries != 0) | np.isnan(entries)).any(axis=1), ((S[:, mask] != 0) & (entries == 0)).any(axis=1)


def _jacobian(rule, out, inputs, position):
    """``(out_size, in_size)``: row ``m`` the rule's partial adjoint of the unit cotangent ``e_m``."""
    size, parent = out.size, inputs[position]
    if size * parent.size > MAX_ENTRIES:
        return None
    J = np.empty((size, parent.size))
    try:
        with np.errstate(all="ignore"):
            for m in range(size):
                seed = np.zeros(size)
                seed[m] = 1.0
                J[m] = np.ravel(np.broadcast_to(rule(seed.reshape(out.shape), out, *inputs)[position], parent.shape))
    except (ValueError, TypeError, IndexError):
        return None
    return J


# -------------------- reach --------------------


def reach(recording, graph, jacobians, at, structural=False):
    """label -> mask of its elements the input element moves (known entries not 0; a node not known: all),
    label -> the first node ``(label, position)`` on the way whose Jacobian is not known (None: none), and the
    cuts ``(label, position, elements)``: entries 0 where the op's structure connects, at elements nothing else
    reached. ``structural``: follow the
    structure's entries too (the elements a non-finite value can flow through: ``0 * inf``)."""
    masks = {graph.root: np.zeros(max(np.size(graph.input), 1), dtype=bool)}
    masks[graph.root][at] = True
    unknown, cuts = {graph.root: None}, []
    for label in graph.order:
        if label == graph.root:
            continue
        node = recording.nodes.get(label)
        size = max(np.size(getattr(node, "value", None)), 1)
        moved, through = np.zeros(size, dtype=bool), None
        for position, parent in enumerate(getattr(node, "parents", ())):
            mask = masks.get(parent)
            if mask is None or not mask.any():
                continue
            through = through or unknown.get(parent)
            J, S = jacobians.local(label, position), jacobians.structure(label, position)
            if J is None or J.shape[0] != size or S is None or S.shape != J.shape or type(S) is not type(J):
                moved[:], through = True, through or (label, position)  # (a 0 not told from no edge)
                continue
            reached, zero = _rows(J, S, mask)
            moved |= reached
            if structural:
                moved |= zero
            elif zero.any():
                cuts.append((label, position, zero))
        if moved.any():
            masks[label], unknown[label] = moved, through
    cuts = [(label, position, zero & ~masks.get(label, np.zeros_like(zero))) for label, position, zero in cuts]
    return masks, unknown, [c for c in cuts if c[2].any() and graph.to_end.get(c[0])]


def why_zero(recording, graph, jacobians, at):
    root = graph.root
    if not graph.consumers.get(root):
        return [Cause(root, "leaf", None, _site(recording, root), "independent", 1.0,
                      "no operation read this input: the output does not depend on it")]
    masks, unknown, cuts = reach(recording, graph, jacobians, at)
    if graph.end in masks:
        if unknown.get(graph.end):
            label, position = unknown[graph.end]
            return [_cause(recording, label, position, "unknown", None,
                           UNKNOWN.format(WHY_NOT_KNOWN[jacobians.why(label, position)]))]
        return [_cause(recording, graph.end, None, "cancellation", None,
                       "the element reaches the output along local derivatives not 0; its contributions cancel")]
    causes = [_cut(recording, graph, label, position, int(np.flatnonzero(zero)[0]))
              for label, position, zero in cuts]
    causes += [_cause(recording, label, None, "independent", graph.fraction_ending_at(label),
                      "the output does not depend on this value: nothing on the way to the output read it (or "
                      "only its .data, outside the engine)")
               for label in graph.sinks() if label in masks]
    return causes or [Cause(root, "leaf", None, _site(recording, root), "independent", 1.0,
                            "no operation reading this element reaches the output")]


def _cut(recording, graph, label, position, k):
    node = recording.nodes[label]
    inputs = _inputs_at(recording, node, k)
    output = _flat_at(node.value, k)
    values = {"output": output, **{f"input[{a}]": v for a, v in inputs.items()}}
    op = node.primitive
    where = f" at element {_index(node.value, k)}" if np.size(node.value) > 1 else ""
    if op in ("ReLU", "relu"):
        reason, detail = "relu-off", f"ReLU at {fmt(inputs.get(0))} <= 0{where}: its derivative is 0"
    elif op == "tanh" and output is not None and abs(output) == 1:
        reason, detail = "tanh-saturated", f"tanh saturated to exactly {fmt(output)}{where}: its derivative is 0"
    elif op == "*":
        other = inputs.get(1 - position)
        reason = "zero-derivative"
        detail = f"a product with a factor {fmt(other)}{where}: its derivative by the other factor is that {fmt(other)}"
    else:
        reason, detail = "zero-derivative", f"the local derivative of {op} is 0{where} at these values"
    return _cause(recording, label, position, reason, graph.fraction(label, position), detail,
                  {k_: v for k_, v in values.items() if v is not None})


# -------------------- why NaN or Inf --------------------


def why_nonfinite(recording, events, graph, jacobians, at, name=None):
    masks, _, _ = reach(recording, graph, jacobians, at, structural=True)
    origin = nan_maker = None
    for event in events:
        if type(event) is not VJPCalled or event.node not in masks:
            continue
        node = recording.nodes.get(event.node)
        outgrad = np.asarray(event.outgrad, dtype=float)
        for position, ingrad in enumerate(event.ingrads):
            parent = node.parents[position]
            if parent not in masks or ingrad is None:
                continue
            try:  # (a write of another shape than the child's: not read)
                made = np.ravel(np.broadcast_to(np.asarray(ingrad, dtype=float), np.shape(_data(recording, parent))))
            except (ValueError, TypeError):
                continue
            bad = masks[parent] & ~np.isfinite(made) if made.size == masks[parent].size else ~np.isfinite(made)
            if origin is None and bad.any() and np.isfinite(outgrad).all():
                origin = _backward_cause(recording, node, position, outgrad, made, int(np.flatnonzero(bad)[0]),
                                         jacobians)
            nan = bad & np.isnan(made)
            if nan_maker is None and nan.any() and not np.isnan(outgrad).any():
                nan_maker = _backward_cause(recording, node, position, outgrad, made, int(np.flatnonzero(nan)[0]),
                                            jacobians)
    causes = [c for c in (origin, nan_maker) if c is not None]
    if origin is not None and nan_maker is not None and (origin.node, origin.argnum) == (nan_maker.node,
                                                                                       nan_maker.argnum):
        causes = [origin]
    forward = _forward_origin(recording, graph, masks)
    if forward is None:  # (made off the element's paths: a sibling's value, or an argument not finite)
        forward = _forward_source(recording, graph, [c.node for c in causes] or [graph.end], name)
    return causes + ([forward] if forward is not None else [])


def _backward_cause(recording, node, position, outgrad, made, k, jacobians):
    """The cause at the parent's element ``k`` (read at the output's element ``k`` when the shapes agree)."""
    elementwise = np.size(node.value) == made.size
    inputs = _inputs_at(recording, node, k) if elementwise else {}
    g = _flat_at(np.broadcast_to(outgrad, np.shape(node.value)), k) if elementwise else None
    J = jacobians.local(node.label, position) if elementwise else None
    derivative = _entry(J, k, k) if J is not None else None
    primitive = _primitive(node.primitive)
    argnum = node.argnums[position] if node.argnums else position
    output = _flat_at(node.value, k) if elementwise else None
    if g is not None and not np.isfinite(g):
        reason = "zero-times-inf" if derivative == 0 or primitive == "multiply" else "nonfinite-input"
    else:
        reason = nonfinite_reason(primitive, argnum, _reason_inputs(node, inputs), made[k], derivative, output)
    parent = _data(recording, node.parents[position])
    where = f" at element {_index(parent, k)} of" if np.ndim(parent) else " into"
    detail = f"its _backward wrote {fmt(made[k])}{where} its child's .grad"
    values = {"outgrad": g, "ingrad": made[k], **{f"input[{a}]": v for a, v in inputs.items()}, "output": output,
              "derivative": derivative}
    return Cause(node.label, node.primitive, argnum, node.site, reason, detail=detail,
                 values={key: v for key, v in values.items() if v is not None})


def _forward_origin(recording, graph, masks):
    for label in graph.order:
        node = recording.nodes.get(label)
        if label == graph.root or label not in masks:
            continue
        value = np.ravel(np.asarray(node.value, dtype=float))
        bad = ~np.isfinite(value) & (masks[label] if masks[label].size == value.size else True)
        parents = [np.asarray(_data(recording, p), dtype=float) for p in node.parents]
        if not bad.any() or not all(np.isfinite(p).all() for p in parents):
            continue
        k = int(np.flatnonzero(bad)[0])
        inputs = _inputs_at(recording, node, k)
        reason = nonfinite_reason(_primitive(node.primitive), 0, _reason_inputs(node, inputs), value[k])
        return Cause(label, node.primitive, 0, node.site, reason, forward=True,
                     detail=f"its forward value was already {fmt(value[k])}"
                     + (f" at element {_index(node.value, k)}" if np.ndim(node.value) else ""),
                     values={f"input[{a}]": v for a, v in inputs.items()})
    return None


def _forward_source(recording, graph, labels, name):
    """The first value, among those ``labels`` were computed from, that was not finite where its inputs were
    (an argument's element already not finite: ``nonfinite-input``)."""
    above, stack = set(), list(labels)
    while stack:
        label = stack.pop()
        if label not in above:
            above.add(label)
            stack.extend(graph.parents.get(label, ()))
    for label in (label for label in graph.order if label in above):
        node = recording.nodes.get(label)
        try:
            value = np.ravel(np.asarray(getattr(node, "value", None), dtype=float))
            parents = [np.asarray(_data(recording, p), dtype=float) for p in graph.parents.get(label, ())]
        except (TypeError, ValueError):
            continue
        bad = np.flatnonzero(~np.isfinite(value))
        if not bad.size or not all(np.isfinite(p).all() for p in parents):
            continue
        k = int(bad[0])
        where = f" at element {_index(node.value, k)}" if np.ndim(node.value) else ""
        if not parents:
            who = (name if label == graph.root and name else label) + (_index(node.value, k) if np.ndim(node.value)
                                                                         else "")
            return Cause(label, "leaf", None, getattr(node, "site", None), "nonfinite-input", forward=True,
                         detail=f"the input {who} was already {fmt(value[k])}: the argument is not finite")
        inputs = _inputs_at(recording, node, k)
        reason = nonfinite_reason(_primitive(node.primitive), 0, _reason_inputs(node, inputs), value[k])
        return Cause(label, node.primitive, 0, node.site, reason, forward=True,
                     detail=f"its forward value was already {fmt(value[k])}{where}",
                     values={f"input[{a}]": v for a, v in inputs.items()})
    return None


def _replaced(recording, events, graph, jacobians, shape, index, at):
    """``grad-replaced``: a write ``.grad = c`` over a value not 0, into the leaf's ``.grad`` at the element
    or into a value its paths reach (what was lost never reached the leaf)."""
    masks = None
    for event in events:
        if type(event) is not AddOutgrads or not event.replaced or event.previous is None:
            continue
        if event.parent == graph.root:
            lost = _element(event.previous[0], shape, index)
            into = ""
        else:
            if masks is None:
                masks = reach(recording, graph, jacobians, at, structural=True)[0]
            if event.parent not in masks or not graph.to_end.get(event.parent):
                continue
            lost, into = event.previous[0], f" of {event.parent}"
        if lost is None or not np.any(np.asarray(lost) != 0):
            continue
        node = recording.nodes.get(event.node)
        argnum = node.argnums[event.position] if getattr(node, "argnums", None) else event.position
        yield Cause(event.node, getattr(node, "primitive", "") or "leaf", argnum, getattr(node, "site", None),
                    "grad-replaced", None, f"its _backward assigned .grad{into} = ... over a value not 0, which was "
                    "lost (write .grad += ...)")


# -------------------- helpers --------------------


def _data(recording, label):
    return getattr(recording.nodes.get(label), "value", None)


def _index(value, k):
    """The flat position ``k`` of ``value`` as its index, ``[0, 1]``."""
    shape = np.shape(value)
    return "[" + ", ".join(str(int(i)) for i in np.unravel_index(k, shape)) + "]" if shape else "[]"


def _flat_at(value, k):
    flat = np.ravel(np.asarray(value))
    return flat[k][()] if k < flat.size else None


def _inputs_at(recording, node, k):
    """argnum -> the child's data at the output's element ``k`` (numpy's broadcasting), when it holds numbers
    and the op is elementwise (not ``@``, ``sum``)."""
    found = {}
    if node.primitive in STRUCTURAL:
        return found
    for position, parent in enumerate(node.parents):
        value = _data(recording, parent)
        try:
            found[position] = _flat_at(np.broadcast_to(np.asarray(value), np.shape(node.value)), k)
        except (ValueError, TypeError):
            continue
    return {a: v for a, v in found.items() if v is not None and np.asarray(v).dtype.kind in "biuf"}


def _primitive(op):
    from .value_class import PRIMITIVES, exponent
    k = exponent(op)
    if k == 0.5:
        return "sqrt"
    return "power" if k is not None else PRIMITIVES.get(op, str(op))


def _reason_inputs(node, inputs):
    from .value_class import exponent
    k = exponent(node.primitive)
    if k is not None and k != 0.5 and 0 in inputs:
        return {0: inputs[0], 1: float(k)}
    return inputs


def _cause(recording, label, position, reason, fraction, detail, values=None):
    node = recording.nodes.get(label)
    argnum = node.argnums[position] if position is not None and getattr(node, "argnums", None) else position
    return Cause(label, getattr(node, "primitive", "leaf") or "leaf", argnum, getattr(node, "site", None), reason,
                 fraction, detail, values or {})


def _site(recording, label):
    return getattr(recording.nodes.get(label), "site", None)


def _number(value):
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan

"""Why an input element's gradient is zero: where its influence stops on the way to the output.

The element's influence is followed forward (``reach.follow``): it stops at

- a **cut**: an element-wise node whose diagonal derivative is 0 where the parent is reached (relu
  off, ``where``'s other branch, ``clip`` saturated, ``abs`` at 0, a product with 0), on a node that
  has a path to the output (autograd's ``floor``, ``round``, ``sign`` make no node: ``escapes.py``);
- a **sink**: a reached node nothing consumes, not the output (its value left the trace: ``._value``,
  a plain numpy call, or was not used): ``left-trace``;
- a node that does not read the reached elements (another index, another key of a dict):
  ``independent``, named only when nothing else explains the zero; an input no node consumes is
  ``independent`` at the input itself.

If the influence does reach the output, the zero is a ``cancellation`` of contributions, unless it
went through a node it could not follow element-wise (``unknown``, named: record with ``calls=True``).
"""

from dataclasses import replace

import numpy as np

from .elements import size
from .explanation import Cause
from .graph import Graph
from .jacobians import moved, structural
from .reach import follow
from .reasons import REDUCTIONS_SELECTING, SELECTIONS, ZERO_DEFAULT, ZERO_REASONS, selection_reason, zero_reason


def why_zero(recording, query, graph, element):
    """The ``Cause``s of a zero gradient at ``element`` of the input."""
    found = follow(recording, query, graph, element, guess=False)  # (never another element's nodes)
    reached, touched, cuts, stops = found.reached, found.touched, found.cuts, found.stops
    unknown = [label for label, position, _ in stops if position is None]
    lost = [_cause(recording, label, None, "unknown", None, LOST.format(where=element.selector("") or "()"))
            for label in dict.fromkeys(found.lost)]
    if graph.end in reached and (unknown or lost):
        return [_cause(recording, label, None, "unknown", None, "its local Jacobian is not known (record with "
                       "calls=True, or a node above jacobians.MAX_ELEMENTS or past its MAX_ENTRIES numbers kept): "
                       "taken as connecting every element")
                for label in unknown] + lost
    if graph.end in reached:
        return [_cause(recording, graph.end, None, "cancellation", None,
                       "the input reaches the output; its contributions cancel")]
    # the fraction of the element's own paths: over the nodes it reaches with every cut closed
    own = Graph({label: graph.parents[label] for label in touched}, graph.root, graph.end, graph.input)
    left = [_cause(recording, label, None, "left-trace", own.fraction_ending_at(label),
                   "nothing traced consumes this value: it left autograd's trace (._value, a plain numpy call) "
                   "or was not used") for label in graph.sinks() if label in reached]
    zeros = [_stop(recording, own, label, position, mask) for label, position, mask in stops if position is not None]
    causes = [_cut(recording, own, *cut) for cut in cuts] + [c for c in zeros if c.reason != "independent"] + left
    if not causes and not lost:
        causes = zeros
    unsure = found.unsure
    if unsure and causes:  # the gradient reaching each unsure node was 0 there: it came from downstream
        known = {c.node for c in causes}
        unsure = [u for u in unsure if recording.nodes[u[0]].primitive in PIECEWISE  # (one may have cut too)
                  or not known & graph.descendants(u[0])]
    if unsure and causes:  # an earlier node may have cut it: the recording cannot tell which did
        after = set().union(*(graph.descendants(label) for label, _, _ in unsure))
        causes = [c for c in causes if c.node not in after] + [_unsure(recording, own, *u) for u in unsure] + [
            replace(c, fraction=None, detail=c.detail + UNSURE_AFTER) for c in causes if c.node in after]
    causes += lost
    return causes or [_cause(recording, graph.root, None, "independent", 1.0,
                             "no traced operation reaching the output reads the input")]


PIECEWISE = frozenset(ZERO_REASONS) | {"abs", "absolute", "fabs"}  # a derivative 0 on a region or at a kink
UNSURE = ("its local derivative at element {where} is not known from this recording (the gradient that reached it "
          "was 0 there): it may be what cut the path; record with capture=\"full\", sites=True, calls=True to tell")
LOST = ("this recording cannot follow element {where} through this node (its call was not kept, or its Jacobian is "
        "too large to re-evaluate): what happens to it beyond is not known; record with capture=\"full\", sites=True, "
        "calls=True to tell")
UNSURE_AFTER = " (after a node whose derivative this recording does not tell: it may not be the cut)"


def _unsure(recording, graph, label, position, mask):
    at = int(np.flatnonzero(mask)[0])
    return _cause(recording, label, position, "unknown", None,
                  UNSURE.format(where=_index(recording.nodes[label].value, at)))


def _stop(recording, graph, label, position, from_parent):
    """A node whose local derivatives from the reached elements are all 0: by the primitive's structure
    (``independent``: it does not read them) or by the values (``zero-derivative``: a factor is 0 here)."""
    fraction = graph.fraction(label, position) or 1.0
    primitive = getattr(recording.nodes.get(label), "primitive", None)
    if primitive in REDUCTIONS_SELECTING:
        which = "maximum" if "max" in primitive else "minimum"
        return _cause(recording, label, position, "not-selected", fraction,
                      f"the element is not the {which}: {primitive}'s derivative is 0 for every other element")
    J = structural(recording, label, position)
    if J is not None and moved(J, from_parent).any():
        return _cause(recording, label, position, "zero-derivative", fraction,
                      "its local derivatives from the element are 0 at these values (a factor of them is 0)")
    return _cause(recording, label, position, "independent", fraction,
                  "this node does not read the input's element (another index or key)")


def _cut(recording, graph, label, position, parent, cut):
    node = recording.nodes[label]
    at = int(np.flatnonzero(cut)[0])
    values = {"output": _at(node.value, at)}
    parent_value = graph.value_of(recording, parent)
    if parent_value is not None and size(parent_value) == size(node.value):
        values["input"] = _at(parent_value, at)
    elements = np.flatnonzero(cut)
    where = f"element {_index(node.value, at)}" + (f" and {len(elements) - 1} more" if len(elements) > 1 else "")
    reason = zero_reason(node.primitive)
    others = {a: v for a, v in graph.inputs_at(recording, node, at).items() if a != node.argnums[position]}
    if node.primitive in SELECTIONS:  # the other selected: the output is its value (a constant 0: a relu)
        reason = selection_reason(1 - node.argnums[position] in node.argnums, values["output"])
    if reason in (ZERO_DEFAULT, "saturated", "not-selected"):  # a product with 0 (log(1) * b): which factor
        values.update((f"input[{a}]", v) for a, v in others.items())
    return _cause(recording, label, position, reason, graph.fraction(label, position),
                  f"local derivative 0 at {where}", values)


def _cause(recording, label, position, reason, fraction, detail, values=None):
    node = recording.nodes.get(label)
    argnum = node.argnums[position] if position is not None and hasattr(node, "argnums") else None
    return Cause(label, getattr(node, "primitive", "root"), argnum, getattr(node, "site", None), reason,
                 fraction, detail, values or {})


def _at(value, at):
    return np.ravel(np.asarray(value))[at]


def _index(value, at):
    shape = np.shape(value)
    return "[" + ", ".join(str(int(i)) for i in np.unravel_index(at, shape)) + "]" if shape else "()"


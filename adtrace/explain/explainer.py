"""``explain_recording(recording, wrt=...)``: an ``Explanation`` per input element of the user's
backward pass, and the elements explained by default (zero, non-finite and largest gradients).

Values must be kept whole (``record(capture="full")``); element-level zero analysis across array
nodes needs each node's call (``record(calls=True)``), lines need ``sites=True``.
"""

from dataclasses import replace

import numpy as np
from autograd.core import vspace

from ..recording.events import BackwardStart, TraceReturned
from ..recording.names import variable_names
from ..recording.registry import unrecorded
from ..recording.values import ArraySummary, ContainerSummary
from .casts import integer_casts
from .contributions import by_line, fold, recorded_contributions, rounding, same
from .elements import component, elements, leaves, parse_selector, select, size
from . import scale
from .explanation import Cause, Explanation, Explanations, verdict_of
from .graph import Graph
from .nonfinite import why_nonfinite
from .paths import element_paths, paths, scalar_graph
from .value_class import explain_values
from .zero import why_zero
from .query_index import ReadOnce, query_index

EACH = 3  # default elements: this many of each kind (zero, non-finite, largest)
UNPROBED = ("autograd traced no path from the input to the output (no backward pass ran): it does not depend on "
            "the input, unless a value left the trace or went through floor, round or sign (adtrace explain runs "
            "the function again to tell)")


def explain_recording(recording, wrt=None, name=None, largest=True, names=None):
    """``wrt``: selectors (``"x[3]"``, ``"params['W'][0, 1]"``, ``Element``s), or None for the
    default elements (without the largest ones if not ``largest``). ``name``: the argument's name in
    the selectors shown, by default the one the selectors use, else ``x``. A value class's recording
    (micrograd's): ``wrt`` names leaves (``value_class.py``),
    ``names`` (label -> name) gives some leaves names. Run unseen by any recording open here."""
    if recording.engine != "autograd":
        return unrecorded(explain_values, recording, wrt, names, largest)
    if name is None:
        name = selectors_name(wrt) or "x"
    return unrecorded(_explain_autograd, ReadOnce(recording), wrt, name, largest)


def _explain_autograd(recording, wrt, name, largest):
    query = recording.user_query()
    trace = _trace(recording, query)
    if trace is None:
        raise ValueError("nothing to explain: the recording holds no reverse-mode trace")
    if recording.capture == "structure" or isinstance(trace.input, (ArraySummary, ContainerSummary)):
        raise ValueError(f"explain needs the values whole; this recording kept them under capture="
                         f"{recording.capture!r}: record(capture=\"full\", sites=True, calls=True)")
    _supported(trace.input)
    gradient = recording.gradient(query) if query is not None else None
    chosen = _selected(wrt, trace.input) if wrt is not None else default_elements(
        trace.input, gradient, largest=largest)
    if not chosen:
        return Explanations()
    if query is None:  # "Output seems independent of input": no backward pass ran
        return Explanations(_independent(recording, trace, e, name) for e in chosen)
    graph = Graph(recording.graph(), trace.root, trace.end, trace.input)
    names = variable_names(recording)
    found = Explanations(_named(explain_element(recording, query, graph, gradient, e, name), names) for e in chosen)
    found.lines, found.leaves = scale.by_line(recording, query), scale.by_leaf(gradient, name)
    output = getattr(recording.nodes.get(trace.end), "value", None)
    found.summed = size(output) if output is not None and size(output) > 1 else None
    return found


def selectors_name(wrt):
    """The argument's name the first written selector of ``wrt`` uses (``params`` of ``params['W'][0]``), or None."""
    for selector in [wrt] if isinstance(wrt, str) else (wrt or ()):
        if isinstance(selector, str):
            try:
                return parse_selector(selector)[0]
            except (ValueError, SyntaxError):
                return None
    return None


def explain_element(recording, query, graph, gradient, element, name="x"):
    value = component(gradient, element, graph.input)
    found = recorded_contributions(recording, query, graph.root, element, graph.input)
    shares = by_line(found)
    verdict = verdict_of(value)
    causes = ()
    if verdict == "zero":
        causes = tuple(why_zero(recording, query, graph, element))
    elif verdict == "nonfinite":
        causes = tuple(why_nonfinite(recording, query, graph, element))
    if size(graph.input) == 1 and scalar_graph(recording, graph):
        shown, more, more_sum = paths(recording, query, graph)
    else:
        shown, more, more_sum = element_paths(recording, query, graph, element)
    if verdict == "contributions":  # a gradient autograd's convention made, not the numbers' derivative
        causes = tuple(integer_casts(recording, graph, shown if not more else ()))
    return Explanation(element.selector(name), value, verdict, causes, tuple(shares), tuple(found),
                       same(fold(found), value) if found else None, rounding(value, shares), shown, more, more_sum)


def _named(explanation, names):
    """The causes with the user's variable names of their nodes (``h`` of ``h = np.tanh(w @ x)``)."""
    causes = tuple(replace(c, name=names.get(c.node)) for c in explanation.causes)
    return replace(explanation, causes=causes)


def default_elements(value, gradient, each=EACH, largest=True):
    """The elements whose gradient is zero, non-finite or (if ``largest``) largest in magnitude, ``each`` of each."""
    all_elements = list(elements(value))
    numbers = [component(gradient, e, value) for e in all_elements] if gradient is not None else []
    if not numbers:  # no backward pass ran: a gradient of zeros (independent)
        return all_elements[:each]
    numbers = np.array([complex(n).real if n is not None else np.nan for n in numbers])
    nonfinite = _spread([e for e, n in zip(all_elements, numbers) if not np.isfinite(n)])[:each]
    zero = _spread([e for e, n in zip(all_elements, numbers) if n == 0])[:each]
    order = np.argsort(-np.where(np.isfinite(numbers), np.abs(numbers), -1), kind="stable")
    biggest = [all_elements[i] for i in order if np.isfinite(numbers[i]) and numbers[i] != 0][:each if largest else 0]
    chosen = []
    for e in nonfinite + zero + biggest:
        if e not in chosen:
            chosen.append(e)
    return chosen


def _spread(chosen):
    """``chosen`` elements, the first of each part of the input (``params['W1']``, ``params['b1']``) first:
    a dead unit's zeros in three parts say more than three of one."""
    rank = {}
    ranked = []
    for e in chosen:
        rank[e.keys] = rank.get(e.keys, -1) + 1
        ranked.append((rank[e.keys], e))
    return [e for _, e in sorted(ranked, key=lambda pair: pair[0])]


def _supported(value):
    for keys, leaf in leaves(value):
        if not isinstance(leaf, (int, float, complex, np.number, np.ndarray)):
            raise TypeError(f"explain: the differentiated argument must be numbers and arrays, in lists, tuples or "
                            f"dicts; it holds a {type(leaf).__name__}")


def _selected(wrt, value):
    """The ``Element``s the selectors name (a part or the whole argument: each of its elements), each once;
    ``ValueError`` if one names none of ``value``'s."""
    chosen = []
    for selector in [wrt] if isinstance(wrt, str) else wrt:
        chosen += [e for e in select(selector, value) if e not in chosen]
    return chosen


def _trace(recording, query):
    """The trace the user's query differentiates (the last reverse-mode trace when none ran)."""
    traces = [e for e in recording.of_kind(TraceReturned) if e.mode == "rev"]
    if query is not None:
        end = next(e.end for e in query_index(recording, query).events if type(e) is BackwardStart)
        traces = [t for t in traces if t.end == end] or traces
    return traces[-1] if traces else None


def _independent(recording, trace, element, name):
    cause = Cause(trace.root, "root", None, None, "independent", 1.0, UNPROBED)
    return Explanation(element.selector(name), component(_zeros(trace.input), element), "zero", (cause,))


def _zeros(value):
    return vspace(value).zeros()

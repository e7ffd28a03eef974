"""Align an engine whose gradients stay on its values (micrograd) with the lecture, node by node.

For every value the engine visits (calls its ``_backward``), the lecture's list ``node_to_grad[i]``
and its sum against the engine's running ``.grad``: its value before the pass first wrote it, after
each write of the pass, and the value the ``_backward`` read at the visit (``vjp``'s ``outgrad``).
The two must agree; the first value where they do not is where the engine and the lecture part.
For the buggy ``a + a`` at 3, ``v0_leaf`` reads ``[1, 1]``, sum 2, against ``0 -> 1 -> 1``, read 1.
"""

from ..recording.events import AddOutgrads, BackwardStart, VJPCalled
from ..reference.rules import BORROWED
from .align import MISSING, NOT_COMPARED, NodeAlignment, compare, magnitude, summarized


def engine_running_grads(query_events):
    """``label -> [.grad before the pass's first write, after each write]`` (the output: its seed
    first) and ``label -> the
    .grad its _backward read`` for one query."""
    running, read = {}, {}
    for e in query_events:
        if isinstance(e, BackwardStart):  # (the seed replaces a .grad the events do not hold)
            running.setdefault(e.end, []).append(e.seed)
        elif isinstance(e, AddOutgrads):
            before = None if e.previous is None else e.previous[0]
            running.setdefault(e.parent, [before]).append(e.result[0])
        elif isinstance(e, VJPCalled):
            read[e.node] = e.outgrad
    return running, read


def align_grads(recording, query, run):
    """One ``NodeAlignment`` per value the engine visited in ``query``, in its visit order, against
    the lecture's ``run`` over the recorded graph (``reference.recorded.run_recorded``)."""
    running, read = engine_running_grads(recording.query_events(query))
    steps = {step.label: step for step in run.steps} if run is not None else {}
    borrowed = _borrowed(recording, run)

    def engine_value(label):  # (a leaf's local backward does nothing: its .grad after the pass, whenever it ran)
        leaf = not getattr(recording.nodes.get(label), "parents", True) and running.get(label)
        return running[label][-1] if leaf else read.get(label)

    rows = []
    for label in recording.visit_order(query):
        step = steps.get(label)
        if step is None:
            status, difference = MISSING, None
        elif step.v_i_bar is None:  # a contribution into it is not known (an op without a rule, not recorded)
            status, difference = NOT_COMPARED, None
        elif label in borrowed:  # (the engine's own contributions against themselves: no comparison)
            status, difference = NOT_COMPARED, None
        else:
            status, difference = compare(engine_value(label), step.v_i_bar, magnitude(step.partial_adjoints))
        rows.append(NodeAlignment(label, getattr(recording.nodes.get(label), "primitive", "(unrecorded)"),
                                  None if step is None else step.partial_adjoints,
                                  None if step is None else step.v_i_bar,
                                  tuple(running.get(label, ())), engine_value(label), status, difference,
                                  summarized(engine_value(label)),
                                  borrowed.get(label) if step is not None and step.v_i_bar is not None else None))
    return rows


def _borrowed(recording, run):
    """``label -> why`` for each value a contribution the lecture borrowed from the recording went
    into (the engine's own, as it wrote it: the first such step's reason)."""
    found = {}
    for step in run.steps if run is not None else ():
        if step.rule != BORROWED:
            continue
        node = recording.nodes.get(step.label)
        why = (f"{step.label}'s children were given as a set: argument order lost"
               if None in getattr(node, "argnums", ()) else step.borrowed or
               f"{step.label}'s op {step.primitive!r} has no rule here")
        for contribution in step.contributions:
            found.setdefault(contribution.parent, why)
    return found

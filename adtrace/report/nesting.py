"""The user's backward pass, and the work that ran inside a node's VJP, told apart for the report.

A VJP rule may trace and run backward passes of its own (autograd's ``fixed_point`` and ``odeint``,
a custom rule that calls ``grad``). Everything recorded while such a rule runs (the nodes its
traces make, its nested passes and their steps) is that node's work: the report folds it into one
line per node in each section and shows it in the appendix "Nested backward passes". A pass run
during the forward computation (``grad(grad(f))``) is not nested: its nodes are part of the graph
the user's pass differentiates, and stay in the tables.
"""

from dataclasses import dataclass, field

from ..recording import events
from ..recording.events import BackwardEnd, BackwardStart, ToposortYielded
from .abbreviate import counted
from .format import code


@dataclass
class NodeWork:
    """What ran inside the VJP of ``node`` while pass ``query`` visited it."""

    node: str
    query: int
    passes: list = field(default_factory=list)  # the nested BackwardPass, in the order they began
    nodes: list = field(default_factory=list)  # labels of the nodes made inside
    levels: set = field(default_factory=set)  # trace levels of those passes and nodes
    events: int = 0

    def describe(self):
        """``63 nested backward passes (level 0), 5 nodes, 1088 events``."""
        return _described(len(self.passes), self.levels, len(self.nodes), self.events)


class Nesting:
    """One scan of a recording: its passes, the user's, and each node's folded work.

    ``work``: node label -> ``NodeWork``, in the order the nodes were visited; ``inside``: the
    indices of the events recorded inside a VJP, and ``stretches`` the same as ``[first, last,
    node]`` per stretch of consecutive ones; ``made_inside``: node label -> the label of the node
    whose VJP made it."""

    def __init__(self, recording):
        self.passes = recording.passes()
        self.user = recording.user_query()
        self.work, self.inside, self.stretches, self.made_inside = {}, set(), [], {}
        if _one_pass_alone(recording, self.passes):  # (nothing to fold: the walk below is not needed)
            return
        passes = {p.query: p for p in self.passes}
        running, visiting, user = [], {}, self.user
        top, folding = None, False  # the outermost pass running; whether an event not its own is folded
        backward = {t for t in events.EVENT_TYPES if t.in_backward_pass}  # (a set: this loop reads every event)
        for index, e in enumerate(recording.events):
            event_type = type(e)  # (not isinstance)
            if folding and not (e.query == top and event_type in backward and e.mode == "rev"):
                self._fold(index, e, visiting[top], top, passes)
            if event_type is BackwardStart:
                running.append(e.query)
            elif event_type is ToposortYielded:
                first = e.query not in visiting
                visiting[e.query] = e.node
                if not first:  # (a pass's later visits change neither the passes running nor what is folded)
                    continue
            elif event_type is BackwardEnd and e.query in running:
                del running[running.index(e.query):]  # (a pass abandoned by an exception ends its inner ones)
            else:  # (nothing above changed: an event of no pass's start, visit or end)
                continue
            top = running[0] if running else None
            folding = top in visiting and (top == user or len(running) > 1)

    def _fold(self, index, event, node, query, passes):
        work = self.work.get(node)
        if work is None:
            work = self.work[node] = NodeWork(node, query)
        work.events += 1
        self.inside.add(index)
        if self.stretches and self.stretches[-1][1] == index - 1 and self.stretches[-1][2] == node:
            self.stretches[-1][1] = index
        else:
            self.stretches.append([index, index, node])
        if event.is_node:
            work.nodes.append(event.label)
            work.levels.add(event.level)
            self.made_inside[event.label] = node
        elif type(event) is BackwardStart:
            work.passes.append(passes[event.query])
            work.levels.add(event.level)

    def folded_line(self, where="here"):
        """The line a section says about what it leaves out, or ``None`` when nothing is folded."""
        works = list(self.work.values())
        if not works:
            return None
        if len(works) <= 2:
            text = "; ".join(f"inside the VJP of {code(w.node)}: {w.describe()}" for w in works)
        else:
            text = f"inside the VJPs of {len(works)} nodes: " + _described(
                sum(len(w.passes) for w in works), set().union(*(w.levels for w in works)),
                sum(len(w.nodes) for w in works), sum(w.events for w in works))
        return f"_Not {where}: what ran inside a node's VJP ({text}); see Nested backward passes._"


def _one_pass_alone(recording, passes):
    """Whether one backward pass ran and every event from its start to its end is its own (a scalar
    program's, four events per node): then no event is folded. Found in C, by where it starts and ends."""
    if len(passes) != 1:
        return False
    recorded, query = recording.events, passes[0].query
    kinds = list(map(type, recorded))
    try:
        start = kinds.index(BackwardStart)
        end = kinds.index(BackwardEnd, start)
    except ValueError:
        return False
    own = recording.query_events(query)  # (a learner's backward() may write .grad before its start: its own too)
    return (recorded[end].query == query and end - start + 1 == len(own)
            and own[0] is recorded[start] and own[-1] is recorded[end])


def _described(passes, levels, nodes, events):
    shown = ", ".join(str(level) for level in sorted(levels)) or "-"
    return (f"{counted(passes, 'nested backward pass', 'es')} (level{'s' if len(levels) > 1 else ''} {shown}), "
            f"{counted(nodes, 'node')}, {counted(events, 'event')}")

"""The passes the page plays, step by step: one per backward query, one per forward trace.

A reverse pass has one step per row of the report's state snapshot (``Recording.snapshots``), so
the page and the Markdown report show the same statements with the same ``outgrads`` after each.
A forward pass has one step per event of ``make_jvp``: the root's tangent, each ``add_outgrads``
call ``sum_outgrads`` makes while a ``JVPNode`` is built, and the node with its tangent.

An engine with its own ``backward()`` (micrograd's shape) has one step per row of its report's
state snapshot too; its dict is the ``.grad`` of each value written so far, which a visit does not
pop (``["visit", node]`` marks the node visited).

Steps are stored by column (``COLUMNS``), and the dicts the page shows are stored as deltas, never
whole: ``state`` changes autograd's dict (``["set", node, text]`` or ``["pop", node]``), ``lecture``
changes the reference engine's (``["append", node, text]`` to a list of partial adjoints,
``["sum", node, text]`` when the lecture sums it, ``["set", node, text]`` for a tangent).
"""

from ..report.format import fmt
from ..recording.events import AddOutgrads, JVPNodeCreated, JVPRoot, TraceReturned
from ..recording.snapshots import ADD, INIT, NO_PARENTS, POP, RETURN, VJP, YIELD
from .source import ENGINE_STATEMENTS, FORWARD_STATEMENTS, NODE, REVERSE_STATEMENTS, ROOT, SHARE

COLUMNS = ("statement", "node", "parent", "position", "outgrad", "ingrads", "previous", "result", "state",
           "lecture")


class Steps:
    """Step columns being filled: ``add(statement=..., node=...)``, absent fields ``None`` (kept as rows,
    one tuple per step, and turned into columns once: a 4,000-node loop has 17,006 steps)."""

    def __init__(self, statements, node_index):
        self.rows = []
        self.statements = {text: i for i, text in enumerate(statements)}
        self.node_index = node_index

    def add(self, statement, node=None, parent=None, position=None, outgrad=None, ingrads=None, previous=None,
            result=None, state=None, lecture=None):  # (COLUMNS, in their order)
        index = self.node_index
        self.rows.append((self.statements[statement], None if node is None else index[node],
                          None if parent is None else index[parent], position, outgrad, ingrads, previous, result,
                          state, lecture))

    @property
    def columns(self):
        columns = zip(*self.rows) if self.rows else ((),) * len(COLUMNS)
        return {name: list(column) for name, column in zip(COLUMNS, columns)}

    def delta(self, op, label, text=None):
        """A change to a dict the page shows (``op`` on the entry of node ``label``)."""
        if op in ("pop", "visit"):
            return [op, self.node_index[label]]
        return [op, self.node_index[label], text]

    def __len__(self):
        return len(self.rows)


# -------------------- reverse mode --------------------


def reverse_steps(rows, node_index, run=None):
    """The steps of one backward query (its snapshot rows, ``snapshots.replay``); ``run``
    (``reference.GradientRun`` over the same graph and seed) adds the lecture's ``node_to_grad``
    lists, replayed in autograd's order."""
    lecture = LectureLists(run)
    steps = Steps(REVERSE_STATEMENTS, node_index)
    for row in rows:
        statement, node, event = row.stands_for, row.node, row.event
        if statement == INIT:
            end, entry = row.written
            steps.add(INIT, outgrad=fmt(row.outgrad), state=steps.delta("set", end, fmt(entry)),
                      lecture=lecture.seed(steps, end))
        elif statement == POP:
            steps.add(POP, node=node, outgrad=fmt(row.outgrad), state=steps.delta("pop", node),
                      lecture=lecture.sum(steps, node))
        elif statement == ADD:
            steps.add(ADD, node=node, parent=row.parent, position=event.position, ingrads=fmt(row.ingrads),
                      previous=fmt(row.previous), result=fmt(event.result),
                      state=steps.delta("set", row.parent, fmt(row.written[1])),
                      lecture=lecture.append(steps, event))
        elif statement in (VJP, RETURN):
            steps.add(statement, node=node, outgrad=fmt(row.outgrad),
                      ingrads=None if statement == RETURN else fmt(row.ingrads))
        elif statement in (YIELD, NO_PARENTS):
            steps.add(statement, node=node, ingrads="()" if statement == NO_PARENTS else None)
    return steps


def engine_steps(rows, node_index, run=None):
    """The steps of one backward pass of an engine whose gradients stay on its values (its snapshot
    rows, ``snapshots.replay``: one per event); ``run``: the lecture's run over the recorded graph."""
    lecture = LectureLists(run)
    steps = Steps(ENGINE_STATEMENTS, node_index)
    for row in rows:
        statement, node, e = row.stands_for, row.node, row.event
        key = e.code_key()  # the statement of the engine's backward() (ENGINE_STATEMENTS)
        if statement == INIT:
            steps.add(key, node=node, outgrad=fmt(row.outgrad), state=steps.delta("set", node, fmt(row.outgrad)),
                      lecture=lecture.seed(steps, node))
        elif statement == YIELD:
            steps.add(key, node=node, state=steps.delta("visit", node), lecture=lecture.sum(steps, node))
        elif statement == VJP:
            steps.add(key, node=node, outgrad=fmt(row.outgrad), ingrads=fmt(row.ingrads))
        elif statement == ADD:
            known = node is not None and e.position is not None  # (an edge of the graph the page can light)
            steps.add(key, node=node, parent=row.parent if known else None, position=e.position if known else None,
                      ingrads=fmt(row.ingrads), previous="-" if e.previous is None else fmt(e.previous[0]),
                      result=fmt(e.result[0]) + (" (replaced: the previous value is lost)" if e.replaced else
                                                 " (not known: added or replaced)" if e.replaced is None and e.node
                                                 else ""),
                      state=steps.delta("set", row.parent, fmt(e.result[0])),
                      lecture=lecture.append(steps, e) if known else None)
        elif statement == RETURN:
            steps.add(key, node=node)
    return steps


class LectureLists:
    """The lecture's ``node_to_grad`` at autograd's pace: when ``add_outgrads`` adds the
    contribution of (node, position), the reference engine's partial adjoint for that same
    (node, position) is appended; when autograd pops a node, the lecture sums its list."""

    def __init__(self, run):
        self.run = run
        self.visits = {} if run is None else {step.label: step for step in run.steps}

    def seed(self, steps, end):
        return None if self.run is None else steps.delta("append", end, fmt(self.run.seed))

    def sum(self, steps, label):
        step = self.visits.get(label)
        return None if step is None else steps.delta("sum", label, fmt(step.v_i_bar))

    def append(self, steps, event):
        step = self.visits.get(event.node)
        partial = None if step is None else next(
            (c for c in step.contributions if c.position == event.position), None)
        if partial is None or partial.parent not in steps.node_index:
            return None
        return steps.delta("append", partial.parent, fmt(partial.value))


# -------------------- forward mode --------------------


def forward_event_runs(recording):
    """The forward-mode events, one list per ``make_jvp`` trace (from its ``JVPNode.new_root``)."""
    runs, open_runs = [], {}
    for event in recording.events:
        if event.mode != "fwd" or isinstance(event, TraceReturned):
            continue
        if isinstance(event, JVPRoot):
            open_runs[event.level] = []
            runs.append(open_runs[event.level])
        if event.level in open_runs:
            open_runs[event.level].append(event)
    return runs


def forward_steps(events, node_index, reference_tangents=()):
    """The steps of one forward trace; ``reference_tangents`` (``reference.run_tangents``) adds
    the lecture's tangent per node, set when autograd's ``JVPNode`` of that label is built."""
    lecture = {step.label: step.tangent for step in reference_tangents}
    steps = Steps(FORWARD_STATEMENTS, node_index)
    for e in events:
        if isinstance(e, JVPRoot):
            steps.add(ROOT, node=e.label, result=fmt(e.tangent), state=steps.delta("set", e.label, fmt(e.tangent)),
                      lecture=_tangent(steps, lecture, e.label))
        elif isinstance(e, AddOutgrads):
            steps.add(SHARE, node=e.node, parent=e.parent, position=e.position, ingrads=fmt(e.contribution),
                      previous=fmt(e.previous), result=fmt(e.result))
        elif isinstance(e, JVPNodeCreated):
            steps.add(NODE, node=e.label, result=fmt(e.tangent), state=steps.delta("set", e.label, fmt(e.tangent)),
                      lecture=_tangent(steps, lecture, e.label))
    return steps


def _tangent(steps, lecture, label):
    return steps.delta("set", label, fmt(lecture[label])) if label in lecture else None

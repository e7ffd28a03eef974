"""The recorder of a value class (micrograd's shape): the hooks' callbacks (``hooks.Callbacks``) as events.

The same events as autograd's, in the same order within a pass (``recording/events.py``):

- ``node`` per value made (``v<i>_<op>``, ``labels.op_name``: ``v1_mul`` for ``'*'``; the op as
  the class writes it stays in ``primitive``). A value without children (an input, a weight, a
  constant ``a + 5`` wraps) is a node too, ``v<i>_leaf`` with primitive ``''``: micrograd has no
  single input as autograd's ``root``, and every leaf gets a gradient. Children given as a set whose
  order the op's forward does not decide (``hooks.Unordered``) have ``argnums`` None: position not
  known. Values made before the recording are ``u<j>_unrecorded`` when a pass meets them.
- ``backward_start`` per ``backward()``: the seed ``self.grad = 1`` (a pass that writes ``.grad``
  before seeding, a zeroing loop, has those writes recorded before it, in order).
- ``toposort`` per ``_backward`` call, in the order ``backward()`` makes them (the visit order);
  then ``vjp`` (outgrad: the ``.grad`` the closure read; ingrads: the contributions it wrote, by
  child position, None for a position it did not write) and one ``add_outgrads`` per write, in
  order: written once the closure returns, as autograd's ``vjp`` comes before its additions (a
  closure computes its contribution and adds it itself: one statement). micrograd builds its
  whole order first (``build_topo``, locals: not hooked); siblings follow the iteration order of
  the ``_prev`` sets. A write that assigns (``grad = c``, the classic bug) is ``replaced``, which
  autograd has no way to do; ``mutable`` does not apply.
- ``backward_end`` (``result`` None: the gradients stay on the values, where autograd pops its
  ``outgrads`` entries as it visits).

``level`` is 0; ``query`` numbers the ``backward()`` calls. Only the thread that made the recorder (entered
its ``record()``) is recorded: another thread running in a copy of that context (``asyncio.to_thread``,
``contextvars.copy_context().run``) would mix its passes into the running one's; its calls are left
out, and the first says so (``RecorderWarning``). What a write keeps is described in
``AddOutgrads``: for an ndarray ``.grad`` updated in place the previous value is the recorder's
own copy of the last result it recorded for that value (None when it has none).
"""

import functools
import threading
import types

import numpy as np

from .. import compiled
from ..callsite import user_call_site
from ..eventlog import HEADS
from ..events import (NO_PREVIOUS, REV, AddOutgrads, BackwardEnd, BackwardStart, Is, NodeCreated, Same,
                      ToposortYielded, VJPCalled)
from ..fanout import fanout_for, guard_callbacks, guards_itself
from ..labels import label_name, op_name, unrecorded_label
from ..packers import inline_writes, write
from ..recorder import RecorderBase
from ..values import NO_REFERENCE, SCALARS, stored_summary
from .descriptors import MISSING
from .hooks import Callbacks, Unordered

Fanout = fanout_for(Callbacks, {})


def keeper(capture, inline_size):
    """What an event keeps of a live value under a capture level: arrays copied (the engine may add
    into them in place), above ``inline_size`` elements summarized under ``auto``; any other value
    (a number) as it is; nothing under ``structure``."""
    if capture == "structure":
        return keep_nothing
    limit = inline_size if capture == "auto" else None

    def keep(value):
        if type(value) is not np.ndarray:
            return value
        return stored_summary(value) if limit is not None and value.size > limit else value.copy()

    return keep


def keep_nothing(value):
    """Capture ``structure``'s keeper (the recorder skips calling it: ``Recorder.nothing``)."""
    return None


@guard_callbacks(Callbacks)
@inline_writes  # (each event written as the packer's own statements: a call by keywords per event cost a fifth)
class Recorder(RecorderBase):

    def __init__(self, writer, keep, cls, keep_sites=False, relative_to=None):
        super().__init__(writer)
        self.keep, self.keep_sites, self.relative_to = keep, keep_sites, relative_to
        self.nothing = keep is keep_nothing  # (capture structure: no keep called; else a number is kept as it is)
        self._own_code = _code_of(cls)  # the class's methods: a node's site is the line that called them
        self._labels = {}  # id(value) -> label
        self._names = ({}, {})  # an operation's op -> (its name in a label, its primitive); a leaf's: reduced once
        self._children = {}  # id(value) -> how many children it was made with
        self._alive = []  # every value labelled, so that its id stays its own while recording
        self._count = self._unrecorded = self._queries = 0
        self._passes = []  # _Pass per running backward(), innermost last
        # the logs of a recompiled class's hooks it was active in (deferred.py): replayed into it before a read
        self.logs = []
        self.deferrable = not self.keep_sites  # (a call site is read from the stack of the moment)
        writer.before_read(self.flush)

    def flush(self):
        """What the deferred hooks logged for it, told to it now (``deferred.py``)."""
        for log in list(self.logs):
            log.flush()

    def _release(self):
        """No more callbacks come: let the values go (after what the deferred hooks logged for it is told)."""
        if any(log.done < len(log.items) for log in self.logs):
            # closed before it was read: the recording keeps the logs until then (the logs refer to this recorder,
            # which holds its recording weakly: no cycle, an unread recording goes with all it keeps)
            logs, self.logs = self.logs, []
            self.writer.before_read(functools.partial(self._finish, logs))
            return
        self.writer.before_read(None)
        self._alive, self._passes, self._labels, self._children, self.logs = [], [], {}, {}, []

    def _finish(self, logs):
        for log in logs:
            log.flush()
        self._release()
        if self.pending is not None:  # (a warning that is an error, raised where the recording is read)
            pending, self.pending = self.pending, None
            raise pending

    # ---- nodes

    @guards_itself
    def node_created(self, node, children, op, data):
        if not self.live:  # (the guard, written out: one frame per callback)
            return
        try:
            if threading.get_ident() != self.thread:
                return self.elsewhere()
            # Hot path (once per value made): the label's parts reduced once per op, the event written inline.
            count, labels = self._count, self._labels
            self._count = count + 1
            names = self._names[not children].get(op) if type(op) is str else None
            name, primitive = names or self._name_of(op, children)
            label = f"v{count}_{name}"  # (labels.label_for written out, as the autograd recorder's)
            labels[id(node)] = label  # (self._name, written out)
            self._alive.append(node)
            n = self._children[id(node)] = len(children)
            if n == 2:  # (most values: the join written out, no list made; each label found in order)
                first, second = children
                first = labels.get(id(first)) or self._label(first)
                parents = f"{first},{labels.get(id(second)) or self._label(second)}"
            else:
                parents = ",".join([labels.get(id(child)) or self._label(child) for child in children])
            site = user_call_site(self.relative_to, self._own_code) if self.keep_sites else None
            value = None if self.nothing else data if type(data) is not np.ndarray else self.keep(data)  # (self.keep)
            argnums = _POSITIONS[n] if n < len(_POSITIONS) and type(children) is tuple else _argnums(children)
            write(self.values, NodeCreated, mode=REV, level=0, query=self._passes[-1].number if self._passes else None,
                  label=label, primitive=primitive, argnums=argnums, parents=parents, value=value, site=site)
        except Exception as exc:
            self.fail(exc)

    def _name_of(self, op, children):
        """``(label name, primitive)`` of a value's op, kept for the next of an operation or of a leaf
        (only a str's: ``1`` and ``True`` are one key but not one name)."""
        names = (label_name(op_name(op, leaf=not children)), "" if op is None else str(op))
        if type(op) is str:
            self._names[not children][op] = names
        return names

    # ---- a backward() call

    def backward_started(self, end):
        if threading.get_ident() != self.thread:
            return self.elsewhere()
        self._queries += 1
        self._passes.append(_Pass(self._queries, self._label(end)))

    def seeded(self, end, previous, value):
        if threading.get_ident() != self.thread:
            return self.elsewhere()
        run = self._run()
        if run is not None and not run.started:
            run.pending.append((end, previous, value, True))
        elif run is not None:  # the end's .grad written again by backward() itself
            self._add_outgrads(self._write(run, None, end, None, previous, None, value, None))

    @guards_itself
    def local_backward_started(self, node, grad):
        if not self.live:  # (the guard, written out: one frame per callback)
            return
        try:
            if threading.get_ident() != self.thread:
                return self.elsewhere()
            run = self._passes[-1] if self._passes else None
            if run is None:
                return
            if not run.started:
                self._start(run)
            label = self._labels.get(id(node)) or self._label(node)
            write(self.values, ToposortYielded, mode=REV, level=0, query=run.number, node=label, position=run.visited)
            run.visited += 1
            outgrad = None if self.nothing else grad if type(grad) is not np.ndarray else self.keep(grad)
            run.visits.append(_Visit(node, label, outgrad, self._children.get(id(node))))
        except Exception as exc:
            self.fail(exc)

    @guards_itself
    def grad_written(self, node, target, position, previous, contribution, result, accumulated):
        if not self.live:  # (the guard, written out: one frame per callback)
            return
        try:
            if threading.get_ident() != self.thread:
                return self.elsewhere()
            run = self._passes[-1] if self._passes else None
            if run is None:
                return
            if node is None and not run.started:  # backward() writes before its seed (a zeroing loop)
                run.pending.append((target, previous, result, False))
                return
            if not run.started:
                self._start(run)
            visit = run.visits[-1] if run.visits else None
            if type(result) in SCALARS and type(previous) in SCALARS and type(contribution) is not np.ndarray:
                # (self._write, written out for a number's write: nothing copied, not in place; the running visit's
                # label, found when it started)
                labels = self._labels
                if self.nothing:
                    previous = result = contribution = None
                kept_previous, kept = previous, result
                run.grads[id(target)] = kept
                label = visit.label if visit is not None and node is visit.node else \
                    None if node is None else labels.get(id(node)) or self._label(node)
                fields = (run.number, label, position, labels.get(id(target)) or self._label(target), kept_previous,
                          False, contribution, kept, False, None if accumulated is None else not accumulated)
            else:
                fields = self._write(run, node, target, position, previous, contribution, result, accumulated)
            if visit is not None and node is visit.node:
                visit.writes.append(fields)  # (its add_outgrads event after the vjp's)
            else:
                self._add_outgrads(fields)
        except Exception as exc:
            self.fail(exc)

    @guards_itself
    def local_backward_ended(self, node, error):
        if not self.live:  # (the guard, written out: one frame per callback)
            return
        try:
            if threading.get_ident() != self.thread:
                return self.elsewhere()
            run = self._passes[-1] if self._passes else None
            if run is None or not run.visits or run.visits[-1].node is not node:
                return
            visit = run.visits.pop()
            ingrads = visit.ingrads()
            # (_add_outgrads, written out: once per visit)
            write(self.values, VJPCalled, mode=REV, level=0, query=run.number, node=visit.label, outgrad=visit.outgrad,
                  ingrads=ingrads)
            for query, label, position, parent, previous, previous_flag, contribution, result, result_flag, replaced \
                    in visit.writes:
                write(self.values, AddOutgrads, mode=REV, level=0, query=query, node=label, position=position,
                      parent=parent, argnum=position, previous=previous, previous_flag=previous_flag,
                      contribution=contribution, result=result, result_flag=result_flag, replaced=replaced)
        except Exception as exc:
            self.fail(exc)

    def backward_ended(self, end, error):
        if threading.get_ident() != self.thread:
            return self.elsewhere()
        run = self._run()
        if run is None:
            return
        self._start(run)
        self._passes.pop()
        write(self.values, BackwardEnd, mode=REV, level=0, query=run.number, end=run.end, result=None,
              error=None if error is None else type(error).__name__)

    # ---- helpers

    def _add_outgrads(self, *writes):
        """The event of each write into a ``.grad``, its fields as ``_write`` made them."""
        for query, node, position, parent, previous, previous_flag, contribution, result, result_flag, replaced \
                in writes:
            write(self.values, AddOutgrads, mode=REV, level=0, query=query, node=node, position=position, parent=parent,
                  argnum=position, previous=previous, previous_flag=previous_flag, contribution=contribution,
                  result=result, result_flag=result_flag, replaced=replaced)

    def _query(self):
        return self._passes[-1].number if self._passes else None

    def _run(self):
        return self._passes[-1] if self._passes else None

    def _start(self, run):
        """The seed's event, with the writes backward() made before and after it (before the first visit)."""
        if run.started:
            return
        run.started = True
        pending, run.pending = run.pending, []
        seeds = [i for i, (_, _, _, seed) in enumerate(pending) if seed]
        last = seeds[-1] if seeds else len(pending)
        for target, previous, value, _ in pending[:last]:
            self._add_outgrads(self._write(run, None, target, None, previous, None, value, None))
        seed = pending[last][2] if seeds else None
        write(self.values, BackwardStart, mode=REV, level=0, query=run.number, end=run.end, seed=self.keep(seed))
        if seeds:
            run.grads[id(pending[last][0])] = self.keep(seed)
        for target, previous, value, _ in pending[last + 1:]:
            self._add_outgrads(self._write(run, None, target, None, previous, None, value, None))

    def _write(self, run, node, target, position, previous, contribution, result, accumulated):
        """The fields of an add_outgrads event for one write into ``target.grad`` (``_add_outgrads``'
        order: query, node, position (its argnum too), parent, previous and its flag, contribution,
        result and its flag, replaced)."""
        in_place = result is previous and type(result) not in SCALARS
        # (self.keep written out: nothing kept under structure, else a number kept as it is, an array by keep)
        nothing, keep = self.nothing, self.keep
        if previous is MISSING:
            kept_previous, previous_flag = None, NO_PREVIOUS
        else:
            kept_previous = run.grads.get(id(target)) if in_place else \
                None if nothing else previous if type(previous) is not np.ndarray else keep(previous)
            previous_flag = in_place
        kept = run.grads[id(target)] = None if nothing else result if type(result) is not np.ndarray else keep(result)
        if not nothing and type(contribution) is np.ndarray:
            contribution = keep(contribution)
        elif nothing:
            contribution = None
        labels = self._labels
        return (run.number, None if node is None else labels.get(id(node)) or self._label(node), position,
                labels.get(id(target)) or self._label(target), kept_previous, previous_flag, contribution, kept,
                in_place, None if accumulated is None else not accumulated)

    def _label(self, value):
        label = self._labels.get(id(value))
        if label is None:  # made before the recording started
            label = unrecorded_label(self._unrecorded)
            self._unrecorded += 1
            self._name(value, label)
        return label

    def _name(self, value, label):
        self._labels[id(value)] = label
        self._alive.append(value)


class _Pass:
    """One running ``backward()``."""
    __slots__ = ("number", "end", "started", "pending", "visited", "visits", "grads")

    def __init__(self, number, end):
        self.number, self.end, self.started = number, end, False
        self.pending = []  # writes by backward() before its first visit: (target, previous, value, is the seed)
        self.visited = 0
        self.visits = []  # _Visit per running _backward, innermost last
        self.grads = {}  # id(value) -> the kept value of its last recorded .grad in this pass


class _Visit:
    """One running ``_backward``: what it read, and the writes it made (emitted when it returns)."""
    __slots__ = ("node", "label", "outgrad", "children", "writes")

    def __init__(self, node, label, outgrad, children):
        self.node, self.label, self.outgrad, self.children = node, label, outgrad, children
        self.writes = []  # (no dict by position per visit: ingrads finds each position's first write)

    def ingrads(self):
        """The contributions by child position (each position's first write; None: not written); in write order
        when the children are not known."""
        if self.children is None:
            return tuple(fields[_CONTRIBUTION] for fields in self.writes)
        found = [None] * self.children
        for fields in reversed(self.writes):  # (the first write of a position is the last one set)
            position = fields[_POSITION]
            if position is not None and 0 <= position < self.children:
                found[position] = fields[_CONTRIBUTION]
        return tuple(found)


_POSITION, _CONTRIBUTION = 2, 6  # where a write's position and contribution are in its fields (Recorder._write)
_POSITIONS = [tuple(range(n)) for n in range(4)]  # (made once: most values have 0, 1 or 2 children)


def _argnums(children):
    """Each child's argument position; None where it is not known (children given as a set)."""
    if isinstance(children, Unordered):
        return (None,) * len(children)
    n = len(children)
    return _POSITIONS[n] if n < len(_POSITIONS) else tuple(range(n))


def _code_of(cls):
    """The code objects of the class's methods (and of functions nested in them)."""
    found, stack = set(), []
    for klass in cls.__mro__:
        for attribute in vars(klass).values():
            function = getattr(attribute, "__func__", attribute)
            if isinstance(function, types.FunctionType):
                stack.append(function.__code__)
    while stack:
        code = stack.pop()
        if code not in found:
            found.add(code)
            stack.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return frozenset(found)



# -------------------- the compiled twin --------------------

PythonRecorder = Recorder  # the reference: every case, and all of it where the twin is not used


def _forms(event_type):
    """``event_type``'s stored forms as plain data (``Is``: its value; ``Same``: the name), to hold them to the
    ones ``_recorder.c`` writes."""
    return [{name: ("same", how.name) if type(how) is Same else ("is", how.value) if type(how) is Is else how
             for name, how in form.items()} for form in event_type.forms]


def _twin_fits():
    """The events as ``_recorder.c`` writes them: its tags, its stored forms (each in the order it tests them)."""
    zero = ("is", 0)
    fixed = dict(position=zero, argnum=zero, previous=("is", None), previous_flag=("is", None),
                 result_flag=("is", False), replaced=("is", False))
    unary = ("is", _UNARY)
    return ([t.index for t in (NodeCreated, ToposortYielded, VJPCalled, AddOutgrads)] == [1, 4, 5, 6]
            and _forms(NodeCreated) == [dict(argnums=unary, value=("is", None), site=("is", None)),
                                        dict(argnums=unary, site=("is", None))]
            and _forms(ToposortYielded) == [dict(position=("is", _VISITS))]
            and _forms(VJPCalled) == [dict(outgrad=("is", None), ingrads=("is", (None,))), dict(ingrads="one item")]
            and _forms(AddOutgrads) == [dict(contribution=("is", None), **fixed, result=("is", None)),
                                        dict(**fixed, result=("same", "contribution"))])


_UNARY = NodeCreated.forms[0]["argnums"].value
_VISITS = ToposortYielded.forms[0]["position"].value
_twin = compiled.twin("adtrace.recording.value_class._recorder")  # (Core), or None
if _twin is not None and _twin_fits():
    _twin.configure(
        (PythonRecorder.node_created, PythonRecorder.local_backward_started, PythonRecorder.grad_written,
         PythonRecorder.local_backward_ended),
        (_Pass, _Visit),
        (np.ndarray, SCALARS, NO_REFERENCE, HEADS, REV, 0, _UNARY, _VISITS, AddOutgrads.forms[0]["position"].value,
         tuple(_POSITIONS)))

    class Recorder(_twin.Core, PythonRecorder):
        """``PythonRecorder`` with its hot state in ``Core``'s slots and the common case of its four per-value
        callbacks compiled (``_recorder.c``); the Python methods do every other case."""

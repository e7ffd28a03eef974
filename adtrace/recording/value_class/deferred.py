"""The hooks of a recompiled class (``rewrite.py``): what its values do, written as raw records into a log,
told to the sinks as ``Callbacks`` when the recording is read.

The recompiled methods call the helpers made here (``helpers``: ``_adtrace_add`` for ``X.grad += E``,
``_adtrace_sub``, ``_adtrace_set``, ``_adtrace_visit``), and ``__init__`` and ``backward()`` are wrapped.
Each appends a few plain objects to its thread's ``Log``: no event, no descriptor, no tracked number, and no
object kept per value (which would make Python's collector walk the whole heap). The template below is the
reference; ``_deferred.c`` is its compiled twin (``_compiled``: the same records, a case it does not do handed to
the template's function). A micrograd MLP step recorded this way costs about 1.2x the plain step in
``benchmarks/run.py`` (about 2.1x with the template's helpers, 5x through the descriptors); the first read then
tells the log and builds the events. The sink active in the calling context is written into
the log when it changes. ``Log.flush`` replays the records, in order, into the sinks that were active: the
same calls ``hooks.ClassHooks`` makes as it happens, with the same arguments (a write's position among its
node's children, the first not yet written, is found then). A recorder flushes its logs before its events are
read (``Recorder.before_read``) and keeps what it needs until then, also after its ``record()`` block ended;
a sink that must hear of each call as it happens (an attached sink, a recorder keeping call sites: the stack of
the moment) is flushed at each record.

As under the descriptors, writes into ``.grad`` are recorded only inside a hooked ``backward()``, and
nothing is recorded while a sink is called (``quiet``) or in a context without a sink. Where the two differ
(told when read, not as it happens): a recorder's internal error is said at the read, and a ``.grad = E``
written inside another pass's ``_backward`` (a ``backward()`` run from a closure) has its contribution "not
known" where the descriptors, which see every read, can say it replaced.
"""

import threading

import numpy as np

from .. import compiled
from .descriptors import MISSING

_twin = compiled.twin("adtrace.recording.value_class._deferred")  # (LogFields, Helpers, Init), or None

# record kinds, each followed by a fixed number of items
NODE, START, END, VISIT, LEFT, ADD, SET, SINK, UNSEEN, LEAF, UNARY, BINARY = range(12)
SIZES = (5, 2, 3, 3, 3, 5, 4, 2, 5, 4, 5, 6)
if _twin is not None:  # (the very objects the template writes)
    _twin.kinds(NODE, VISIT, LEFT, ADD, LEAF, UNARY, BINARY)
# (LEAF, UNARY, BINARY: a value made with 0, 1 or 2 children given as a tuple, each child an item: the tuple is
# not kept, and an object kept per value would make Python's collector walk the whole heap more often)


class Log(object if _twin is None else _twin.LogFields):
    """One thread's records under one installation of the hooks (``items``: flat, kinds and their items). With the
    compiled twin, ``items``, ``sink``, ``eager``, ``depth`` and ``quiet`` are C fields its helpers use directly."""

    def __init__(self, own):
        self.items = []
        self.thread = threading.get_ident()
        self.sink = None        # the sink of the last SINK record
        self.eager = False      # whether that sink is flushed at each record
        self.depth = 0          # hooked backward() calls running in this thread
        self.quiet = 0          # > 0 while this log is replayed in its own thread
        self.lock = threading.RLock()  # (a sink that reads the recording while told: nothing more to tell)
        self.replayer = _Replayer(self)
        self.own = own  # the recompiled code (a recorder's call sites skip its frames)
        self.done = 0           # how many items were replayed

    def switch(self, sink):
        """The sink active in the calling context changed: noted in the log."""
        self.items += (SINK, sink)
        self.sink = sink
        members = getattr(sink, "recorders", (sink,))
        self.eager = not all(getattr(member, "deferrable", False) for member in members)
        for member in members:
            logs = getattr(member, "logs", None)
            if logs is not None and self not in logs:
                logs.append(self)
                if member.thread != self.thread:  # (said now, where it happens: its calls will be left out)
                    member.elsewhere()
                # (its call sites skip the recompiled methods' frames, as the originals')
                member._own_code = member._own_code | self.own

    def children_of(self, node):
        """``node``'s children as its record gave them (what was logged is told first), or None."""
        self.flush()
        return self.replayer.children_of(node)

    def flush(self):
        """Replay what was not replayed yet into the sinks it was written for."""
        with self.lock:
            end = len(self.items)
            if self.done < end:
                at, self.done = self.done, end
                self.replayer.replay(self.items, at, end)


class _PerThread(threading.local):
    def __init__(self, own):
        self.log = Log(own)  # (each thread's own, made when it first runs the helpers)


class Installed:
    """What the helpers reach of their installation: ``local`` (each thread's ``Log``), None once it is undone (a
    value made while recording, whose closures call the helpers, then runs unrecorded and keeps no log alive)."""
    __slots__ = ("local",)

    def __init__(self, local):
        self.local = local


def helpers(hooks, rewritten):
    """The helpers the recompiled methods call (name -> function), and the ``__init__`` and ``backward()``
    wrappers' makers (``make_init``, ``make_backward``), for ``hooks`` (``hooks.ClassHooks`` of a recompiled
    class) and its ``rewritten`` methods (``rewrite.Rewritten``), each written out with the class's own attribute
    names (a fixed template, filed under this module); and the ``Installed`` they read."""
    shape = hooks.shape
    installed = Installed(_PerThread(rewritten.own))
    namespace = {"active": hooks.active, "installed": installed, "MISSING": MISSING, "NODE": NODE,
                 "START": START, "END": END, "VISIT": VISIT, "LEFT": LEFT, "ADD": ADD, "SET": SET, "UNSEEN": UNSEEN,
                 "LEAF": LEAF, "UNARY": UNARY, "BINARY": BINARY, "known": rewritten.known, "snapshot": _snapshot,
                 "keep": _keep, "kept": _kept, "len": len, "tuple": tuple, "type": type, "int": int,
                 "float": float}
    code = _COMPILED.get((shape.grad, shape.local_backward))
    if code is None:
        code = _COMPILED[shape.grad, shape.local_backward] = compile(
            _TEMPLATE.format(grad=shape.grad, local=shape.local_backward), f"{__file__} (helpers)", "exec")
    exec(code, namespace)
    found = {name: namespace[name] for name in ("_adtrace_add", "_adtrace_sub", "_adtrace_set", "_adtrace_visit")}
    if _twin is not None:
        installed = _compiled(namespace, found, hooks, rewritten)
    bound = namespace["bound"] = rewritten.bind(found)  # (the visit's closures of the original methods: recompiled)
    return bound, installed, namespace


def _compiled(namespace, found, hooks, rewritten):
    """The twin's helpers in place of the template's (``found`` and ``namespace["make_init"]``), each handing a
    case it does not do to the template's function; returns its ``Helpers``, which is also the ``installed`` the
    template's functions read (one ``local``, set to None once undone)."""
    shape = hooks.shape
    python_init = namespace["make_init"]
    helpers = _twin.Helpers(hooks.active, namespace["installed"].local, frozenset(rewritten.known), shape.grad,
                            shape.local_backward, MISSING, _keep, _kept, found["_adtrace_add"], found["_adtrace_sub"],
                            found["_adtrace_visit"])

    def make_init(original, children_name, index, default, op_name, data_name, *rest):
        python = python_init(original, children_name, index, default, op_name, data_name, *rest)
        return _twin.Init(helpers, original, python, children_name, index, default, op_name, data_name)

    namespace["installed"], namespace["make_init"] = helpers, make_init
    found.update(_adtrace_add=helpers.add, _adtrace_sub=helpers.sub, _adtrace_visit=helpers.visit)
    return helpers


_COMPILED = {}  # (the grad attribute's name, the local backward's) -> the template compiled with them
_TEMPLATE = '''
def _adtrace_add(target, previous, contribution):
    result = previous
    result += contribution
    target.{grad} = result
    sink = active.get()
    if sink is not None:
        local = installed.local
        log = local.log if local is not None else None
        if log is not None and log.depth and not log.quiet:
            if sink is not log.sink:
                log.switch(sink)
            if type(result) is not float and type(result) is not int:  # (an array: as it is now, not when told)
                previous, contribution, result = kept(previous, contribution, result)
            log.items += (ADD, target, previous, contribution, result)
            if log.eager:
                log.flush()


def _adtrace_sub(target, previous, contribution):
    result = previous
    result -= contribution
    target.{grad} = result
    sink = active.get()
    if sink is not None:
        local = installed.local
        log = local.log if local is not None else None
        if log is not None and log.depth and not log.quiet:
            if sink is not log.sink:
                log.switch(sink)
            contribution = -contribution
            if type(result) is not float and type(result) is not int:
                previous, contribution, result = kept(previous, contribution, result)
            log.items += (ADD, target, previous, contribution, result)
            if log.eager:
                log.flush()


def _adtrace_set(value, target):
    sink = active.get()
    if sink is not None:
        local = installed.local
        log = local.log if local is not None else None
        if log is not None and log.depth and not log.quiet:
            previous = getattr(target, "{grad}", MISSING)
            target.{grad} = value
            if sink is not log.sink:
                log.switch(sink)
            if type(value) is not float and type(value) is not int:
                previous, _, value = kept(previous, None, value)
            log.items += (SET, target, previous, value)
            if log.eager:
                log.flush()
            return
    target.{grad} = value


def _adtrace_visit(node):
    sink = active.get()
    if sink is None:
        return node.{local}()
    local = installed.local
    log = local.log if local is not None else None
    if log is None or not log.depth or log.quiet:
        return node.{local}()
    closure = node.{local}
    run = closure if getattr(closure, "__code__", None) in known else bound.closure(closure)
    if sink is not log.sink:
        log.switch(sink)
    grad = getattr(node, "{grad}", MISSING)
    if type(grad) is not float and type(grad) is not int:
        grad = keep(grad)
    log.items += (VISIT, node, grad)
    if log.eager:
        log.flush()
    error = None
    try:
        if run is None:  # a closure of code not read (made outside the class): its writes seen as it returns
            children = log.children_of(node)
            before, mark = snapshot(children, "{grad}"), len(log.items)
            result = closure()
            if len(log.items) == mark:  # (else it called recompiled code, which logged its writes itself)
                after = snapshot(children, "{grad}")
                for target, previous, now in zip(children or (), before, after):
                    if now is not previous:
                        log.items += (UNSEEN, node, target, previous, now)
            return result
        return run()
    except BaseException as exc:
        error = exc
        raise
    finally:
        sink = active.get()
        if sink is not None:
            if sink is not log.sink:
                log.switch(sink)
            log.items += (LEFT, node, error)
            if log.eager:
                log.flush()
        error = None


def make_init(original, children_name, index, default, op_name, data_name, ordered, is_iterator, unordered):
    def __init__(node, *args, **kwargs):
        sink = active.get()
        if sink is None:
            return original(node, *args, **kwargs)
        local = installed.local
        log = local.log if local is not None else None
        if log is None or log.quiet:
            return original(node, *args, **kwargs)
        positional = index is not None and len(args) > index
        children = args[index] if positional else kwargs.get(children_name, default)
        if type(children) is not tuple and is_iterator(children):  # (read once: the engine gets them as a tuple)
            children = tuple(children)
            if positional:
                args = args[:index] + (children,) + args[index + 1:]
            else:
                kwargs[children_name] = children
        original(node, *args, **kwargs)
        op, data = getattr(node, op_name, ""), getattr(node, data_name, None)
        if type(children) is not tuple:
            if unordered(children):
                log.quiet += 1
                try:
                    children = ordered(op, data, tuple(children))
                finally:
                    log.quiet -= 1
            else:
                children = tuple(children)
        if type(data) is not float and type(data) is not int:
            data = keep(data)
        if sink is not log.sink:
            log.switch(sink)
        if type(children) is not tuple or len(children) > 2:
            log.items += (NODE, node, children, op, data)
        elif len(children) == 2:
            log.items += (BINARY, node, children[0], children[1], op, data)
        elif children:
            log.items += (UNARY, node, children[0], op, data)
        else:
            log.items += (LEAF, node, op, data)
        if log.eager:
            log.flush()
    return __init__


def make_backward(original):
    def backward(end, *args, **kwargs):
        sink = active.get()
        if sink is None:
            return original(end, *args, **kwargs)
        local = installed.local
        log = local.log if local is not None else None
        if log is None or log.quiet:
            return original(end, *args, **kwargs)
        if sink is not log.sink:
            log.switch(sink)
        log.items += (START, end)
        if log.eager:
            log.flush()
        log.depth += 1
        error = None
        try:
            return original(end, *args, **kwargs)
        except BaseException as exc:
            error = exc
            raise
        finally:
            log.depth -= 1
            sink = active.get()
            if sink is not None:
                if sink is not log.sink:
                    log.switch(sink)
                log.items += (END, end, error)
                if log.eager:
                    log.flush()
            error = None
    return backward
'''


def _keep(value):
    """An array as it is now (the engine may write into it before the log is told)."""
    return value.copy() if type(value) is np.ndarray else value


def _kept(previous, contribution, result):
    """A write's arrays as they are now; a write in place (``previous`` is ``result``) stays one."""
    kept = _keep(result)
    return kept if previous is result else _keep(previous), _keep(contribution), kept


def _snapshot(children, grad):
    if not children:
        return ()
    return [getattr(child, grad, MISSING) for child in children]


class _Replayer:
    """The records of one log told to their sinks, as ``ClassHooks`` tells them as it happens."""

    def __init__(self, log):
        self.log = log
        # id(value) -> where its record is in the log's items (an int, not its children: no object kept per value,
        # which would make Python's collector walk the whole heap while the log is told; the log keeps the value)
        self.children = {}
        self.frames = []   # [node, children, unwritten] per running visit
        self.ends = []     # the values whose backward() runs
        self.sink = None
        self.revived = ()

    def children_of(self, node, items=None):
        """``node``'s children as its record gave them, or None (made before the hooks)."""
        at = self.children.get(id(node))
        if at is None:
            return None
        items = self.log.items if items is None else items
        kind = items[at]
        return (items[at + 2], items[at + 3]) if kind == BINARY else () if kind == LEAF else \
            (items[at + 2],) if kind == UNARY else items[at + 2]

    def replay(self, items, at, end):
        self.log.quiet += self.log.thread == threading.get_ident()
        try:
            self._revive(self.sink)  # (the sink of the records before these, still theirs)
            self._replay(items, at, end)
        finally:
            self._revive(None)
            self.log.quiet -= self.log.thread == threading.get_ident()

    def _replay(self, items, at, end):
        sink = self.sink
        frames, ends = self.frames, self.ends
        while at < end:
            kind = items[at]
            if kind == SINK:
                sink = self.sink = items[at + 1]
                self._revive(sink)
            elif sink is None:
                pass
            elif kind == BINARY:
                node = items[at + 1]
                self.children[id(node)] = at
                sink.node_created(node, (items[at + 2], items[at + 3]), items[at + 4], items[at + 5])
            elif kind == LEAF:
                node = items[at + 1]
                self.children[id(node)] = at
                sink.node_created(node, (), items[at + 2], items[at + 3])
            elif kind == UNARY or kind == NODE:
                node, children = items[at + 1], items[at + 2]
                self.children[id(node)] = at
                sink.node_created(node, (children,) if kind == UNARY else children, items[at + 3], items[at + 4])
            elif kind == ADD or kind == UNSEEN:
                if kind == ADD:
                    target, previous, contribution, result = items[at + 1:at + 5]
                    accumulated = True
                    if not isinstance(result, float) and type(result) is not int:  # (a float64 is a float)
                        contribution = accumulated = None  # (a float32's sum, a numpy int's: as the descriptors say)
                else:
                    _, target, previous, result = items[at + 1:at + 5]
                    contribution, accumulated = (result, True) if previous is None or previous is MISSING else \
                        (None, None)
                if frames:
                    frame = frames[-1]
                    sink.grad_written(frame[0], target, _position(frame, target), previous, contribution, result,
                                      accumulated)
                elif ends and target is ends[-1]:  # (written by backward() itself: its end's is the seed)
                    sink.seeded(target, previous, result)
                else:
                    sink.grad_written(None, target, None, previous, None, result, None)
            elif kind == SET:
                target, previous, value = items[at + 1:at + 4]
                if frames:
                    frame = frames[-1]
                    contribution, accumulated = (value, True) if previous is None or previous is MISSING else \
                        (None, None)
                    sink.grad_written(frame[0], target, _position(frame, target), previous, contribution, value,
                                      accumulated)
                elif ends and target is ends[-1]:
                    sink.seeded(target, previous, value)
                else:
                    sink.grad_written(None, target, None, previous, None, value, None)
            elif kind == VISIT:
                node = items[at + 1]
                sink.local_backward_started(node, items[at + 2])
                children = self.children_of(node, items)
                frames.append([node, children, (1 << len(children)) - 1 if children else 0])
            elif kind == LEFT:
                if frames:
                    frames.pop()
                sink.local_backward_ended(items[at + 1], items[at + 2])
            elif kind == START:
                ends.append(items[at + 1])
                sink.backward_started(items[at + 1])
            elif kind == END:
                if ends:
                    ends.pop()
                sink.backward_ended(items[at + 1], items[at + 2])
            at += SIZES[kind]

    def _revive(self, sink):
        """Recorders closed before they were read hear their records all the same (each back as it was
        after); a recorder hears only its own thread's calls, as it does when they happen."""
        for member, live, thread in self.revived:
            member.live, member.thread = live, thread
        self.revived = ()
        if sink is None:
            return
        revived = []
        for member in getattr(sink, "recorders", (sink,)):
            if getattr(member, "logs", None) is None:  # (an attached sink: called as it happens)
                continue
            revived.append((member, member.live, member.thread))
            if member.closed and member.failure is None:
                member.live = True
            member.thread = threading.get_ident() if member.thread == self.log.thread else -1
        self.revived = tuple(revived)


def _position(frame, target):
    """The first unwritten position of ``target`` among the frame's node's children, now written; None if none."""
    children, unwritten, at = frame[1], frame[2], 0
    while unwritten >> at:
        if unwritten >> at & 1 and children[at] is target:
            frame[2] = unwritten & ~(1 << at)
            return at
        at += 1
    return None


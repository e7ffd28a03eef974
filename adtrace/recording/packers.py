"""Writing events: one packer per event type, generated from its declaration (``events.layout``).

A recorder writes an event by name, ``write(values, AddOutgrads, mode="rev", level=..., ...)``,
never as a hand-ordered tuple: the packer puts the fields where the event log reads them
(``eventlog``), and a field missing or misnamed raises ``TypeError``. A field is given as it is
stored: a ``PAIR`` as two names (``previous``, ``previous_flag``), ``LABELS`` already joined by
commas, a ``TAIL`` as a sequence (its count is written for it).

A call by keywords costs about 1,900 instructions per event (callgrind), a quarter of the
recorder's own cost on a scalar chain. So the recorder's classes are compiled with their writes
inlined (``inline_writes``): each ``write(...)`` statement becomes the packer's own statements over
the call's argument expressions, the same ``values.extend((tag, ...))`` a recorder once wrote by
hand. The check is made then, at import: the keywords must be the type's, in stored order (the
order they are evaluated in, as in a call).
"""

import ast
import copy
import inspect
import textwrap

from .events import EVENT_TYPES, PAIR, TAIL, layout


def parameters(event_type):
    """The names a write of ``event_type`` takes, in stored order (a ``PAIR`` field as ``<name>``
    and ``<name>_flag``)."""
    names = []
    for name, how in layout(event_type):
        names += [name, f"{name}_flag"] if how == PAIR else [name]
    return tuple(names)


def _statements(event_type):
    """The packer's body, over its own parameter names and ``values``: straight-line code."""
    names = list(parameters(event_type))
    tail = names.pop() if layout(event_type)[-1][1] == TAIL else None
    slots = [str(event_type.index), *names] + ([f"len({tail})"] if tail else [])
    return f"values.extend(({', '.join(slots)},))" + (f"\nvalues.extend({tail})" if tail else "")


def _packer(event_type):
    """``write_<kind>(values, *, <parameters>)``, generated once at import, as ``fanout.guarded`` is."""
    name = f"write_{event_type.kind}"
    source = (f"def {name}(values, *, {', '.join(parameters(event_type))}):\n"
              + textwrap.indent(_statements(event_type), "    ") + "\n")
    namespace = {}
    # (a fixed template over the declared field names, filed under this module: machinery)
    exec(compile(source, f"{__file__} (packer of {event_type.__name__})", "exec"), namespace)
    return namespace[name]


PACKERS = tuple(_packer(t) for t in EVENT_TYPES)  # by type tag


def write(values, event_type, **fields):
    """Append one event of ``event_type`` to ``values`` (an ``EventLog``'s), its fields by name."""
    PACKERS[event_type.index](values, **fields)


def packed(event_type, **fields):
    """The slots ``write`` appends, as a tuple: an event kept to be written later."""
    values = []
    PACKERS[event_type.index](values, **fields)
    return tuple(values)


# -------------------- writes compiled inline --------------------

def inline_writes(cls):
    """Class decorator: each method's ``write(values, EventType, ...)`` statements compiled as the
    packer's own statements (no call per event). A method whose source cannot be read keeps its
    calls (slower, the same events)."""
    for function in vars(cls).values():
        if inspect.isfunction(function):
            try:
                source = textwrap.dedent(inspect.getsource(function))
            except (OSError, TypeError):
                continue
            if "write(" in source:
                function.__code__ = _inlined(function, source)
    return cls


def _inlined(function, source):
    tree = ast.parse(source)
    definition = tree.body[0]
    definition.decorator_list = []  # (applied already)
    _Inliner(function).visit(tree)
    ast.increment_lineno(tree, function.__code__.co_firstlineno - 1)
    module = compile(ast.fix_missing_locations(tree), function.__code__.co_filename, "exec")
    code = next(c for c in module.co_consts if isinstance(c, type(module)) and c.co_name == function.__name__)
    if code.co_freevars != function.__code__.co_freevars:  # (a closure, super(): not for this compiler)
        raise TypeError(f"{function.__qualname__}: cannot inline writes in a function with free variables")
    if hasattr(code, "co_qualname"):  # (Python 3.11+)
        code = code.replace(co_qualname=function.__code__.co_qualname)
    return code


class _Inliner(ast.NodeTransformer):
    def __init__(self, function):
        self.function = function

    def _resolve(self, node):
        return self.function.__globals__.get(node.id) if isinstance(node, ast.Name) else None

    def visit_Call(self, node):
        if self._resolve(node.func) is write:
            raise TypeError(f"{self.function.__qualname__}: write(...) is a statement of its own (line "
                            f"{node.lineno} of its source)")
        return self.generic_visit(node)

    def visit_Expr(self, node):
        call = node.value
        if not (isinstance(call, ast.Call) and self._resolve(call.func) is write):
            return self.generic_visit(node)
        where = f"{self.function.__qualname__} (line {node.lineno} of its source)"
        event_type = self._resolve(call.args[1]) if len(call.args) == 2 else None
        if event_type not in EVENT_TYPES:
            raise TypeError(f"{where}: write(values, EventType, field=...) names its event type")
        given = tuple(k.arg for k in call.keywords)
        if given != parameters(event_type):
            raise TypeError(f"{where}: write(values, {event_type.__name__}, ...) takes "
                            f"{', '.join(parameters(event_type))}, in this order; got {', '.join(map(str, given))}")
        fields = {k.arg: k.value for k in call.keywords}
        if layout(event_type)[-1][1] == TAIL and not isinstance(fields[given[-1]], ast.Name):
            raise TypeError(f"{where}: the tail {given[-1]!r} is read twice: give it as a name")
        fields["values"] = call.args[0]
        statements = ast.parse(_statements(event_type)).body
        for statement in statements:
            for part in ast.walk(statement):  # the template's own nodes stand at the call's place
                ast.copy_location(part, node)
        return [_Substitute(fields).visit(s) for s in statements]


class _Substitute(ast.NodeTransformer):
    """Each parameter name of a packer's body replaced by the call's expression for it."""

    def __init__(self, fields):
        self.fields = fields

    def visit_Name(self, node):
        if node.id in self.fields:
            return copy.deepcopy(self.fields[node.id])
        return node

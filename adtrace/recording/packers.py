"""Writing events: one packer per event type, generated from its declaration (``events.layout``).

A recorder writes an event by name, ``write(values, AddOutgrads, mode="rev", level=..., ...)``,
never as a hand-ordered tuple: the packer puts the fields where the event log reads them
(``eventlog``), and a field missing or misnamed raises ``TypeError``. A field is given as it is
stored: a ``PAIR`` as two names (``previous``, ``previous_flag``), ``LABELS`` already joined by
commas, a ``TAIL`` as a sequence (its count is written for it, in the same ``extend``: an event is
appended whole). A type's packer is made when it is first written, so a type declared after import
(a test's throwaway kind) is written like the others.

A call by keywords costs about 1,900 instructions per event (callgrind), a quarter of the
recorder's own cost on a scalar chain. So the recorder's classes are compiled with their writes
inlined (``inline_writes``): each ``write(...)`` statement becomes the packer's own statements over
the call's argument expressions, the same ``values.extend((head, ...))`` a recorder once wrote by
hand (the head, ``(tag, mode, level, query)``, the one ``eventlog.HEADS`` keeps: looked up there only when
its fields are not those of the last head written under its tag, ``_head``). The check is made
then, at import of a class so decorated (``write`` called elsewhere checks
its keywords when it runs): the keywords must be the type's, in stored order (the order they are
evaluated in, as in a call), a tail given as a name (it is read for its count, then its items) and
the values appended to as a name or an attribute (``values``, ``self.values``: read with no call).
"""

import ast
import copy
import inspect
import linecache
import sys
import textwrap

from . import events
from .eventlog import HEADS, HEADS_NAME
from .events import FORM_STEP, HEAD, ONE_ITEM, TAIL, Same, layout, parameters
from .values import NO_REFERENCE

NO_REFERENCE_NAME = "__adtrace_no_reference__"  # the name the packers' code reads values.NO_REFERENCE by
FORM_VALUES = {}  # name -> a value a stored form's test compares with by identity (events.Is), by the same names


def _statements(event_type, constant=None):
    """The packer's body, over its own parameter names, ``values`` and ``HEADS_NAME``: one ``extend`` per
    stored form, straight-line code (the head first, looked up as its fields, the first ones, are evaluated; a
    tail's items after their count, in the same call: an event is appended whole), the shorter forms
    (``events.Is``) under the tests that choose them. ``constant``: parameter -> value, for the parameters
    an inlined call gives as constants (their tests decided now, not at run time)."""
    constant = constant or {}
    branches = []
    for k, form in enumerate(event_type.forms, 1):
        tests = [_test(event_type, name, how, constant) for name, how in form.items()]
        if False in tests:
            continue  # (never, for this call)
        tests = [t for t in tests if t is not True]
        if any(" and ".join(tests) == test for test, _ in branches):
            continue  # (decided by the same tests as a form before it, for this call)
        branches.append((" and ".join(tests), _extend(event_type, event_type.index + FORM_STEP * k, form, constant)))
        if not tests:
            break  # (always, for this call)
    else:
        branches.append(("", _extend(event_type, event_type.index, {}, constant)))
    if not branches[0][0]:
        return branches[0][1]
    source = "".join(f"{'elif' if i else 'if'} {test}:\n{textwrap.indent(extend, '    ')}"
                     for i, (test, extend) in enumerate(branches) if test)
    return source + ("" if branches[-1][0] else f"else:\n{textwrap.indent(branches[-1][1], '    ')}")


def _extend(event_type, tag, form, constant):
    """The lines writing an event stored in ``form`` under ``tag``: its head found (``_head``), then its one
    ``extend``."""
    names = list(parameters(event_type))
    heads = [name for name, how in layout(event_type) if how == HEAD]
    if names[:len(heads)] != heads:  # (evaluated in stored order, as in a call)
        raise TypeError(f"{event_type.__name__}: the fields stored {HEAD!r} come first")
    tail = names[-1] if layout(event_type)[-1][1] == TAIL else None
    found = _head(tag, heads, constant)
    stored = [f"{HEAD_LOCAL}[0]"]
    for name in names[len(heads):]:
        how = form.get(name)
        if how is ONE_ITEM:
            stored.append(f"{name}[0]")
        elif how is None and name == tail:
            return found + f"values.extend([{', '.join(stored)}, len({tail}), *{tail}])\n"
        elif how is None:
            stored.append(name)
    return found + f"values.extend(({', '.join(stored)},))\n"


HEAD_LOCAL = "__adtrace_head__"  # the local name an inlined write keeps its head in: (head, *its fields as given)
HEAD_CELLS = {}  # name -> [(head, *its fields as given)]: the head last written under a tag, by the same names
_NEVER = object()  # (no field given is this object: a cell's first test fails)


def _head(tag, heads, constant):
    """Lines finding the head ``(tag, mode, level, query)`` into ``HEAD_LOCAL``: looked up in ``HEADS`` (a tuple
    built, hashed and compared: about 1,200 instructions) only when the fields differ, by identity, from those of
    the last head written under this tag (its cell's); a query's events are written with the same objects. The
    fields an inlined call gives as constants are not tested: the cell is one of its own for those constants."""
    given = tuple((i, name) for i, name in enumerate(heads, 1) if name not in constant)
    key = (tag, tuple((name, type(constant[name]), constant[name]) for name in heads if name in constant))
    cell = _CELL_NAMES.get(key)
    if cell is None:
        cell = _CELL_NAMES[key] = f"__adtrace_head_cell_{len(_CELL_NAMES)}__"
        HEAD_CELLS[cell] = [(None, *[_NEVER] * len(heads))]
    lookup = f"{HEAD_LOCAL} = {cell}[0] = ({HEADS_NAME}[{', '.join([str(tag), *heads])}], {', '.join(heads)})"
    if not given:
        return f"{HEAD_LOCAL} = {cell}[0]\nif {HEAD_LOCAL}[0] is None:\n    {lookup}\n"
    test = " or ".join(f"{HEAD_LOCAL}[{i}] is not {name}" for i, name in reversed(given))  # (the query first)
    return f"{HEAD_LOCAL} = {cell}[0]\nif {test}:\n    {lookup}\n"


_CELL_NAMES = {}  # (tag, the constants given for its head) -> the name of its cell in HEAD_CELLS


def _test(event_type, name, how, constant):
    """The source of the test that ``name`` fits ``how`` (``Is``, ``Same``, ``ONE_ITEM``), or True / False when
    decided now (``constant``)."""
    if type(how) is Same:
        if name in constant and how.name in constant:
            return constant[name] is constant[how.name] and type(constant[name]) in NO_REFERENCE
        return f"{name} is {how.name} and type({name}) in {NO_REFERENCE_NAME}"
    if how is ONE_ITEM:
        return f"len({name}) == 1"
    if name in constant:
        return constant[name] is how.value
    if name == _tail(event_type):  # a tail of these very items
        return " and ".join([f"len({name}) == {len(how.value)}",
                             *(_is(f"{name}[{i}]", item) for i, item in enumerate(how.value))])
    return _is(name, how.value)


def _is(expression, value):
    """``expression is value``, ``value`` named in the packers' globals (``FORM_VALUES``) unless None, True or False."""
    if value is None or value is True or value is False:
        return f"{expression} is {value}"
    name = f"__adtrace_form_value_{id(value)}__"
    FORM_VALUES[name] = value
    return f"{expression} is {name}"


def _tail(event_type):
    name, how = layout(event_type)[-1]
    return name if how == TAIL else None


def _packer(event_type):
    """``write_<kind>(values, *, <parameters>)``, generated when its type is first
    written, as ``fanout.guarded`` is."""
    name = f"write_{event_type.kind}"
    source = (f"def {name}(values, *, {', '.join(parameters(event_type))}):\n"
              + textwrap.indent(_statements(event_type), "    ") + "\n")
    namespace = {HEADS_NAME: HEADS, NO_REFERENCE_NAME: NO_REFERENCE, **FORM_VALUES, **HEAD_CELLS}
    # (a fixed template over the declared field names, filed under this module: machinery)
    exec(compile(source, f"{__file__} (packer of {event_type.__name__})", "exec"), namespace)
    return namespace[name]


class _Packers(dict):
    """type tag -> packer, made when a type is first written (as ``eventlog.LAYOUTS``): a type declared
    after import (a test's throwaway kind) is written like the others."""

    def __missing__(self, tag):
        made = self[tag] = _packer(events.EVENT_TYPES[tag])
        return made


PACKERS = _Packers()  # by type tag


def write(values, event_type, **fields):
    """Append one event of ``event_type`` to ``values`` (an ``EventLog``'s), its fields by name."""
    PACKERS[event_type.index](values, **fields)



# -------------------- writes compiled inline --------------------

def inline_writes(cls):
    """Class decorator: each method's ``write(values, EventType, ...)`` statements compiled as the
    packer's own statements (no call per event). The class's file is parsed once for it; each method is
    compiled from its own node, at its own line and column, inside a ``class <name>:`` of its own
    (so ``self.__name`` is mangled as in the class). A method whose source cannot be found or compiled
    keeps its calls (slower, the same events); a write that does not match its declaration fails."""
    for function in vars(cls).values():
        if not inspect.isfunction(function):
            continue
        definition = _definition(function)
        if definition is None:
            continue  # (no source, or a wrapper made elsewhere)
        inliner = _Inliner(function)
        definition = inliner.visit(definition)
        inlined = _compiled(cls, function, definition) if inliner.inlined else None
        if inlined is not None:
            function.__globals__.setdefault(HEADS_NAME, HEADS)  # (the heads its writes read)
            function.__globals__.setdefault(NO_REFERENCE_NAME, NO_REFERENCE)  # (and what their forms' tests read)
            for name, value in {**FORM_VALUES, **HEAD_CELLS}.items():
                function.__globals__.setdefault(name, value)
            function.__code__ = inlined
    _PARSED.clear()  # (its trees would stay alive for good: more objects for every garbage collection to walk)
    return cls


_PARSED = {}  # file name -> (its source, its functions not compiled yet): parsed once for all a class's methods


def _definition(function):
    """The ``FunctionDef`` of ``function`` in its file (a tree of its own: the caller may change it), or
    ``None`` without its source. Found by name and first line (as ``co_firstlineno``: its first decorator's)."""
    code = function.__code__
    key = (code.co_name, code.co_firstlineno)
    try:
        source = "".join(linecache.getlines(code.co_filename, function.__globals__))
        parsed = _PARSED.get(code.co_filename)
        if parsed is None or parsed[0] != source or key not in parsed[1]:  # (new, changed, or compiled already)
            found, statements = {}, list(ast.parse(source, code.co_filename).body)
            while statements:  # (statements only: a def is one)
                node = statements.pop()
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    found[node.name, min([node.lineno] + [d.lineno for d in node.decorator_list])] = node
                for block in ("body", "orelse", "finalbody", "handlers", "cases"):
                    statements += getattr(node, block, ())
            _PARSED.clear()  # (a class's methods are in one file)
            parsed = _PARSED[code.co_filename] = (source, found)
    except (OSError, SyntaxError, ValueError):
        return None
    return parsed[1].pop(key, None)  # (each taken once: no copy needed)


def _compiled(cls, function, definition):
    """The code of ``definition`` compiled inside ``class <cls.__name__>:`` at its own place in its file,
    or ``None`` (the function keeps its own code) if it cannot stand for the function's."""
    if definition.decorator_list:  # (applied already; the code starts at the first, as the function's does)
        definition.lineno = definition.decorator_list[0].lineno
        definition.decorator_list = []
    first = definition.lineno
    wrapper = ast.ClassDef(name=cls.__name__, bases=[], keywords=[], body=[definition], decorator_list=[],
                           lineno=first, col_offset=0, end_lineno=definition.end_lineno, end_col_offset=0)
    if sys.version_info >= (3, 12):
        wrapper.type_params = []
    original = function.__code__
    try:
        module = compile(ast.Module(body=[wrapper], type_ignores=[]), original.co_filename, "exec")
        body = next(c for c in module.co_consts if isinstance(c, type(module)))
        code = next(c for c in body.co_consts if isinstance(c, type(module)) and c.co_name == original.co_name)
        if code.co_freevars != original.co_freevars:  # (a closure over a function's names)
            return None
        if hasattr(code, "co_qualname"):  # (Python 3.11+)
            code = code.replace(co_qualname=original.co_qualname)
    except Exception:  # (anything this compiler cannot do: the function keeps its calls)
        return None
    return code


class _Inliner(ast.NodeTransformer):
    def __init__(self, function):
        self.function = function
        self.inlined = 0  # writes replaced

    def _resolve(self, node):
        return self.function.__globals__.get(node.id) if isinstance(node, ast.Name) else None

    def _where(self, node):
        return f"{self.function.__code__.co_filename}:{node.lineno} ({self.function.__qualname__})"

    def visit_Call(self, node):
        if self._resolve(node.func) is write:
            raise TypeError(f"{self._where(node)}: write(...) is a statement of its own")
        return self.generic_visit(node)

    def visit_Expr(self, node):
        call = node.value
        if not (isinstance(call, ast.Call) and self._resolve(call.func) is write):
            return self.generic_visit(node)
        where = self._where(node)
        event_type = self._resolve(call.args[1]) if len(call.args) == 2 else None
        if event_type not in events.EVENT_TYPES:
            raise TypeError(f"{where}: write(values, EventType, field=...) names its event type")
        given = tuple(k.arg for k in call.keywords)
        if given != parameters(event_type):
            raise TypeError(f"{where}: write(values, {event_type.__name__}, ...) takes "
                            f"{', '.join(parameters(event_type))}, in this order; got {', '.join(map(str, given))}")
        fields = {k.arg: k.value for k in call.keywords}
        if layout(event_type)[-1][1] == TAIL and not isinstance(fields[given[-1]], ast.Name):
            raise TypeError(f"{where}: the tail {given[-1]!r} is read twice: give it as a name")
        fields["values"] = call.args[0]
        if not _plain(fields["values"]):
            raise TypeError(f"{where}: the values a write appends to are given as a name or an attribute "
                            "(values, self.values)")
        # a form's tests read their fields before the extend: a field tested that is no name or constant, and
        # every field before it, is evaluated first into a name of its own (each field once, in order)
        tested = {name for form in event_type.forms for name, how in form.items()} | \
                 {how.name for form in event_type.forms for how in form.values() if type(how) is Same} | \
                 {name for name, how in layout(event_type) if how == HEAD}  # (and the head's, tested by _head)
        hoisted = [k for k, name in enumerate(given)
                   if name in tested and not isinstance(fields[name], (ast.Name, ast.Constant))]
        # a local name is read where the template reads it (no copy into a name of its own): reading it has no
        # effect, and no field expression before the extend rebinds it (unless one has a walrus)
        local = set(self.function.__code__.co_varnames) - self._rebound(call)
        first = []
        for name in given[:hoisted[-1] + 1] if hoisted else ():
            if isinstance(fields[name], ast.Constant):
                continue  # (no evaluation to order; kept a constant, its test decided now)
            if isinstance(fields[name], ast.Name) and fields[name].id in local:
                continue
            first.append(ast.Assign(targets=[ast.Name(id=f"_adtrace_{name}", ctx=ast.Store())], value=fields[name]))
            fields[name] = ast.Name(id=f"_adtrace_{name}", ctx=ast.Load())
        constant = {name: fields[name].value for name in given if isinstance(fields[name], ast.Constant)}
        statements = first + [_Substitute(fields).visit(s) for s in ast.parse(_statements(event_type, constant)).body]
        for statement in statements:
            for part in ast.walk(statement):  # the template's own nodes stand at the call's place
                ast.copy_location(part, node)
        self.inlined += 1
        return statements


    @staticmethod
    def _rebound(call):
        """The names a write's own expressions bind (a walrus): read in order, through names of their own."""
        return {part.target.id for part in ast.walk(call) if isinstance(part, ast.NamedExpr)
                and isinstance(part.target, ast.Name)}


def _plain(node):
    """A name or a chain of attributes of a name (``values``, ``self.values``): read with no call."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


class _Substitute(ast.NodeTransformer):
    """Each parameter name of a packer's body replaced by the call's expression for it."""

    def __init__(self, fields):
        self.fields = fields

    def visit_Name(self, node):
        if node.id in self.fields:
            return copy.deepcopy(self.fields[node.id])
        return node

"""The class's own ``backward()``, read from its source: each statement with the ``Callbacks`` calls it
makes, and its ``EngineCode`` (``recording/engine_code.py``): the statement each event stands for.
For micrograd 0.1.0::

    def backward(self):          backward_started, backward_ended   backward_end (it returns; the grads stay)
        topo = []                -
        visited = set()          -
        def build_topo(v):       -   (locals: building the order is not hooked)
            ...
        build_topo(self)         -
        self.grad = 1            seeded                             backward_start
        for v in reversed(topo): -                                  toposort (the loop around the visit)
            v._backward()        local_backward_started,            vjp, add_outgrads
                                 grad_written, local_backward_ended

A write ``self.grad = ...`` is the seed; a write into another value's ``.grad`` (a zeroing loop)
is ``grad_written`` with no writer (``write``); a call of ``._backward()`` is a visit, with the
writes its closure makes. A value made by an operation (``node``) is ``Value(data, _children, _op)``.
"""

import ast
import inspect
import linecache
import textwrap
import weakref
from dataclasses import dataclass

from ..callsite import source_location
from ..engine_code import EngineCode, EngineStatement
from .ops import OPS
from .shape import GRAD_WRITE, LOCAL_BACKWARD, PASS_START, edge_loop

ENGINE = "micrograd"

# what an unreadable backward() (a class typed into the interactive shell) is taken to say
USUAL = {"backward_start": "self.grad = 1", "toposort": "for v in reversed(topo):", "vjp": "v._backward()",
         "add_outgrads": "v._backward()", "backward_end": "def backward(self):"}
_LOOPS = ("for ", "async for ", "while ")
PASS = ("backward_started", "backward_ended")
SEED = ("seeded",)
WRITE = ("grad_written",)
VISIT = ("local_backward_started", "grad_written", "local_backward_ended")
_BLOCKS = ("body", "handlers", "cases", "orelse", "finalbody")
_NESTED = (ast.stmt, ast.excepthandler) + ((ast.match_case,) if hasattr(ast, "match_case") else ())


def engine_code(cls, relative_to=None, shape=None):
    """``cls``'s ``EngineCode``; ``relative_to``: the folder its location is relative to; ``shape``: the
    names the class uses (``Shape``: a declared class's), micrograd's when None. Read once per class and
    source text: each ``record()`` asks (reading and parsing took about 1.4 ms, a twentieth of a micrograd
    training step); made again when its ``backward`` or its file's text (as ``linecache`` holds it) changed."""
    names = _names(shape)
    function = _backward_of(cls, names)
    key, text = (relative_to, names, cls.__qualname__, cls.__module__), _source_text(function)
    made = _MADE.get(cls, {}).get(key)
    if made is not None and made[0]() is function and made[1] is text and text is not None:
        return made[2]
    code = _engine_code(cls, function, names, relative_to)
    if text is not None:
        try:
            _MADE.setdefault(cls, {})[key] = (weakref.ref(function), text, code)
        except TypeError:  # (a class or a backward that takes no weak reference: read each time)
            pass
    return code


# cls -> {(relative_to, names, qualname, module): (weak reference to its backward, the lines linecache
# held for its file, EngineCode)}; weak: a class made in a test goes when it is dropped (nothing in the
# value refers to the class)
_MADE = weakref.WeakKeyDictionary()


def _source_text(function):
    """The list of lines ``linecache`` holds for ``function``'s file, after checking the file (as
    ``inspect.getsourcelines`` does first): the same list while the text is the same; None if none."""
    try:
        path = inspect.getsourcefile(function)
    except TypeError:
        return None
    if not path:
        return None
    linecache.checkcache(path)
    return linecache.getlines(path) or None


def _engine_code(cls, function, names, relative_to):
    name, location = f"{cls.__qualname__}.{names[0]}", source_location(function, relative_to)
    made = {"node": EngineStatement(f"{cls.__qualname__}(data, _children, _op)", None)}
    title = ENGINE if cls.__module__ == "micrograd.engine" else cls.__qualname__
    try:
        lines, start, statements = _read(function, names)
    except (OSError, TypeError, SyntaxError):
        usual = {key: EngineStatement(text, None) for key, text in USUAL.items()}
        return EngineCode(ENGINE, name, location, (f"# the source of {name} is not available",), {**made, **usual},
                          ops=OPS, title=title)
    lines = tuple(textwrap.dedent("".join(lines)).rstrip().splitlines())
    return EngineCode(ENGINE, name, location, lines, {**made, **_by_key(statements, start)}, ops=OPS,
                      title=title)


def _by_key(statements, start):
    def at(statement):
        return EngineStatement(statement.text, statement.line - start)

    found = {"backward_end": at(statements[0])}
    for index, statement in enumerate(statements):
        callbacks = statement.callbacks
        if SEED[0] in callbacks:
            found.setdefault("backward_start", at(statement))
        if VISIT[0] in callbacks and "vjp" not in found:
            found["vjp"] = found["add_outgrads"] = at(statement)
            found["toposort"] = at(_loop_around(statements, index))
        elif WRITE[0] in callbacks:
            found.setdefault("write", at(statement))
    return found


def _loop_around(statements, index):
    """The loop statement ``statements[index]`` is in (the one that walks the order), else itself."""
    depth = statements[index].depth
    for statement in reversed(statements[:index]):
        if statement.depth < depth:
            return statement if statement.text.startswith(_LOOPS) else statements[index]
    return statements[index]


@dataclass(frozen=True)
class Statement:
    line: int          # its first line in the engine's source file
    depth: int         # 0: the def line; 1: backward()'s body; 2: inside a loop or nested function ...
    text: str          # its source; the header line of a compound statement
    callbacks: tuple   # the callbacks (``hooks.Callbacks``) it makes, in the order they come


def backward_statements(cls, shape=None):
    """The def line of ``cls.backward`` and every statement inside it, in source order.
    Raises OSError when the source cannot be read (a class made in the interactive shell)."""
    names = _names(shape)
    return _read(_backward_of(cls, names), names)[2]


def _names(shape):
    """``(backward, local backward, grad, edges)``: the names the class's ``backward()`` is read with
    (``edges``: the edge style's pairs, whose loop writing ``.grad`` is the visit; else None)."""
    if shape is None:
        return PASS_START, LOCAL_BACKWARD, GRAD_WRITE, None
    return shape.backward, shape.local_backward, shape.grad, shape.edges


def _backward_of(cls, names):
    return inspect.unwrap(inspect.getattr_static(cls, names[0]))


def _read(function, names):
    """``(source lines, first line, statements)`` of ``function``."""
    lines, start = inspect.getsourcelines(function)
    return lines, start, list(_parse(lines, start, names))


def _parse(lines, start, names):
    source = textwrap.dedent("".join(lines))
    definition = ast.parse(source).body[0]
    if not isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef)):  # backward = lambda self: ...
        yield _lambda_statement(definition, source, start, names)
        return
    text = source.splitlines()[definition.lineno - 1].strip()
    yield Statement(start + definition.lineno - 1, 0, text, PASS)
    yield from _statements(definition.body, 1, source, start - 1, _self_name(definition), names)


def _lambda_statement(assignment, source, start, names):
    """A ``backward`` written as a lambda: one statement, the def line and its body at once."""
    function = next((node for node in ast.walk(assignment) if isinstance(node, ast.Lambda)), None)
    if function is None:
        raise TypeError("backward's source is neither a def nor a lambda")
    text = " ".join(part.strip() for part in ast.get_source_segment(source, assignment).splitlines())
    callbacks = _merge(PASS, _callbacks([function.body], _self_name(function), names))
    return Statement(start + assignment.lineno - 1, 0, text, callbacks)


def _self_name(function):
    arguments = function.args.posonlyargs + function.args.args
    return arguments[0].arg if arguments else None


def _statements(body, depth, source, offset, self_name, names):
    for statement in body:
        header, nested = _split(statement)
        callbacks = _callbacks(header, self_name, names)
        if names[3] and edge_loop(statement, names[3], names[2]):
            callbacks = _merge(callbacks, VISIT)
        yield Statement(offset + statement.lineno, depth, _text(statement, nested, source), callbacks)
        for block in nested:
            yield from _statements(block, depth + 1, source, offset, self_name, names)


def _split(statement):
    """The statement's own expressions, and the blocks of statements nested in it."""
    nested = []
    for field in _BLOCKS:
        block = getattr(statement, field, None) or []
        if field in ("handlers", "cases"):
            nested += [part.body for part in block]
        elif block:
            nested.append(block)
    header = [child for child in ast.iter_child_nodes(statement) if not isinstance(child, _NESTED)]
    return header, nested


def _text(statement, nested, source):
    if nested:  # a compound statement: its header line
        return source.splitlines()[statement.lineno - 1].strip()
    segment = ast.get_source_segment(source, statement)
    return " ".join(part.strip() for part in segment.splitlines())


def _callbacks(header, self_name, names):
    _, local_backward, grad, _ = names
    callbacks = ()
    for node in (inner for part in header for inner in ast.walk(part)):
        if isinstance(node, ast.Attribute) and node.attr == grad and isinstance(node.ctx, ast.Store):
            is_self = isinstance(node.value, ast.Name) and node.value.id == self_name
            callbacks = _merge(callbacks, SEED if is_self else WRITE)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == local_backward:
            callbacks = _merge(callbacks, VISIT)
    return callbacks


def _merge(callbacks, more):
    return callbacks + tuple(c for c in more if c not in callbacks)

"""The statements of an engine's own ``backward()``, read from its source, with the callbacks each makes.

A report's "state per statement of the engine's backward()" lists these statements and, beside
each, what the recorded events show it did. For micrograd 0.1.0::

    def backward(self):                      backward_started, backward_ended
        topo = []                            -
        visited = set()                      -
        def build_topo(v):                   -   (locals: building the order is not hooked)
            ...
        build_topo(self)                     -
        self.grad = 1                        seeded
        for v in reversed(topo):             -
            v._backward()                    local_backward_started, grad_written, local_backward_ended

A write ``self.grad = ...`` is the seed; a write into another value's ``.grad`` (a zeroing loop)
is ``grad_written`` with no writer; a call of ``._backward()`` is a visit, with the writes its
closure makes.
"""

import ast
import inspect
import textwrap
from dataclasses import dataclass

PASS = ("backward_started", "backward_ended")
SEED = ("seeded",)
WRITE = ("grad_written",)
VISIT = ("local_backward_started", "grad_written", "local_backward_ended")
_BLOCKS = ("body", "handlers", "cases", "orelse", "finalbody")
_NESTED = (ast.stmt, ast.excepthandler) + ((ast.match_case,) if hasattr(ast, "match_case") else ())


@dataclass(frozen=True)
class Statement:
    line: int          # its first line in the engine's source file
    depth: int         # 0: the def line; 1: backward()'s body; 2: inside a loop or nested function ...
    text: str          # its source; the header line of a compound statement
    callbacks: tuple   # the Sink callbacks it makes, in the order they come


def backward_statements(cls):
    """The def line of ``cls.backward`` and every statement inside it, in source order.
    Raises OSError when the source cannot be read (a class made in the interactive shell)."""
    function = inspect.unwrap(inspect.getattr_static(cls, "backward"))
    lines, start = inspect.getsourcelines(function)
    source = textwrap.dedent("".join(lines))
    definition = ast.parse(source).body[0]
    if not isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef)):  # backward = lambda self: ...
        return [_lambda_statement(definition, source, start)]
    arguments = definition.args.posonlyargs + definition.args.args
    self_name = arguments[0].arg if arguments else None
    text = source.splitlines()[definition.lineno - 1].strip()
    statements = [Statement(start + definition.lineno - 1, 0, text, PASS)]
    statements += _statements(definition.body, 1, source, start - 1, self_name)
    return statements


def _lambda_statement(assignment, source, start):
    """A ``backward`` written as a lambda: one statement, the def line and its body at once."""
    function = next((node for node in ast.walk(assignment) if isinstance(node, ast.Lambda)), None)
    if function is None:
        raise TypeError("backward's source is neither a def nor a lambda")
    arguments = function.args.posonlyargs + function.args.args
    self_name = arguments[0].arg if arguments else None
    text = " ".join(part.strip() for part in ast.get_source_segment(source, assignment).splitlines())
    return Statement(start + assignment.lineno - 1, 0, text, _merge(PASS, _callbacks([function.body], self_name)))


def _statements(body, depth, source, offset, self_name):
    for statement in body:
        header, nested = _split(statement)
        yield Statement(offset + statement.lineno, depth, _text(statement, nested, source),
                        _callbacks(header, self_name))
        for block in nested:
            yield from _statements(block, depth + 1, source, offset, self_name)


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


def _callbacks(header, self_name):
    callbacks = ()
    for node in (inner for part in header for inner in ast.walk(part)):
        if isinstance(node, ast.Attribute) and node.attr == "grad" and isinstance(node.ctx, ast.Store):
            is_self = isinstance(node.value, ast.Name) and node.value.id == self_name
            callbacks = _merge(callbacks, SEED if is_self else WRITE)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "_backward":
            callbacks = _merge(callbacks, VISIT)
    return callbacks


def _merge(callbacks, more):
    return callbacks + tuple(c for c in more if c not in callbacks)

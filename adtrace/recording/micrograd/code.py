"""An engine's ``EngineCode``: its own ``backward()`` and the statement each event stands for.

A value made by an operation (a ``node`` event) is ``Value(data, _children, _op)``. From
``backward_statements``: the statement that seeds (``self.grad = 1``) is ``backward_start``;
the call of ``._backward()`` is ``vjp`` and, for the writes its closure makes, ``add_outgrads``;
the loop around that call is ``toposort`` (it walks the order: the visit order); a write into
another value's ``.grad`` by ``backward()`` itself is ``write``; the ``def`` line is
``backward_end`` (``backward()`` returns nothing: the gradients stay on the values).
"""

import inspect
import textwrap

from ..callsite import source_location
from ..engine_code import EngineCode, EngineStatement
from .ops import OPS
from .statements import SEED, VISIT, WRITE, backward_statements

ENGINE = "micrograd"
# what an unreadable backward() (a class typed into the interactive shell) is taken to say
USUAL = {"backward_start": "self.grad = 1", "toposort": "for v in reversed(topo):", "vjp": "v._backward()",
         "add_outgrads": "v._backward()", "backward_end": "def backward(self):"}
_LOOPS = ("for ", "async for ", "while ")


def engine_code(cls, root=None):
    """``cls``'s ``EngineCode``; ``root``: the folder its location is relative to."""
    function = inspect.unwrap(inspect.getattr_static(cls, "backward"))
    name, location = f"{cls.__qualname__}.backward", source_location(function, root)
    made = {"node": EngineStatement(f"{cls.__qualname__}(data, _children, _op)", None)}
    try:
        statements = backward_statements(cls)
        lines, start = inspect.getsourcelines(function)
    except (OSError, TypeError, SyntaxError):
        usual = {key: EngineStatement(text, None) for key, text in USUAL.items()}
        return EngineCode(ENGINE, name, location, (f"# the source of {name} is not available",), {**made, **usual},
                          ops=OPS)
    lines = tuple(textwrap.dedent("".join(lines)).rstrip().splitlines())
    return EngineCode(ENGINE, name, location, lines, {**made, **_by_key(statements, start)}, ops=OPS)


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

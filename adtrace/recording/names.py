"""The user's variable names of nodes, read from the line that made each (``record(sites=True)``).

``h = np.tanh(w @ x)`` makes two nodes on its line, ``matmul`` and ``tanh``; the name ``h`` is the
value's, the outermost operation of the assigned expression: the ``tanh`` node is ``h``, the ``matmul``
has no name. A line run again (a loop's ``x = np.sin(x)``) names each of its nodes so. The statement is
found in the file's AST (a statement over several lines too); tuple targets (``a, b = ...``), lines
that assign nothing (``return ...``) and operations adtrace cannot tie to a primitive name nothing.
"""

import ast
import functools
import os

from .callsite import source_file

BINARY = {ast.Add: "add", ast.Sub: "subtract", ast.Mult: "multiply", ast.Div: "divide", ast.Pow: "power",
          ast.MatMult: "matmul", ast.FloorDiv: "floor_divide", ast.Mod: "mod"}
ALSO = {"divide": {"true_divide"}, "mod": {"remainder"}, "matmul": {"dot"},  # a primitive's other spellings
        "getitem": {"ArrayBox.__getitem__", "container_take", "SequenceBox.__getitem__", "DictBox.__getitem__"}}


def variable_names(recording):
    """label -> the name the user's source assigns the node's value to (``h``), for the nodes that have one.
    A node's line is its ``site`` (``record(sites=True)``), else its call's (``record(calls=True)``)."""
    by_site = {}
    calls = recording.calls
    for label, node in recording.nodes.items():
        site = node_site(node, calls.get(label))
        if site and hasattr(node, "primitive"):
            by_site.setdefault(site, []).append(node)
    names = {}
    for site, nodes in by_site.items():
        found = assignment(site)
        if found is None:
            continue
        target, operation, nested = found
        matching = [n for n in nodes if n.primitive in operation]
        if nested:  # tanh(tanh(x)): the outer one, not consumed by another of them on the line
            labels = {n.label for n in matching}
            consumed = {p for m in matching for p in m.parents if p in labels}  # (once: a loop's line has many)
            matching = [n for n in matching if n.label not in consumed]
        names.update((n.label, target) for n in matching)
    return names


def node_site(node, call=None):
    """The user's line that made a node: its ``site``, else its call's (``record(calls=True)``), else None."""
    return getattr(node, "site", None) or getattr(call, "site", None)


def named_site(name, site):
    """``h@model.py:4`` (the site alone when there is no name)."""
    return f"{name}@{site}" if name and site else site


def assignment(site):
    """``(target, primitive names of the value's outermost operation, whether it is nested in itself)``
    for the statement assigning a single target at ``site`` (``path:line``), or None."""
    path, _, line = site.rpartition(":")
    file = source_file(site)
    if file is None or not line.isdigit():
        return None
    statement = _statement(_tree(file), int(line))
    if statement is None:
        return None
    targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
    if not isinstance(targets[0], (ast.Name, ast.Attribute)) or statement.value is None:
        return None
    value = ast.BinOp(targets[0], statement.op, statement.value) if isinstance(statement, ast.AugAssign) \
        else statement.value
    operation = _operation(value)
    if not operation:
        return None
    nested = sum(_operation(inner) == operation for inner in ast.walk(value)) > 1
    return ast.unparse(targets[0]), operation, nested


def _operation(expression):
    """The primitive names the outermost operation of ``expression`` is recorded as (empty if none)."""
    if isinstance(expression, ast.BinOp):
        name = BINARY.get(type(expression.op))
    elif isinstance(expression, ast.UnaryOp) and isinstance(expression.op, ast.USub):
        name = "negative"
    elif isinstance(expression, ast.Call):
        func = expression.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    elif isinstance(expression, ast.Attribute) and expression.attr == "T":
        name = "transpose"
    elif isinstance(expression, ast.Subscript):
        name = "getitem"
    else:
        name = None
    return frozenset({name} | ALSO.get(name, set())) if name else frozenset()


def _statement(tree, line):
    """The innermost single assignment whose lines hold ``line``, or None."""
    found = None
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.lineno <= line <= node.end_lineno:
            if isinstance(node, ast.Assign) and len(node.targets) != 1:
                continue
            if found is None or node.lineno >= found.lineno:
                found = node
    return found


def _tree(path):
    try:
        return _parsed(path, os.stat(path).st_mtime_ns)
    except OSError:
        return None


@functools.lru_cache(maxsize=64)
def _parsed(path, mtime):
    try:
        with open(path, encoding="utf-8") as source:
            return ast.parse(source.read(), path)
    except (OSError, SyntaxError, ValueError):
        return None

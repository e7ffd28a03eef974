"""The user's variable names of nodes, read from the line that made each (``record(sites=True)``).

``h = np.tanh(w @ x)`` makes two nodes on its line, ``matmul`` and ``tanh``; the name ``h`` is the
value's, the outermost operation of the assigned expression: the ``tanh`` node is ``h``, the ``matmul``
has no name. A line run again (a loop's ``x = np.sin(x)``) names each of its nodes so. The statement is
found in the file's AST (a statement over several lines too); tuple targets (``a, b = ...``), lines
that assign nothing (``return ...``) and operations adtrace cannot tie to a primitive name nothing.

A value class (micrograd's ``Value``, a learner's class, one of numpy arrays) writes its ops as symbols
and words (``'*'``, ``'+'``, ``'**2'``, ``'ReLU'``, ``'sum'``) and builds some of them of others (micrograd's
``a - b`` is ``a + (-b)``, ``-b`` is ``b * -1``, ``a / b`` is ``a * b**-1``): ``h = (w * x).tanh()`` names the
``tanh`` node ``h``, ``d = a - b`` the ``+`` node. Python makes the assigned expression's outermost operation
last, so the last node the statement makes is its value when its op is that operation's; earlier runs of
the statement (a loop) are named only when the statement cannot make that op inside too and every run
made the same ops.
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
    if getattr(recording, "engine", "autograd") != "autograd":
        return value_class_names(recording)
    by_site = {}
    call_of = recording.calls.get
    for label, node in recording.nodes.items():  # (node_site inline: this loop reads every node)
        site = getattr(node, "site", None) or getattr(call_of(label), "site", None)
        if site and hasattr(node, "primitive"):
            found = by_site.get(site)
            if found is None:
                found = by_site[site] = []
            found.append(node)
    names = {}
    for site, nodes in by_site.items():
        found = assignment(site)
        if found is None:
            continue
        target, operation, nested = found
        matching = [n for n in nodes if n.primitive in operation]
        if nested:  # tanh(sin(tanh(x))): the outer one, not consumed by another node of the line
            consumed = {p for n in nodes for p in n.parents}  # (once: a loop's line has many)
            matching = [n for n in matching if n.label not in consumed]
        names.update((n.label, target) for n in matching)
    return names


# a value class's op -> the Python operation it is the value of (micrograd's own op, or the one it builds it of)
VALUE_BINARY = {ast.Add: {"+"}, ast.Sub: {"-", "+"}, ast.Mult: {"*"}, ast.Div: {"/", "*"}, ast.MatMult: {"@"}}
VALUE_MADE = {ast.Sub: {"-", "+", "*", "neg"}, ast.Div: {"/", "*", "**-1"}}  # ... and what it may make inside
VALUE_NEGATIVE = {"-", "neg", "*"}


def value_class_names(recording):
    """``variable_names`` of a value class's recording: the nodes grouped by the statement that made them,
    in the order they were made."""
    by_statement = {}
    calls = recording.calls
    for label, node in recording.nodes.items():
        site = node_site(node, calls.get(label))
        found = _assigned(site) if site else None
        if found is not None:
            by_statement.setdefault(found[2], (found, []))[1].append(node)
    names = {}
    for (target, value, _), nodes in by_statement.values():
        result = _value_result(value)
        ops = [getattr(node, "primitive", "") for node in nodes]
        if not nodes or result is None or not result(ops[-1]):
            continue
        runs, run = [], []
        for node, op in zip(nodes, ops):
            run.append(op)
            if result(op):
                runs.append((node.label, tuple(run)))
                run = []
        inside = any(_value_made(inner, result) for inner in ast.walk(value) if inner is not value)
        if inside or len({ops for _, ops in runs}) > 1:  # which of them ended a run is not known: the last did
            runs = runs[-1:]
        names.update((label, target) for label, _ in runs)
    return names


def _value_result(expression):
    """A test of a value class's op: whether it can be the value of ``expression`` (None: no operation)."""
    if isinstance(expression, ast.BinOp) and type(expression.op) in VALUE_BINARY:
        return VALUE_BINARY[type(expression.op)].__contains__
    if isinstance(expression, ast.BinOp) and isinstance(expression.op, ast.Pow):
        return lambda op: str(op).startswith("**")
    if isinstance(expression, ast.UnaryOp) and isinstance(expression.op, ast.USub):
        return VALUE_NEGATIVE.__contains__
    if isinstance(expression, ast.Call):
        func = expression.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if name is None:
            return None
        ops = {name.lower()} | ({"+"} if isinstance(func, ast.Name) and name == "sum" else set())  # sum(): 0 + a + b
        return lambda op: str(op).lower() in ops
    return None


def _value_made(expression, result):
    """Whether ``expression``'s own operation may make a node ``result`` accepts on the statement's line."""
    if isinstance(expression, (ast.Call, ast.Compare)) or isinstance(expression, ast.Attribute) and \
            expression.attr == "T":
        return True  # a method, a function or an operator the class may write any way: any op (a tanh made of exp)
    if isinstance(expression, ast.BinOp):
        made = VALUE_MADE.get(type(expression.op)) or VALUE_BINARY.get(type(expression.op))
        return any(map(result, made)) if made else not isinstance(expression.op, ast.Pow) or result("**")
    if isinstance(expression, ast.UnaryOp):
        return not isinstance(expression.op, ast.USub) or any(map(result, VALUE_NEGATIVE))
    return False


def node_site(node, call=None):
    """The user's line that made a node: its ``site``, else its call's (``record(calls=True)``), else None."""
    return getattr(node, "site", None) or getattr(call, "site", None)


def named_site(name, site):
    """``h@model.py:4`` (the site alone when there is no name)."""
    return f"{name}@{site}" if name and site else site


def assignment(site):
    """``(target, primitive names of the value's outermost operation, whether it is nested in itself)``
    for the statement assigning a single target at ``site`` (``path:line``), or None."""
    found = _assigned(site)
    if found is None:
        return None
    target, value, _ = found
    operation = _operation(value)
    if not operation:
        return None
    nested = sum(_operation(inner) == operation for inner in ast.walk(value)) > 1
    return target, operation, nested


def _assigned(site):
    """``(target, the value's expression, the statement)`` of the statement assigning a single target at
    ``site`` (``path:line``), or None."""
    _, _, line = site.rpartition(":")
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
    return ast.unparse(targets[0]), value, statement


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

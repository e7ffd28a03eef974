"""Source instrumentation of a value class: its methods recompiled with each write into ``.grad`` and each call
of ``_backward`` inside ``backward()`` made a call of the deferred log's helpers (``deferred.py``).

The descriptors (``descriptors.py``) see every read and write of a value's ``.grad`` and ``_backward`` as
it happens, at the price of a data descriptor and a tracked number on each: about 3-5x a plain micrograd
step. A class whose code says in its own statements everything the events need is instead recompiled:

- in every method (and every function nested in one), ``X.grad += E`` becomes ``_adtrace_add(X, X.grad, E)``
  and ``X.grad -= E`` becomes ``_adtrace_sub(X, X.grad, E)``: an accumulation, the contribution ``E`` (``-E``),
  evaluated in the statement's own order (``X`` a name, or its attributes and constant subscripts: read twice,
  the same);
- in ``backward()`` (and the functions nested in it), ``X.grad = E`` becomes ``_adtrace_set(E, X)`` (the seed,
  or a zeroing loop) and ``X._backward()`` becomes ``_adtrace_visit(X)`` (a visit);
- ``__init__`` stays as it is (its writes are not recorded, as under the descriptors).

Only a class all of whose code is of these forms is recompiled (``instrument`` returns None otherwise, and
the descriptors record it): its source readable and the code it compiles to the code running (not a file
edited since), neither ``__init__`` nor a recompiled method calling numpy (arrays written in place, into
slices, by ufuncs), ``__init__`` setting ``.grad`` to a number (micrograd's ``0``; an engine whose ``.grad`` starts
as an array keeps the descriptors), no other write into ``.grad`` (``X.grad = X.grad + E``, ``X.grad = E`` in
a closure, a subscript, ``setattr``), ``_backward`` read in ``backward()`` only to be called without
arguments, and read nowhere else. Each function is compiled from its own file at its own lines (a traceback
shows the user's line) with the original's globals, closure, defaults and names; the helpers are free variables
of the recompiled code, their cells each installation's own (``Bound``): two classes of one module hooked at
once each call their own, and a value made while recording, whose closures call them, runs unrecorded once the
class is restored. A closure made before the hooks (a graph built before ``record()``) runs the recompiled code
of the same nested function (``Bound.closure``).
"""

import ast
import copy
import inspect
import textwrap
import types

_NUMPY = {"np", "numpy"}  # a method calling numpy: its values are arrays
HELPERS = ("_adtrace_add", "_adtrace_sub", "_adtrace_set", "_adtrace_visit")


class Rewritten:
    """A class's recompiled methods: ``originals`` (name -> the function read) and ``codes`` (name -> its code
    recompiled), and each nested function's code object as compiled before -> as recompiled (``nested``: a
    closure made from the original method). The helpers are free variables of the recompiled code, bound per
    installation (``bind``): a value made while recording keeps working, unrecorded, after it ends."""

    def __init__(self, originals, codes, nested, clean):
        self.originals, self.codes, self.nested = originals, codes, nested
        self.own = frozenset(_all_codes(codes.values()))  # (call sites skip these frames)
        self.known = self.own | frozenset(clean)  # recompiled, or never writing .grad (a leaf's lambda: None)

    def bind(self, helpers):
        """The recompiled functions calling ``helpers`` (name -> helper): a ``Bound``."""
        return Bound(self, {name: types.CellType(helper) for name, helper in helpers.items()})


class Bound:
    """The recompiled methods of one installation (``functions``: name -> function)."""

    def __init__(self, rewritten, cells):
        self.rewritten, self.cells = rewritten, cells
        self.functions = {name: _function(code, rewritten.originals[name], cells)
                          for name, code in rewritten.codes.items()}

    def closure(self, function):
        """``function`` (a ``_backward`` closure) as it would run recompiled: itself if it is, the
        recompiled code of the same nested function if it was made from the original method, else None."""
        code = getattr(function, "__code__", None)
        if code is None or code in self.rewritten.known:
            return function
        new = self.rewritten.nested.get(code)
        if new is None:
            return None
        return _function(new, function, self.cells)


def _function(code, like, cells):
    """``code`` as a function of ``like``'s globals, name, defaults and closure, with the helpers' cells."""
    own = dict(zip(like.__code__.co_freevars, like.__closure__ or ()))
    closure = tuple(own[name] if name in own else cells[name] for name in code.co_freevars)
    function = types.FunctionType(code, like.__globals__, like.__name__, like.__defaults__, closure or None)
    function.__kwdefaults__ = like.__kwdefaults__
    if hasattr(like, "__qualname__"):
        function.__qualname__, function.__module__, function.__doc__ = like.__qualname__, like.__module__, like.__doc__
        function.__dict__.update(getattr(like, "__dict__", {}))
        function.__annotations__ = like.__annotations__
    return function


def instrument(shape):
    """The class's ``Rewritten`` methods, or None if any of its code is not of the forms read here."""
    cls = shape.cls
    found = _functions(cls)
    init = found.get("__init__")
    if found is None or shape.edges or not isinstance(init, types.FunctionType) or \
            not isinstance(found.get(shape.backward), types.FunctionType):
        return None
    originals, codes, nested, clean = {}, {}, {}, []
    try:
        init_tree = _parse(init)
        if not _sets_number(init_tree, shape.grad):
            return None
        for inner in ast.walk(init_tree.body[0]):  # (__init__'s own writes are not recorded; its closures' would be)
            if inner is not init_tree.body[0] and isinstance(inner, (ast.FunctionDef, ast.Lambda)):
                transformer = _Transformer(shape, in_pass=False)
                transformer.visit(inner)
                if transformer.unreadable or transformer.changed:
                    return None
        clean += _all_codes([init.__code__])
        for name, function in found.items():
            if name == "__init__":
                continue
            if not isinstance(function, types.FunctionType):  # (a property's, a staticmethod's: read, never changed)
                for inner in _inner_functions(function):
                    transformer = _Transformer(shape, in_pass=False)
                    transformer.visit(_parse(inner))
                    if transformer.unreadable or transformer.changed:
                        return None
                    clean += _all_codes([inner.__code__])
                continue
            tree = _parse(function)
            transformer = _Transformer(shape, in_pass=name == shape.backward)
            tree = transformer.visit(tree)
            if transformer.unreadable:
                return None
            if not transformer.changed:
                clean += _all_codes([function.__code__])
                continue
            ast.fix_missing_locations(tree)
            new = _compiled(function, tree)
            as_read = _compiled(function, _parse(function))
            # (the source read compiles to the very code running: not a file edited since it was imported)
            if new is None or as_read is None or not _same_code(as_read, function.__code__):
                return None
            originals[name], codes[name] = function, new
            nested.update(_nested_pairs(function.__code__, new))
    except (OSError, TypeError, SyntaxError, IndentationError):  # (no source: a REPL's class, a C extension)
        return None
    if shape.backward not in codes or _NUMPY & {name for c in _all_codes([init.__code__, *codes.values()])
                                               for name in c.co_names}:
        return None  # (an engine of arrays: writes in place, into slices, by ufuncs: the descriptors see them)
    return Rewritten(originals, codes, nested, clean)


def signature(cls):
    """What ``instrument`` read of the class: every attribute its classes hold (a method replaced since: read again)."""
    return tuple((klass, name, value) for klass in cls.__mro__[:-1] for name, value in vars(klass).items()
                 if callable(value) or hasattr(value, "__get__"))


def _functions(cls):
    """The class's methods by name, each from the first class of its MRO holding it (not ``object``'s); None if a
    class of it has no readable dict."""
    found = {}
    for klass in cls.__mro__[:-1]:
        for name, value in vars(klass).items():
            if name not in found and (isinstance(value, types.FunctionType) or _inner_functions(value)):
                found[name] = value
    return found


def _inner_functions(value):
    """The functions a staticmethod, classmethod or property holds (their code may write ``.grad`` too)."""
    inner = [getattr(value, attribute, None) for attribute in ("__func__", "fget", "fset", "fdel")]
    return [f for f in inner if isinstance(f, types.FunctionType)] if not isinstance(value, types.FunctionType) else []


def _parse(function):
    source = textwrap.dedent(inspect.getsource(function))
    tree = ast.parse(source)
    node = tree.body[0]
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.name != function.__name__ or \
            node.decorator_list:
        raise TypeError("not a plain def")
    ast.increment_lineno(tree, function.__code__.co_firstlineno - node.lineno)
    return tree


def _sets_number(tree, grad):
    """Whether ``__init__`` sets ``self.grad`` to a number (micrograd's ``self.grad = 0``; ``a, self.grad = d, 0``)."""
    for node in ast.walk(tree):
        pairs = []
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple) and \
                        len(target.elts) == len(node.value.elts):
                    pairs += zip(target.elts, node.value.elts)
                else:
                    pairs.append((target, node.value))
        elif isinstance(node, ast.AnnAssign):
            pairs.append((node.target, node.value))
        for target, value in pairs:
            if isinstance(target, ast.Attribute) and target.attr == grad:
                return isinstance(value, ast.Constant) and type(value.value) in (int, float)
    return False


class _Transformer(ast.NodeTransformer):
    """One method's statements rewritten; ``unreadable`` once a form it does not know is met."""

    def __init__(self, shape, in_pass):
        self.grad, self.local = shape.grad, shape.local_backward
        self.in_pass = in_pass
        self.unreadable = self.changed = False

    def _call(self, helper, node, args):
        self.changed = True
        return ast.copy_location(ast.Call(ast.Name(helper, ast.Load()), args, []), node)

    def visit_AugAssign(self, node):
        self.generic_visit(node)
        target = node.target
        if isinstance(target, ast.Attribute) and target.attr == self.grad:
            if isinstance(node.op, (ast.Add, ast.Sub)) and _plain_reads(target.value):
                # X, X.grad, E: evaluated in the statement's own order (X read twice: names and attributes only)
                helper = "_adtrace_add" if isinstance(node.op, ast.Add) else "_adtrace_sub"
                previous = ast.Attribute(copy.deepcopy(target.value), self.grad, ast.Load())
                return ast.copy_location(ast.Expr(self._call(helper, node, [target.value, previous, node.value])),
                                         node)
            self.unreadable = True
        elif isinstance(target, ast.Attribute) and target.attr == self.local:
            self.unreadable = True
        return node

    def visit_Assign(self, node):
        self.generic_visit(node)
        hit = [t for t in node.targets if _stores(t, self.grad, self.local)]
        if not hit:
            return node
        target = node.targets[0]
        if len(node.targets) == 1 and isinstance(target, ast.Attribute) and target.attr == self.grad \
                and self.in_pass and not _reads(node.value, self.grad):
            # (E, then X: the assignment's own order)
            return ast.copy_location(ast.Expr(self._call("_adtrace_set", node, [node.value, target.value])), node)
        if all(isinstance(t, ast.Attribute) and t.attr == self.local for t in node.targets):
            return node  # (out._backward = _backward: a plain store, nothing to record)
        self.unreadable = True
        return node

    def visit_AnnAssign(self, node):
        if _stores(node.target, self.grad, self.local):
            self.unreadable = True
        return node

    def visit_Delete(self, node):
        if any(_stores(t, self.grad, self.local) for t in node.targets):
            self.unreadable = True
        return node

    def visit_Call(self, node):
        function = node.func
        if isinstance(function, ast.Attribute) and function.attr == self.local and self.in_pass:
            function.value = self.visit(function.value)
            node.args = [self.visit(a) for a in node.args]
            for keyword in node.keywords:
                keyword.value = self.visit(keyword.value)
            if node.args or node.keywords:  # (the attribute is read before its arguments: a call without any only)
                self.unreadable = True
                return node
            call = self._call("_adtrace_visit", node, [function.value, *node.args])
            call.keywords = node.keywords
            return call
        self.generic_visit(node)
        return node

    def visit_Attribute(self, node):
        # (reached for an attribute not handled above: _backward read but not called, in backward();
        # or called outside it)
        if node.attr == self.local and isinstance(node.ctx, ast.Load):
            self.unreadable = True
        self.generic_visit(node)
        return node

    def visit_Constant(self, node):
        if node.value in (self.grad, self.local):  # (getattr(v, "_backward"), setattr(v, "grad", c): not read here)
            self.unreadable = True
        return node


def _plain_reads(node):
    """A name, or attributes and constant subscripts of one (``self``, ``v.parents[0]``): read twice, the same."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Subscript) and not isinstance(node.slice, ast.Constant):
            return False
        node = node.value
    return isinstance(node, ast.Name)


def _stores(target, grad, local):
    """Whether assigning to ``target`` may store into a ``.grad`` or ``_backward`` (a tuple's item too)."""
    if isinstance(target, (ast.Tuple, ast.List)):
        return any(_stores(t, grad, local) for t in target.elts)
    if isinstance(target, ast.Starred):
        return _stores(target.value, grad, local)
    if isinstance(target, ast.Attribute):
        return target.attr in (grad, local)
    if isinstance(target, ast.Subscript):  # grad[i] = c: into the array, which these helpers do not see
        return _reads(target.value, grad)
    return False


def _reads(node, grad):
    return any(isinstance(n, ast.Attribute) and n.attr == grad for n in ast.walk(node))


def _compiled(function, tree):
    """``tree`` (one def) compiled as ``function``'s code: in a function declaring its free variables and the
    helpers (so each is a free variable, its cell the original's or the helper's); None if it needs another."""
    code = function.__code__
    definition = tree.body[0]
    outer = ast.FunctionDef(
        name="__adtrace_outer__", args=ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[],
                                                     kw_defaults=[], kwarg=None, defaults=[]),
        body=[ast.Assign(targets=[ast.Name(n, ast.Store()) for n in (*code.co_freevars, *HELPERS)],
                         value=ast.Constant(None)), definition],
        decorator_list=[], returns=None)
    if "type_params" in ast.FunctionDef._fields:  # (Python 3.12+)
        outer.type_params = []
    ast.copy_location(outer, definition)
    for statement in outer.body:
        ast.copy_location(statement, definition)
    tree = ast.Module(body=[outer], type_ignores=[])
    ast.fix_missing_locations(tree)
    compiled = compile(tree, code.co_filename, "exec", dont_inherit=True)
    new = _find(compiled, function.__name__, code.co_firstlineno)
    if new is None or not set(new.co_freevars) <= {*code.co_freevars, *HELPERS}:
        return None
    # (named as the original: its closures' __qualname__ is Value.__add__.<locals>._backward, not the wrapper's)
    qualname = getattr(function, "__qualname__", function.__name__)
    return _requalified(new, "__adtrace_outer__.<locals>.", qualname[:len(qualname) - len(function.__name__)])


def _requalified(code, old, new):
    """``code`` and the functions nested in it with each qualified name starting ``old`` starting ``new`` (a
    code's own ``co_qualname``, Python 3.11+; a string constant given to ``MAKE_FUNCTION`` before)."""
    consts = tuple(_requalified(c, old, new) if isinstance(c, types.CodeType) else
                   new + c[len(old):] if isinstance(c, str) and c.startswith(old) else c for c in code.co_consts)
    changes = {"co_consts": consts}
    if getattr(code, "co_qualname", "").startswith(old):
        changes["co_qualname"] = new + code.co_qualname[len(old):]
    return code.replace(**changes)


def _same_code(a, b):
    """The same names, constants and lines, and the same of each function nested in it, in order (the bytecode
    itself may differ with where the def is compiled: in its class, or alone)."""
    if (a.co_names, a.co_varnames, a.co_freevars, a.co_cellvars, a.co_firstlineno, a.co_argcount) != \
            (b.co_names, b.co_varnames, b.co_freevars, b.co_cellvars, b.co_firstlineno, b.co_argcount) or \
            _plain_constants(a) != _plain_constants(b) or _lines(a) != _lines(b):
        return False
    inner_a = [c for c in a.co_consts if isinstance(c, types.CodeType)]
    inner_b = [c for c in b.co_consts if isinstance(c, types.CodeType)]
    return len(inner_a) == len(inner_b) and all(_same_code(x, y) for x, y in zip(inner_a, inner_b))


def _plain_constants(code):
    return [c for c in code.co_consts if not isinstance(c, types.CodeType)]


def _lines(code):
    return sorted({line for _, _, line in code.co_lines() if line is not None})


def _find(code, name, line):
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            if constant.co_name == name and constant.co_firstlineno == line:
                return constant
            found = _find(constant, name, line)
            if found is not None:
                return found
    return None


def _nested_pairs(old, new):
    """Each function nested in ``old`` paired with the one compiled from the same lines in ``new`` (two on one
    line with one name, two lambdas: neither paired)."""
    def by_place(code):
        found = {}
        for c in _all_codes([code]):
            if c is not code:
                key = (c.co_name, c.co_firstlineno)
                found[key] = None if key in found else c
        return found

    news = by_place(new)
    return {c: news[key] for key, c in by_place(old).items()
            if c is not None and news.get(key) is not None and set(c.co_freevars) <= set(news[key].co_freevars)}


def _all_codes(codes):
    found, stack = [], list(codes)
    while stack:
        code = stack.pop()
        found.append(code)
        stack.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return found

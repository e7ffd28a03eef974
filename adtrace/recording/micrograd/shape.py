"""The shape of a micrograd-like engine, checked before anything is hooked.

adtrace records a class of micrograd's shape: every value holds its own ``data`` and ``grad`` and
the local backward of the operation that made it, ``__init__`` receives the operation's inputs in
argument order (``__init__(data, _children=(), _op='')``), and ``backward()`` calls the local
backwards. A class that is not of that shape gets one ``ShapeError`` listing everything that is
missing.

Supported, as learners write them: ``grad``, ``data`` and ``_backward`` stored in the instance
``__dict__`` or in ``__slots__`` (the hooks delegate to the slot), a ``@dataclass(eq=False)``'s
fields; the children under any of ``CHILDREN_PARAMETERS`` (a set, tuple or list); ``_backward`` a
closure per value (a leaf's None, or none at all) or one method dispatching on ``self._op``, or none:
the edge style (children kept as ``(value, local derivative)`` pairs, a loop of ``backward()`` over
them writing ``.grad``: ``Shape.visits``, found in its source);
``backward``/``__init__`` inherited from a base, ``backward(self, grad=1.0)`` with a seed; no ``_op``
at all (every op is then ``''``, one adtrace has no rule for).
Refused: ``grad`` or ``_backward`` as a property or another data descriptor (it may store or
compute the value elsewhere: what is read would not be what the engine holds), and custom
``__getattribute__``/``__setattr__``/``__delattr__`` (writes could bypass the hooks). The
per-instance attributes are checked on a probe leaf ``cls(0.0)`` (and the value ``probe * probe``
makes), made before anything is hooked.
"""

import ast
import inspect
import textwrap
import types

from ..value_class.hooks import Shape
from .ops import OPS

# the names learners give __init__'s children (a dataclass's field among them: ``_prev``), first match wins
CHILDREN_PARAMETERS = ("_children", "children", "_prev", "prev", "parents", "inputs")
# the attributes of micrograd's shape that are the engine's hook sites (``recording/engines.Engine``)
PASS_START, LOCAL_BACKWARD, GRAD_WRITE = "backward", "_backward", "grad"
# the attributes learners keep a value's op in (a string: ``'+'``, ``'tanh'``), first match wins
OP_ATTRIBUTES = ("_op", "op")
# what ``declare`` names (each an attribute of the class, ``children`` a parameter of __init__), micrograd's by default
DECLARED = {"data": "data", "grad": GRAD_WRITE, "children": None, "local_backward": LOCAL_BACKWARD,
            "backward": PASS_START, "op": "_op"}
_GUARDS = ("__getattribute__", "__setattr__", "__delattr__")


class ShapeError(TypeError):
    """The class is not of micrograd's shape; the message lists what is missing, then the
    declaration (``declare``) that describes the class, with what was not found left to fill in."""


def check_shape(cls, **declared):
    """Return the class's Shape, or raise one ShapeError naming everything missing. ``declared``:
    the names ``declare`` takes (``DECLARED``) where the class does not use micrograd's."""
    if not isinstance(cls, type):
        raise ShapeError(f"{cls!r} is not a class: adtrace records a Value class of micrograd's shape")
    unknown = set(declared) - set(DECLARED)
    if unknown:
        raise TypeError(f"declare() takes {', '.join(DECLARED)}; not {', '.join(sorted(unknown))}")
    names = {**DECLARED, **{key: value for key, value in declared.items() if value is not None}}
    missing, unfound = [], set()
    children = _children_parameter(cls, names, missing, unfound)
    _check_backward(cls, names, missing, unfound)
    refused = _check_storage(cls, names, missing)
    for name in _GUARDS:
        if _defines(cls, name):
            missing.append(f"a custom {name} (writes into .grad could bypass the hooks): not supported")
    probe = edges = None
    if cls.__init__ is not object.__init__:
        probe, edges = _check_probe(cls, names, missing, unfound, skip=refused)
    if missing:
        raise ShapeError(f"{cls.__qualname__} is not of micrograd's shape (data, grad and a _backward closure "
                         "per value, __init__(data, _children, _op), backward()):\n"
                         + "\n".join(f"  - {line}" for line in missing)
                         + _declaration(cls, names, children, unfound, probe))
    name, index, default = children
    return Shape(cls, name, index, default, data=names["data"], grad=names["grad"],
                 local_backward=names["local_backward"], backward=names["backward"], op=names["op"],
                 edges=edges, visits=_visits(cls, names["backward"], edges, names["grad"]) if edges else frozenset(),
                 order=OPS.order)


def _declaration(cls, names, children, unfound, probe):
    """The lines that describe the class to adtrace, what was found filled in, the rest ``...``."""
    if not unfound:  # (what is missing is not a name: a declaration would not help)
        return ""
    found = dict(names, children=children[0] if children else None)
    arguments = ", ".join(f"{key}=..." if key in unfound or found[key] is None else f"{key}={found[key]!r}"
                          for key in DECLARED)
    own = sorted(getattr(probe, "__dict__", {})) + [slot for slot in _slots(cls) if _in_slot(probe, _slot(cls, slot))]
    seen = f"\n  (a leaf {cls.__qualname__}(0.0) has: {', '.join(own)})" if probe is not None and own else ""
    try:
        parameters = list(inspect.signature(cls.__init__).parameters)[1:]
        seen += f"\n  (__init__ takes: {', '.join(parameters)})"
    except (TypeError, ValueError):
        pass
    return (f"\nIf {cls.__qualname__} keeps them under other names, describe it (each an attribute of the class; "
            "children: __init__'s parameter taking the operation's inputs):\n"
            "    from adtrace.recording.micrograd import declare\n"
            f"    engine = declare({cls.__name__}, {arguments})\n"
            f"    with adtrace.record(engine=engine): ...{seen}")


def _children_parameter(cls, names, missing, unfound):
    if cls.__init__ is object.__init__:
        missing.append("no __init__(self, data, _children=(), _op='')")
        unfound.add("children")
        return None
    try:
        parameters = list(inspect.signature(cls.__init__).parameters.values())[1:]
    except (TypeError, ValueError):
        missing.append("__init__ has no readable signature")
        return None
    usable = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    wanted = CHILDREN_PARAMETERS if names["children"] is None else (names["children"],)
    for index, parameter in enumerate(parameters):
        if parameter.name in wanted and parameter.kind in usable:
            keyword_only = parameter.kind is inspect.Parameter.KEYWORD_ONLY
            return parameter.name, None if keyword_only else index, _children_default(parameter.default)
    unfound.add("children")
    if names["children"] is not None:
        missing.append(f"__init__ has no parameter {names['children']!r} (positional or keyword)")
        return None
    missing.append(f"__init__ takes no children: it needs a parameter named one of {', '.join(CHILDREN_PARAMETERS)}, "
                   "the operation's inputs in argument order")
    return None


def _children_default(default):
    """What a value made without children was given: a dataclass's ``default_factory`` (its
    signature shows a sentinel) or no default is no children."""
    return default if isinstance(default, (tuple, list, set, frozenset)) else ()


def _check_backward(cls, names, missing, unfound):
    name = names["backward"]
    backward = inspect.getattr_static(cls, name, None)
    if backward is None:
        missing.append("no backward() method" if name == PASS_START else f"no {name}() method")
        unfound.add("backward")
    elif not isinstance(backward, types.FunctionType):
        missing.append(f"{name} is a {type(backward).__name__}, not a plain method")


def _check_storage(cls, names, missing):
    """Refuse data descriptors other than __slots__ entries; returns the names refused."""
    refused = []
    for name in (names["grad"], names["local_backward"]):
        attribute = inspect.getattr_static(cls, name, None)
        if isinstance(attribute, types.MemberDescriptorType):
            continue
        if hasattr(type(attribute), "__set__") or hasattr(type(attribute), "__delete__"):
            refused.append(name)
            missing.append(f"{name} is a {type(attribute).__name__} on the class: adtrace needs {name} "
                           "stored per instance (a plain attribute or a __slots__ entry)")
    return refused


def _check_probe(cls, names, missing, unfound, skip):
    try:
        probe = cls(0.0)
    except Exception as exc:
        missing.append(f"could not make a leaf {cls.__qualname__}(0.0) to check its attributes: "
                       f"{type(exc).__name__}: {exc}")
        return None, None
    for key in ("data", "grad"):
        name = names[key]
        if name not in skip and not _has_own(probe, name):
            missing.append(f"no per-instance {name} (set self.{name} in __init__)")
            unfound.add(key)
    operations, edges = [], None
    made = _check_operations(cls, probe, operations)
    if names["local_backward"] not in skip:
        edges = _check_local_backward(cls, names, probe, made, missing, unfound)
    if not hasattr(probe, names["op"]):  # (optional: every op is then '', but a declaration may name it)
        found = [name for name in OP_ATTRIBUTES if names["op"] == DECLARED["op"]
                 and isinstance(getattr(made if made is not None else probe, name, None), str)]
        if found:  # (not declared: another common name, ``self.op = op``)
            names["op"] = found[0]
        else:
            unfound.add("op")
    missing += operations
    return probe, edges


def _check_local_backward(cls, names, probe, made, missing, unfound):
    """A closure per value (a leaf's may be None, or absent when an operation's value has one), or
    one method of the class (dispatching on ``_op``), or none: the edge style, whose values keep
    ``(value, local derivative)`` pairs that a loop of ``backward()`` multiplies along (returns the
    attribute holding them)."""
    name = names["local_backward"]
    if isinstance(inspect.getattr_static(cls, name, None), types.FunctionType):
        return  # a method: backward() calls it on each value
    if _has_own(probe, name):
        closure = getattr(probe, name)
        if closure is not None and not callable(closure):
            missing.append(f"{name} of a leaf is neither callable nor None")
    elif made is None or not _has_own(made, name):
        edges = _edges(cls, made)
        if edges is not None:  # (a declaration would not help: say what the class does instead)
            try:
                if _visits(cls, names["backward"], edges, names["grad"]):
                    return edges
            except (OSError, TypeError, SyntaxError):
                pass
            missing.append(f"no {name}: its values keep (value, local derivative) pairs in {edges}, and no loop "
                           f"of a readable {names['backward']}() over v.{edges} writes a .{names['grad']}")
            return None
        missing.append(f"no per-instance {name} (a closure set by each operation, out.{name} = ...) "
                       f"nor a {name} method")
        unfound.add("local_backward")


def edge_loop(statement, edges, grad):
    """Whether ``statement`` (ast) is the edge style's visit: ``for ... in v.<edges>:`` writing a ``.grad``."""
    return (isinstance(statement, (ast.For, ast.AsyncFor)) and isinstance(statement.iter, ast.Attribute)
            and statement.iter.attr == edges
            and any(isinstance(node, ast.Attribute) and node.attr == grad and isinstance(node.ctx, ast.Store)
                    for inner in statement.body for node in ast.walk(inner)))


def _visits(cls, backward, edges, grad):
    """``(file, line)`` of each edge loop of the class's ``backward()``: a read of ``v.<edges>`` there
    is the visit of ``v``."""
    function = inspect.unwrap(inspect.getattr_static(cls, backward))
    lines, start = inspect.getsourcelines(function)
    tree = ast.parse(textwrap.dedent("".join(lines)))
    return frozenset((function.__code__.co_filename, start + node.lineno - 1) for node in ast.walk(tree)
                     if edge_loop(node, edges, grad))


def _edges(cls, made):
    """The attribute of ``made`` holding ``(value, local derivative)`` pairs, if any."""
    for attribute, held in getattr(made, "__dict__", {}).items():
        if isinstance(held, (list, tuple)) and held and all(
                isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[0], cls) for pair in held):
            return attribute
    return None


def _has_own(value, name):
    return name in getattr(value, "__dict__", {}) or _in_slot(value, _slot(type(value), name))


def _check_operations(cls, probe, missing):
    """Refuse a subclass whose operations (inherited) make values of its base class: those values
    would not be recorded, only the leaves made as the subclass. Returns a value an operation
    made (None if none could be made)."""
    for operation in ("__mul__", "__add__"):
        if callable(getattr(cls, operation, None)):
            try:
                value = getattr(probe, operation)(probe)
            except Exception:  # (an operation that needs other operands: nothing to learn here)
                continue
            made = type(value)
            if made is not cls and issubclass(cls, made):
                missing.append(f"its operations make {made.__name__} values, not {cls.__name__} ones: "
                               f"record(engine={made.__module__}.{made.__qualname__}) records them, the "
                               f"{cls.__name__} values included")
            return value
    return None


def _slots(cls):
    return [name for klass in cls.__mro__ for name in vars(klass).get("__slots__", ())
            if isinstance(name, str)]


def _slot(cls, name):
    attribute = inspect.getattr_static(cls, name, None)
    return attribute if isinstance(attribute, types.MemberDescriptorType) else None


def _in_slot(probe, slot):
    if slot is None:
        return False
    try:
        slot.__get__(probe, type(probe))
    except AttributeError:
        return False
    return True


def _defines(cls, name):
    """Whether a class of the user's (not ``object``, ``float`` or another builtin type, whose
    attribute access is the plain one) defines ``name``."""
    return any(name in vars(klass) for klass in cls.__mro__ if klass.__module__ != "builtins")

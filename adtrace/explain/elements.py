"""Input elements: which number of the differentiated input an explanation is about.

An ``Element`` is a path of container keys (``('W',)`` for ``params['W']``, ``()`` for a bare array or
scalar) and an index into the array there (``(0, 1)``; ``()`` for a scalar). A selector is the way a
user writes it, after the argument's name: ``x``, ``x[3]``, ``params['W'][0, 1]``.

Values are flattened leaf by leaf in the container's own order (a dict's insertion order, as autograd's
``DictVSpace`` keeps it), each leaf in C order: ``flat_index`` and ``flat`` agree on that order.
"""

import ast
from dataclasses import dataclass

import numpy as np
from autograd.core import SparseObject, sparse_add, vspace

from ..recording.values import ArraySummary, ContainerSummary, Sparse


@dataclass(frozen=True)
class Element:
    keys: tuple = ()  # container keys down to the leaf
    index: tuple = ()  # index into the leaf array

    def selector(self, name="x"):
        text = name + "".join(f"[{key!r}]" for key in self.keys)
        if self.index:
            text += "[" + ", ".join(str(i) for i in self.index) + "]"
        return text


def parse_selector(text):
    """``("x", Element)`` from ``x``, ``x[3]``, ``params['W'][0, 1]`` (a trailing integer index is
    the array's; string or integer subscripts before it are container keys)."""
    tree = ast.parse(text.strip(), mode="eval").body
    subscripts = []
    while isinstance(tree, ast.Subscript):
        subscripts.append(ast.literal_eval(tree.slice))
        tree = tree.value
    if not isinstance(tree, ast.Name):
        raise ValueError(f"not a selector: {text!r} (write x, x[3] or params['W'][0, 1])")
    subscripts.reverse()
    keys, index = [], ()
    for i, sub in enumerate(subscripts):
        last = i == len(subscripts) - 1
        if last and (isinstance(sub, tuple) or isinstance(sub, int)):
            index = sub if isinstance(sub, tuple) else (sub,)
        else:
            keys.append(sub)
    return tree.id, Element(tuple(keys), tuple(index))


def select(selector, value, name=None):
    """The ``Element``s of ``value`` a selector names, read against ``value`` (a list item that is a
    number, ``layers[1][1]``, is a container key, not an array index): one element (``x[3]``, ``x[-1]``,
    ``params['W'][0, 1]``), or every element of a part (``params['W']``, ``W[0]``: a row) or of the
    whole argument (``x``). ``name``: the argument's name, checked when given. ``ValueError`` (naming
    the argument as the user does) when it names none."""
    if isinstance(selector, Element):
        if not contains(value, selector):
            raise ValueError(f"no such element: {selector.selector(name or 'x')} ({shapes(value, name)})")
        return [selector]
    try:
        tree = ast.parse(selector.strip(), mode="eval").body
    except SyntaxError as exc:
        raise ValueError(f"not a selector: {selector!r} (write x, x[3] or params['W'][0, 1])") from exc
    subscripts = []
    while isinstance(tree, ast.Subscript):
        try:
            subscripts.append(ast.literal_eval(tree.slice))
        except ValueError as exc:
            raise ValueError("subscripts must be numbers or strings (no slices or names)") from exc
        tree = tree.value
    if not isinstance(tree, ast.Name):
        raise ValueError(f"not a selector: {selector!r} (write x, x[3] or params['W'][0, 1])")
    if name is not None and tree.id != name:
        raise ValueError(f"the differentiated argument is called {name}, not {tree.id}")
    name = tree.id
    subscripts.reverse()
    keys, here = (), value
    while subscripts and isinstance(here, (dict, list, tuple)):
        key = subscripts.pop(0)
        if isinstance(here, (list, tuple)) and type(key) is int and -len(here) <= key < len(here):
            key %= len(here)
        elif not (isinstance(here, dict) and _hashable(key) and key in here):
            raise ValueError(f"no such element: {Element(keys).selector(name)} has no item [{key!r}] "
                             f"({shapes(value, name)})")
        keys, here = keys + (key,), here[key]
    if isinstance(here, (dict, list, tuple)):  # a part: each of its elements
        return [Element(keys + e.keys, e.index) for e in elements(here)]
    index = tuple(i for sub in subscripts for i in (sub if isinstance(sub, tuple) else (sub,)))
    shape = np.shape(here)
    if len(index) > len(shape) or not all(type(i) is int and -n <= i < n for i, n in zip(index, shape)):
        parts = f" ({shapes(value, name)})" if isinstance(value, (dict, list, tuple)) else ""  # (a container's parts)
        raise ValueError(f"no such element: {Element(keys).selector(name)} has shape {shape}{parts}")
    index = tuple(i % n for i, n in zip(index, shape))
    return [Element(keys, index + e.index) for e in elements(np.asarray(here)[index])]


def _hashable(key):
    try:
        hash(key)
    except TypeError:
        return False
    return True


def shapes(value, name=None):
    """``params['W'] (2, 2), params['b'] (1,)``: the argument's parts and their shapes."""
    return ", ".join(f"{Element(keys).selector(name or 'x')} {np.shape(leaf)}" for keys, leaf in leaves(value))


def leaves(value, keys=()):
    """``(keys, leaf)`` of each array or number inside ``value``, in order."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, keys + (key,))
    elif isinstance(value, (list, tuple)):
        for key, item in enumerate(value):
            yield from leaves(item, keys + (key,))
    else:
        yield keys, value


def elements(value):
    """Every ``Element`` of ``value``, in flat order."""
    for keys, leaf in leaves(value):
        for index in np.ndindex(np.shape(leaf)):
            yield Element(keys, index)


def contains(value, element):
    """Whether ``element`` is one of ``value``'s."""
    for keys, leaf in leaves(value):
        if keys == element.keys:
            shape = np.shape(leaf)
            return len(element.index) == len(shape) and all(
                type(i) is int and 0 <= i < n for i, n in zip(element.index, shape))
    return False


def dense(value, like):
    """A kept or live cotangent as a plain value shaped as ``like`` (a ``Sparse`` or ``SparseObject``
    densified); None when only a summary was kept (record with ``capture="full"``)."""
    if isinstance(value, (ArraySummary, ContainerSummary)):
        return None
    if isinstance(value, Sparse):
        if value.dense is not None:
            return value.dense
        if isinstance(like, dict):
            return {key: (value.value if str(key) == value.index else vspace(item).zeros())
                    for key, item in like.items()}
        if isinstance(like, (list, tuple)):
            taken = positions(value.index, len(like))
            if taken is None:
                return None
            items = [vspace(item).zeros() for item in like]
            for position, item in zip(taken[0], [value.value] if taken[1] else value.value):
                items[position] = item
            return type(like)(items)
        return None
    if isinstance(value, SparseObject):
        return sparse_add(vspace(like), None, value)
    return value


def positions(index, length):
    """The positions of a list or tuple of ``length`` that a sparse cotangent's ``index`` (as recorded:
    ``"1"``, ``"-1"``, ``":-1"``, ``"1:3"``) took, and whether it took one item (not a slice); None if
    not understood."""
    try:
        if ":" not in index:
            return [int(index) % length], True
        parts = [int(p) if p.strip() else None for p in index.split(":")]
        return list(range(length))[slice(*parts)], False
    except (TypeError, ValueError, ZeroDivisionError):
        return None


def array_index(text):
    """An index as ``recording/autograd/sparse.describe_index`` wrote it, back; None if not read."""
    text = text.strip()
    if text.startswith("(") and text.endswith(")"):
        parts = [array_index(part) for part in text[1:-1].split(",") if part.strip()]
        return None if any(p is None for p in parts) else tuple(parts)
    try:
        if text.startswith("[") and text.endswith("]") and "..." not in text:
            return np.array([int(i) for i in text[1:-1].split()], dtype=int)
        if ":" in text:
            return slice(*[int(p) if p.strip() else None for p in text.split(":")])
        return int(text)
    except ValueError:
        return None


def covers(value, element, like):
    """Whether a cotangent can hold a number at ``element``: not a sparse one into another item of a
    container (``params['b']``'s, read at an element of ``params['W']``)."""
    if isinstance(value, Sparse) and isinstance(like, np.ndarray) and value.index is not None:  # x[index]'s
        try:
            taken = np.arange(like.size).reshape(like.shape)[array_index(value.index)]
        except (IndexError, ValueError, TypeError):  # (None: an index not read)
            return True
        return flat_index(like, element) in np.ravel(taken)
    if not isinstance(value, Sparse) or not element.keys or not isinstance(like, (dict, list, tuple)):
        return True
    if isinstance(like, dict):
        return str(element.keys[0]) == value.index
    taken = positions(value.index, len(like))
    return taken is None or element.keys[0] in taken[0]


def component(value, element, like=None):
    """The number of ``value`` (a cotangent or value shaped as the input) at ``element``."""
    value = dense(value, like if like is not None else value)
    if value is None:
        return None
    for key in element.keys:
        value = value[key]
    return np.asarray(value)[element.index][()]


def flat(value):
    """``value`` (an array, number or container of them) as one flat float vector, or None."""
    parts = [np.ravel(np.asarray(leaf)) for _, leaf in leaves(value)]
    if any(p.dtype == object for p in parts):
        return None
    return np.concatenate(parts) if parts else np.zeros(0)


def size(value):
    """How many numbers ``value`` holds (through containers)."""
    return sum(int(np.prod(np.shape(leaf))) for _, leaf in leaves(value))


def flat_index(value, element):
    """Where ``element`` is in ``flat(value)``."""
    offset = 0
    for keys, leaf in leaves(value):
        shape = np.shape(leaf)
        if keys == element.keys:
            return offset + (int(np.ravel_multi_index(element.index, shape)) if shape else 0)
        offset += int(np.prod(shape))
    raise KeyError(f"no element {element} in the input")

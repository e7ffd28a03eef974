"""Where the work went: the recorded nodes per line of the user's code and per primitive, as a
profiler's by-line view shows time. A node's line is the user's line that made it (``site``,
under ``record(sites=True)``); what ran inside a node's VJP counts on that node's line, as one row.
"""

from collections import Counter
from operator import countOf

from ..recording.callsite import INPUT  # (the line of a root: make_vjp made it from the argument)
from ..recording.events import JVPRoot, NodeCreated, RootCreated, ToposortYielded
from .abbreviate import counted
from .fit import fit
from .format import code
from .tables import table

MAX_LINES = 15  # rows of the by-line table; the rest in one row
MAX_PRIMITIVES = 10
ROOTS = frozenset((RootCreated, JVPRoot))  # the events of an input node
NO_LINE = "(no line of the user's code)"


def work_section(recording, nesting, mode="rev"):
    nodes = [n for n in recording.nodes.values() if n.mode == mode]
    if not nodes:
        return None
    inside = nesting.made_inside
    outside = [n for n in nodes if n.label not in inside] if inside else nodes
    parts = ["## Where the work went", "", _headline(recording, nesting, nodes, outside, mode), ""]
    if any(getattr(n, "site", None) for n in nodes):
        parts += [_by_line(outside, nesting, recording.nodes, len(nodes)), ""]
    elif any(type(n) not in ROOTS for n in nodes):
        parts += ["_No source lines were recorded (`record(sites=True)` adds them); per primitive only._", ""]
    parts.append(_by_primitive(outside, len(nodes)))
    return "\n".join(parts)


def _headline(recording, nesting, nodes, outside, mode):
    text = f"{counted(len(nodes), 'node')} recorded"
    if len(outside) < len(nodes):
        text += f", {len(nodes) - len(outside)} of them inside a node's VJP (nested backward passes)"
    if mode == "rev" and nesting.user is not None:
        # (len(recording.visit_order(user)), counted in C)
        visited = countOf(map(type, recording.query_events(nesting.user)), ToposortYielded)
        text += f"; the user's backward pass (query {nesting.user}) visited {visited}"
    return text + "."


def primitive_of(node):
    """The primitive that made ``node``: ``root`` for autograd's input, ``(leaf)`` for a value made
    without children (an engine of micrograd's shape: its op is '')."""
    primitive = getattr(node, "primitive", "root")
    return primitive if primitive or getattr(node, "parents", ()) else "(leaf)"


def line_of(node):
    """The user's line that made ``node`` (``path:line``), ``(input)`` for a root and for an engine's
    leaf made with no line of the user's code (an argument the command line made a leaf)."""
    if type(node) in ROOTS or (primitive_of(node) == "(leaf)" and not getattr(node, "site", None)):
        return INPUT
    return getattr(node, "site", None) or NO_LINE


def primitives_of(nodes):
    """``primitive_of`` of each node: an operation node's (``NodeCreated`` with its primitive) read straight, a
    scalar program's every node."""
    return [n.primitive if type(n) is NodeCreated and n.primitive else primitive_of(n) for n in nodes]


def lines_of(nodes):
    """``line_of`` of each node, an operation node's read straight (as ``primitives_of``)."""
    return [(n.site or NO_LINE) if type(n) is NodeCreated and n.primitive else line_of(n) for n in nodes]


def _by_line(outside, nesting, table_of_nodes, total):
    lines = lines_of(outside)
    counts, primitives = Counter(lines), {}
    for (line, primitive), count in Counter(zip(lines, primitives_of(outside))).items():  # (counted in C)
        made = primitives.get(line)
        if made is None:
            made = primitives[line] = Counter()
        made[primitive] = count
    cells = {line: _top(made) for line, made in primitives.items()}
    for work in nesting.work.values():
        line = f"inside the VJP of {work.node} ({line_of(table_of_nodes[work.node])})"
        counts[line] += len(work.nodes)
        made = Counter(primitive_of(table_of_nodes[label]) for label in work.nodes)
        cells[line] = f"{counted(len(work.passes), 'nested pass', 'es')}: {_top(made)}"
    ranked = sorted(counts, key=lambda line: -counts[line])  # (stable: ties keep the order of first use)
    rows = [(line, counts[line], cells[line], _share(counts[line], total)) for line in ranked[:MAX_LINES]]
    rest = ranked[MAX_LINES:]
    if rest:
        left = sum(counts[line] for line in rest)
        rows.append((f"{len(rest)} more lines", left, "-", _share(left, total)))
    headers = ["line", "nodes", "primitives", "share"]
    return table(headers, fit(headers, rows))


def _by_primitive(outside, total):
    """The user's graph per primitive; what ran inside a node's VJP in one row."""
    ranked = Counter(primitives_of(outside)).most_common()
    rows = [(code(name), count, _share(count, total)) for name, count in ranked[:MAX_PRIMITIVES]]
    if len(ranked) > MAX_PRIMITIVES:
        left = sum(count for _, count in ranked[MAX_PRIMITIVES:])
        rows.append((f"{len(ranked) - MAX_PRIMITIVES} more primitives", left, _share(left, total)))
    if len(outside) < total:
        rows.append(("(inside a node's VJP)", total - len(outside), _share(total - len(outside), total)))
    headers = ["primitive", "nodes", "share"]
    return table(headers, fit(headers, rows))


def _top(counter, n=3):
    ranked = counter.most_common()
    text = ", ".join(f"{name} x{count}" for name, count in ranked[:n])
    return text + (f", ... {len(ranked) - n} more" if len(ranked) > n else "")


def _share(count, total):
    return f"{100 * count / total:.1f}%" if total else "-"

"""The failing checks of a call, each with the node it names: the page opens on them.

A failure names a node when its check does: the reference engine's first divergent node, the
per-node checker's first failing node (which also explains failing finite differences: the page's
data then points them at it), a bug of the whole backward pass. The step it jumps to is that node's
local VJP in the pass the page opens on (where a wrong rule sends its contribution), else the node's
first step there.
"""

from ..compare.align import first_divergence
from ..compare.checks import verdict


def failures(call, graphs, passes, start):
    """``[{"check", "detail", "graph", "node", "pass", "step"}]``: one per failing check of ``call``
    (``node``, ``pass`` and ``step`` null where it names none on the page), then one per finding
    of ``call.pass_findings``."""
    if call is None:
        return []
    pass_ = next((p for p in passes if p["id"] == start), None)
    named = _named_nodes(call)
    found = [(c.name, c.detail, named.get(c.name)) for c in call.checks if verdict(c) == "FAIL"]
    found += [(f"the backward pass is wrong: {f.title}", f.reason, f.node) for f in call.pass_findings]
    return [_failure(name, detail, label, graphs, pass_) for name, detail, label in found]


def _named_nodes(call):
    """check name -> the label of the node it names."""
    named = {}
    divergent = first_divergence(call.alignment)
    if divergent is not None:
        named[f"reference engine vs {call.engine}, per node"] = divergent
    first = call.node_checks.first_failure if call.node_checks is not None else None
    if first is not None:
        named["per-node local rules"] = named["central finite differences"] = first.node
    return named


def _failure(name, detail, label, graphs, pass_):
    found = {"check": name, "detail": detail, "graph": None, "node": None, "pass": None, "step": None}
    if label is None or pass_ is None:
        return found
    labels = graphs[pass_["graph"]]["nodes"]["label"]
    if label not in labels:
        return found
    node = labels.index(label)
    found.update(graph=pass_["graph"], node=node)
    steps = pass_["steps"]
    at = [k for k, n in enumerate(steps["node"]) if n == node]
    if at:
        vjp = [k for k in at if steps["ingrads"][k] is not None]  # the step of its local VJP
        found.update({"pass": pass_["id"], "step": (vjp or at)[0]})
    return found

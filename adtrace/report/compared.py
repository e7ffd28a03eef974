"""Report sections that hold autograd against the lecture: summary with checks, side by side."""

from ..compare.align import first_divergence
from ..compare.checks import rule_suspected, verdict
from ..recording.events import JVPNodeCreated, JVPRoot
from .abbreviate import clip, each, series
from .fit import LINE_WIDTH, Short, fit
from .format import code, made_at, text
from .naming import Namer
from .tables import table

STRUCTURE = ("_Capture level `structure`: no values were recorded, so nothing is compared node by node (no "
             "reference-engine check, no side by side); the visit orders and finite differences are checked "
             "without them._")


def summary_section(call):
    own = _own_code(call)
    rows = [("function", code(call.name)), ("source", call.location),
            ("inputs", Short(call.args, each, LINE_WIDTH)),
            ("differentiated argument", call.argnum) if own is None else
            ("engine", f"{call.engine}: {code(own.name)} ({own.location}); every argument is a leaf"),
            ("output", Short(call.output, width=LINE_WIDTH)), ("capture level", call.capture)]
    if call.mode in ("rev", "both"):
        rows.append(("gradient (VJP with a seed of ones)" if own is None else
                     "gradient (.grad of each argument after backward())", Short(call.gradient, width=LINE_WIDTH)))
    if call.mode in ("fwd", "both"):
        rows.append(("JVP with a tangent of ones", Short(call.tangent, width=LINE_WIDTH)))
    parts = ["## Summary", "", table(["", ""], fit(["", ""], rows)), "", "### Checks", ""]
    if call.checks:
        headers = ["check", "result", "detail"]
        parts.append(table(headers, fit(headers, [(c.name, verdict(c), c.detail) for c in call.checks])))
    else:
        parts.append("_No check could run._")
    if call.capture == "structure":
        parts += ["", STRUCTURE]
    if rule_suspected(call.checks):
        parts += ["", suspected_rule_line(call)]
    for finding in call.pass_findings:  # bugs of the whole backward pass (compare/pass_checks.py), named first
        parts += ["", f"**The backward pass is wrong: {text(finding.title)}**, at {code(finding.node)} ("
                      f"{made_at(finding.site)}): {text(finding.reason)}."]
    divergent = first_divergence(call.alignment)
    if divergent and own is None:
        parts += ["", f"**First divergent node: {code(divergent)}** (autograd's visit order): the reference "
                      "engine's total of partial adjoints differs from autograd's popped cotangent there."]
    elif divergent:
        parts += ["", f"**First divergent node: {code(divergent)}** ({text(call.engine)}'s visit order): the lecture's "
                      "total of partial adjoints differs from the `.grad` its `_backward` read there."]
    if call.reference_note:
        parts += ["", f"_Reference engine not run: {text(clip(call.reference_note, LINE_WIDTH // 2))}_"]
    for message in call.warnings:
        parts += ["", f"_autograd warned: {text(clip(message, LINE_WIDTH // 2))}_"]
    for message in getattr(call, "reference_warnings", ()):
        parts += ["", f"_The reference engine's rules warned (recomputing the derivatives): "
                      f"{text(clip(message, LINE_WIDTH // 2))}_"]
    return "\n".join(parts)


def suspected_rule_line(call):
    """Finite differences fail while the reference engine agrees: the node whose own rule fails
    checked alone (``checker``), or the command that checks each node."""
    why = ("central finite differences fail while the reference engine agrees with "
           f"{text(call.engine)} node by node, so the two share the wrong local rule")
    first = call.node_checks.first_failure if call.node_checks is not None else None
    if first is not None:
        where = f", argument {first.argnum}" if first.argnum is not None else ""
        return (f"**The failing node: {code(first.node)}** ({code(first.primitive)}{where}, called at "
                f"{text(first.site or 'an unknown line')}): {why}; its local rule checked alone fails "
                "(Checks per node).")
    if call.node_checks is not None:
        return f"_{why[0].upper()}{why[1:]}; the per-node checker found no failing node (Checks per node)._"
    target = f"{call.location.rpartition(':')[0] or call.location}:{call.name}"
    engine = "" if call.engine == "autograd" else f" --engine {call.engine}"
    return (f"_{why[0].upper()}{why[1:]} (a custom primitive's VJP, say): `adtrace check {text(target)}{engine}` "
            "with the same arguments (or `adtrace report --check-nodes`) checks each node alone and names it._")


def _primitive(row, node):
    """As recorded; "(leaf)" for a value made without children (not one made by an op without ``_op``: '')."""
    return row.primitive or ("" if getattr(node, "parents", ()) else "(leaf)")


def side_by_side_section(call, options):
    if not call.alignment:
        return None
    nodes = call.recording.nodes if call.recording is not None else {}
    named = Namer(call.recording)
    rows = [(named(r.label), _primitive(r, nodes.get(r.label)),
             "-" if r.partial_adjoints is None else Short(list(r.partial_adjoints)),
             "not known" if r.v_i_bar is None and r.partial_adjoints is not None else Short(r.v_i_bar),
             Short(r.running, series), Short(r.popped),
             r.status if r.status != "differs" else "**DIFFERS**",
             "-" if r.difference is None else f"{r.difference:.3g}") for r in call.alignment[:options.max_rows]]
    if _own_code(call) is not None:
        headers = ["node", "op", "node_to_grad[i] (lecture)", "sum", f".grad ({call.engine})", "read", "status",
                   "difference"]
        return "\n".join([
            f"## Side by side: the lecture's `node_to_grad` against {call.engine}'s running `.grad`", "",
            f"Per value in {call.engine}'s visit order (each `_backward` call): the lecture's list of partial "
            "adjoints and their sum at the visit (over the recorded graph, its own rules), against the value's "
            "`.grad` before the pass wrote it and after each write, and the `.grad` its `_backward` read.", "",
            table(headers, fit(headers, rows), options.max_rows, total=len(call.alignment))])
    headers = ["node", "primitive", "node_to_grad[i] (lecture)", "sum", "outgrads[node] (autograd)", "pop", "status",
               "difference"]
    return "\n".join([
        "## Side by side: the lecture's `node_to_grad` against autograd's `outgrads`", "",
        "Per node in autograd's visit order: the reference engine's list of partial adjoints and "
        "their sum at the visit, against autograd's running entry (updated by `add_outgrads` on "
        "each arrival) and the value `outgrads.pop(node)` returned.", "",
        table(headers, fit(headers, rows), options.max_rows, total=len(call.alignment))])


def _own_code(call):
    """The ``EngineCode`` of a call traced through an engine with its own backward(), else None."""
    return getattr(call.recording, "code", None)


def forward_comparison_section(call, options):
    if not call.reference_tangents or call.forward_recording is None:
        return None
    recorded = {e.label: e.tangent for e in call.forward_recording.of_kind(JVPRoot, JVPNodeCreated)}
    shown = call.reference_tangents[:options.max_rows]
    named = Namer(call.forward_recording)
    rows = [(named(s.label), s.primitive, s.rule, Short(s.tangent), Short(recorded.get(s.label))) for s in shown]
    headers = ["node", "primitive", "rule", "tangent (lecture)", "tangent (autograd)"]
    return "\n".join([
        "## Forward mode side by side", "",
        "Tangent per node: the reference engine (input first, `topo_order`) against autograd's `JVPNode.g`.", "",
        table(headers, fit(headers, rows), options.max_rows, total=len(call.reference_tangents))])


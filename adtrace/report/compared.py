"""Report sections that hold autograd against the lecture: summary with checks, side by side."""

from ..compare.align import first_divergence
from .abbreviate import clip, each, series
from .fit import LINE_WIDTH, Short, fit
from .format import code
from .tables import table

STRUCTURE = ("_Capture level `structure`: no values were recorded, so nothing is compared node by node (no "
             "reference-engine check, no side by side); the visit orders and finite differences are checked "
             "without them._")


def summary_section(call):
    rows = [("function", code(call.name)), ("source", call.location),
            ("inputs", Short(call.args, each, LINE_WIDTH)), ("differentiated argument", call.argnum),
            ("output", Short(call.output, width=LINE_WIDTH)), ("capture level", call.capture)]
    if call.mode in ("rev", "both"):
        rows.append(("gradient (VJP with a seed of ones)", Short(call.gradient, width=LINE_WIDTH)))
    if call.mode in ("fwd", "both"):
        rows.append(("JVP with a tangent of ones", Short(call.tangent, width=LINE_WIDTH)))
    parts = ["## Summary", "", table(["", ""], fit(["", ""], rows)), "", "### Checks", ""]
    if call.checks:
        headers = ["check", "result", "detail"]
        parts.append(table(headers, fit(headers, [(c.name, "skipped" if c.skipped else "pass" if c.passed else "FAIL",
                                                   c.detail) for c in call.checks])))
    else:
        parts.append("_No check could run._")
    if call.capture == "structure":
        parts += ["", STRUCTURE]
    divergent = first_divergence(call.alignment)
    if divergent:
        parts += ["", f"**First divergent node: `{divergent}`** (autograd's visit order): the reference "
                      "engine's total of partial adjoints differs from autograd's popped cotangent there."]
    if call.reference_note:
        parts += ["", f"_Reference engine not run: {clip(call.reference_note, LINE_WIDTH - 30)}_"]
    for message in call.warnings:
        parts += ["", f"_autograd warned: {clip(message, LINE_WIDTH - 30)}_"]
    return "\n".join(parts)


def side_by_side_section(call, options):
    if not call.alignment:
        return None
    rows = [(r.label, r.primitive, "-" if r.partial_adjoints is None else Short(list(r.partial_adjoints)),
             Short(r.v_i_bar), Short(r.running, series), Short(r.popped),
             r.status if r.status != "differs" else "**DIFFERS**",
             "-" if r.difference is None else f"{r.difference:.3g}") for r in call.alignment[:options.max_rows]]
    headers = ["node", "primitive", "node_to_grad[i] (lecture)", "sum", "outgrads[node] (autograd)", "pop", "status",
               "difference"]
    return "\n".join([
        "## Side by side: the lecture's `node_to_grad` against autograd's `outgrads`", "",
        "Per node in autograd's visit order: the reference engine's list of partial adjoints and "
        "their sum at the visit, against autograd's running entry (updated by `add_outgrads` on "
        "each arrival) and the value `outgrads.pop(node)` returned.", "",
        table(headers, fit(headers, rows), options.max_rows, total=len(call.alignment))])


def forward_comparison_section(call, options):
    if not call.reference_tangents or call.forward_recording is None:
        return None
    recorded = {e.label: e.tangent for e in call.forward_recording.events if e.kind in ("jvp_root", "jvp_node")}
    shown = call.reference_tangents[:options.max_rows]
    rows = [(s.label, s.primitive, s.rule, Short(s.tangent), Short(recorded.get(s.label))) for s in shown]
    headers = ["node", "primitive", "rule", "tangent (lecture)", "tangent (autograd)"]
    return "\n".join([
        "## Forward mode side by side", "",
        "Tangent per node: the reference engine (input first, `topo_order`) against autograd's `JVPNode.g`.", "",
        table(headers, fit(headers, rows), options.max_rows, total=len(call.reference_tangents))])


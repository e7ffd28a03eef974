"""Report sections that hold autograd against the lecture: summary with checks, side by side."""

from ..compare.align import first_divergence
from .format import code, fmt, text
from .tables import table


def summary_section(call):
    own = _own_code(call)
    rows = [("function", code(call.name)), ("source", call.location),
            ("inputs", ", ".join(fmt(a) for a in call.args)),
            ("differentiated argument", call.argnum) if own is None else
            ("engine", f"{call.engine}: {code(own.name)} ({own.location}); every argument is a leaf"),
            ("output", fmt(call.output)), ("capture level", call.capture)]
    if call.mode in ("rev", "both"):
        rows.append(("gradient (VJP with a seed of ones)" if own is None else
                     "gradient (.grad of each argument after backward())", fmt(call.gradient)))
    if call.mode in ("fwd", "both"):
        rows.append(("JVP with a tangent of ones", fmt(call.tangent)))
    parts = ["## Summary", "", table(["", ""], rows), "", "### Checks", ""]
    if call.checks:
        parts.append(table(["check", "result", "detail"],
                           [(c.name, "skipped" if c.skipped else "pass" if c.passed else "FAIL", c.detail)
                            for c in call.checks]))
    else:
        parts.append("_No check could run._")
    divergent = first_divergence(call.alignment)
    if divergent and own is None:
        parts += ["", f"**First divergent node: {code(divergent)}** (autograd's visit order): the reference "
                      "engine's total of partial adjoints differs from autograd's popped cotangent there."]
    elif divergent:
        parts += ["", f"**First divergent node: {code(divergent)}** ({text(call.engine)}'s visit order): the lecture's "
                      "total of partial adjoints differs from the `.grad` its `_backward` read there."]
    if call.reference_note:
        parts += ["", f"_Reference engine not run: {text(call.reference_note)}_"]
    for message in call.warnings:
        parts += ["", f"_autograd warned: {text(message)}_"]
    return "\n".join(parts)


def side_by_side_section(call, options):
    if not call.alignment:
        return None
    rows = [(r.label, r.primitive or "(leaf)", _list(r.partial_adjoints), fmt(r.v_i_bar),
             " -> ".join(fmt(e) for e in r.running), fmt(r.popped),
             r.status if r.status != "differs" else "**DIFFERS**",
             "-" if r.difference is None else f"{r.difference:.3g}") for r in call.alignment]
    if _own_code(call) is not None:
        return "\n".join([
            f"## Side by side: the lecture's `node_to_grad` against {call.engine}'s running `.grad`", "",
            f"Per value in {call.engine}'s visit order (each `_backward` call): the lecture's list of partial "
            "adjoints and their sum at the visit (over the recorded graph, its own rules), against the value's "
            "`.grad` before the pass wrote it and after each write, and the `.grad` its `_backward` read.", "",
            table(["node", "op", "node_to_grad[i] (lecture)", "sum", f".grad ({call.engine})", "read",
                   "status", "difference"], rows, options.max_rows)])
    return "\n".join([
        "## Side by side: the lecture's `node_to_grad` against autograd's `outgrads`", "",
        "Per node in autograd's visit order: the reference engine's list of partial adjoints and "
        "their sum at the visit, against autograd's running entry (updated by `add_outgrads` on "
        "each arrival) and the value `outgrads.pop(node)` returned.", "",
        table(["node", "primitive", "node_to_grad[i] (lecture)", "sum", "outgrads[node] (autograd)",
               "pop", "status", "difference"], rows, options.max_rows)])


def _own_code(call):
    """The ``EngineCode`` of a call traced through an engine with its own backward(), else None."""
    return getattr(call.recording, "code", None)


def forward_comparison_section(call, options):
    if not call.reference_tangents or call.forward_recording is None:
        return None
    recorded = {e.label: e.tangent for e in call.forward_recording.events if e.kind in ("jvp_root", "jvp_node")}
    rows = [(s.label, s.primitive, s.rule, fmt(s.tangent), fmt(recorded.get(s.label))) for s in call.reference_tangents]
    return "\n".join([
        "## Forward mode side by side", "",
        "Tangent per node: the reference engine (input first, `topo_order`) against autograd's `JVPNode.g`.", "",
        table(["node", "primitive", "rule", "tangent (lecture)", "tangent (autograd)"], rows, options.max_rows)])


def _list(values):
    return "-" if values is None else "[" + ", ".join(fmt(v) for v in values) + "]"

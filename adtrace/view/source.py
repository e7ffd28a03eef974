"""The code panels: autograd's own source, read from the installed autograd, and the lecture's
pseudocode, each with the line every statement of a pass maps to. A recording of an engine with
its own ``backward()`` (``Recording.code``) shows that source instead, with its statements.

Reverse passes show ``backward_pass``; forward passes show ``JVPNode`` and ``sum_outgrads`` (a
node's JVP rule sums one tangent share per argument with ``add_outgrads``). A statement whose line
is not found in the installed source (another autograd release) maps to ``None``: the panel then
highlights nothing for it, and the statement itself is still shown.
"""

import inspect
import textwrap

import autograd.core

from ..recording.snapshots import ADD, INIT, NO_PARENTS, POP, RETURN, VJP, YIELD

REVERSE_LECTURE = (
    "def gradient(out):",
    "    node_to_grad = {out: [1]}",
    "    for i in reverse_topo_order(out):",
    "        v_i_bar = sum(node_to_grad[i])",
    "        for k in inputs(i):",
    "            compute v_k_to_i_bar = v_i_bar * dv_i/dv_k",
    "            append v_k_to_i_bar to node_to_grad[k]",
    "    return adjoint of input v_input_bar",
)

FORWARD_LECTURE = (
    "def tangents(x_dot):",
    "    node_to_tangent = {input: x_dot}",
    "    for i in topo_order(out):",
    "        for k in inputs(i):",
    "            share = dv_i/dv_k * v_k_dot",
    "        v_i_dot = sum(shares)",
    "    return v_out_dot",
)

# A forward pass, event by event (``make_jvp``'s ``jvp``, then each ``JVPNode`` being built).
ROOT = "root = JVPNode.new_root(g)"
SHARE = "sum_outgrads: add_outgrads(prev_g_flagged, g)"
NODE = "JVPNode(ans, fun, args, kwargs, argnums, parents)"

# statement -> (text of its line in autograd's source, text of its line in the lecture)
REVERSE_LINES = {
    INIT: ("outgrads = {end_node: (g, False)}", "node_to_grad = {out: [1]}"),
    YIELD: ("for node in toposort(end_node):", "for i in reverse_topo_order(out):"),
    POP: ("outgrad = outgrads.pop(node)", "v_i_bar = sum(node_to_grad[i])"),
    VJP: ("ingrads = node.vjp(outgrad[0])", "compute v_k_to_i_bar = v_i_bar * dv_i/dv_k"),
    ADD: ("outgrads[parent] = add_outgrads(outgrads.get(parent), ingrad)", "append v_k_to_i_bar to node_to_grad[k]"),
    NO_PARENTS: ("for parent, ingrad in zip(node.parents, ingrads):", "for k in inputs(i):"),
    RETURN: ("return outgrad[0]", "return adjoint of input v_input_bar"),
}
FORWARD_LINES = {
    ROOT: ("self.g = g", "node_to_tangent = {input: x_dot}"),
    SHARE: ("return reduce(add_outgrads, gs, None)[0]", "share = dv_i/dv_k * v_k_dot"),
    NODE: ("self.g = jvpmaker(parent_argnums, parent_gs, value, args, kwargs)", "v_i_dot = sum(shares)"),
}
REVERSE_STATEMENTS = (INIT, YIELD, POP, VJP, ADD, NO_PARENTS, RETURN)
FORWARD_STATEMENTS = (ROOT, SHARE, NODE)

# statement -> what the step's value fields mean there (the page names them so)
FIELDS = {
    INIT: {"outgrad": "g (the seed)"},
    YIELD: {},
    POP: {"outgrad": "outgrad (value, mutable)"},
    VJP: {"outgrad": "outgrad[0]", "ingrads": "ingrads"},
    ADD: {"ingrads": "ingrad", "previous": "outgrads.get(parent)", "result": "add_outgrads returned"},
    NO_PARENTS: {"ingrads": "ingrads (nothing to add)"},
    RETURN: {"outgrad": "outgrad[0], returned"},
    ROOT: {"result": "g (the input's tangent)"},
    SHARE: {"ingrads": "share (this argument's JVP)", "previous": "prev_g_flagged", "result": "add_outgrads returned"},
    NODE: {"result": "JVPNode.g (the tangent)"},
}


# An engine with its own backward() (engine_code.EngineCode): the statements of its passes, by key,
# with the lecture's line each maps to and what the step's value fields mean there
ENGINE_STATEMENTS = ("backward_start", "toposort", "vjp", "add_outgrads", "write", "backward_end")
ENGINE_LECTURE = {"backward_start": "node_to_grad = {out: [1]}", "toposort": "for i in reverse_topo_order(out):",
                  "vjp": "compute v_k_to_i_bar = v_i_bar * dv_i/dv_k",
                  "add_outgrads": "append v_k_to_i_bar to node_to_grad[k]",
                  "backward_end": "return adjoint of input v_input_bar"}
ENGINE_FIELDS = {
    "backward_start": {"outgrad": "the seed"},
    "toposort": {"outgrad": ".grad (every contribution already added)"},
    "vjp": {"outgrad": "out.grad, read by the closure", "ingrads": "its contributions, by child"},
    "add_outgrads": {"ingrads": "contribution", "previous": ".grad before", "result": ".grad after"},
    "write": {"previous": ".grad before", "result": ".grad after (written by backward() itself)"},
    "backward_end": {},
}


def code_panels(code=None):
    """``{"rev": panel, "fwd": panel}``; a panel holds both listings and the statements' lines.
    ``code``: an engine's ``EngineCode``, whose ``backward()`` the reverse panel shows."""
    reverse = _source_lines(autograd.core.backward_pass)
    forward = _source_lines(autograd.core.JVPNode) + [""] + _source_lines(autograd.core.sum_outgrads)
    return {
        "rev": _panel("autograd.core.backward_pass", reverse, REVERSE_LECTURE, REVERSE_STATEMENTS, REVERSE_LINES)
        if code is None else engine_panel(code),
        "fwd": _panel("autograd.core.JVPNode, sum_outgrads", forward, FORWARD_LECTURE, FORWARD_STATEMENTS,
                      FORWARD_LINES),
    }


def engine_panel(code):
    """The reverse panel of an engine with its own ``backward()``: its source, one statement per key."""
    statements = []
    for key in ENGINE_STATEMENTS:
        found = code.statements.get(key)
        statements.append({"text": found.text if found else key, "autograd": found.line if found else None,
                           "lecture": _find(REVERSE_LECTURE, ENGINE_LECTURE.get(key)),
                           "fields": ENGINE_FIELDS[key]})
    return {"autograd": {"name": f"{code.name} ({code.location})", "lines": list(code.lines)},
            "lecture": {"name": "the lecture's pseudocode", "lines": list(REVERSE_LECTURE)},
            "statements": statements}


def _panel(name, source, lecture, statements, lines):
    return {"autograd": {"name": name, "lines": source},
            "lecture": {"name": "the lecture's pseudocode", "lines": list(lecture)},
            "statements": [{"text": s, "autograd": _find(source, lines[s][0]), "lecture": _find(lecture, lines[s][1]),
                            "fields": FIELDS[s]}
                           for s in statements]}


def _source_lines(obj):
    """The source of an autograd function or class, dedented; wrappers (adtrace's own, while a
    recording is active) are unwrapped to the installed original."""
    try:
        return textwrap.dedent(inspect.getsource(inspect.unwrap(obj))).rstrip().splitlines()
    except (OSError, TypeError):
        return [f"# source of {getattr(obj, '__qualname__', obj)} not available"]


def _find(lines, text):
    """Index of the first line whose stripped text is ``text``, else ``None``."""
    return next((i for i, line in enumerate(lines) if line.strip() == text), None)

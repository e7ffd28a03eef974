"""The lecture mapping: the lecture's reverse AD algorithm line by line against the engine's
backward pass, with how often each line ran in the user's pass (and in the reference engine)."""

from collections import Counter

from ..recording.events import AddOutgrads, BackwardEnd, BackwardStart, ToposortYielded, VJPCalled
from ..recording.snapshots import ADD, INIT, POP, RETURN, VJP, YIELD
from .format import code
from .tables import table

LECTURE = (
    ("node_to_grad = {out: [1]}", INIT, BackwardStart),
    ("for i in reverse_topo_order(out)", YIELD, ToposortYielded),
    ("v_i_bar = sum(node_to_grad[i])", POP + "  (summed on arrival by add_outgrads)", ToposortYielded),
    ("for k in inputs(i)", "for parent, ingrad in zip(node.parents, ingrads)", AddOutgrads),
    ("compute v_k_to_i_bar = v_i_bar * dv_i/dv_k", VJP, VJPCalled),
    ("append v_k_to_i_bar to node_to_grad[k]", ADD, AddOutgrads),
    ("return adjoint of input v_input_bar", RETURN, BackwardEnd),
)


# The same rows for an engine with its own backward(): (the statement's key in its EngineCode, or a
# text of ours where the engine has no statement of its own for the lecture's line)
OWN_LECTURE = ("backward_start", "toposort",
               "_(none: the closure reads `out.grad`, which each `+=` summed on arrival)_",
               "_(the closure's writes, one per child)_", "vjp", "add_outgrads",
               "_(none: `backward()` returns nothing; each value keeps its `.grad`)_")


def lecture_mapping_section(recording, nesting, reference_counts=None):
    """The lecture's lines against ``backward_pass``'s, with how often each ran in the user's pass."""
    user = nesting.user
    counts = Counter(map(type, recording.query_events(user))) if user is not None else Counter()
    own = recording.code
    engine = "autograd" if own is None else own.title or recording.engine
    headers = ["lecture pseudocode", f"{engine} statement ({'backward_pass' if own is None else own.name})",
               f"runs ({engine})"]
    rows = []
    for i, (line, statement, event_type) in enumerate(LECTURE):
        cell = code(statement)
        if own is not None:  # the engine's own statement, or our words where it has none
            written = own.statement_text(OWN_LECTURE[i])
            cell = code(written) if written else OWN_LECTURE[i]
        row = [code(line), cell, counts[event_type]]
        if reference_counts is not None:
            row.append(reference_counts[i])
        rows.append(row)
    if reference_counts is not None:
        headers.append("runs (reference)")
    intro = ("The lecture's reverse AD algorithm (CMU 10-414/714, Lecture 4) line by line against "
             "`backward_pass`. autograd computes all of a node's partial adjoints in one `node.vjp` call "
             "(the root's too, which returns `()`); the lecture's line runs once per input position. "
             "autograd sums on arrival, so its `pop` already holds the lecture's `sum`.")
    if own is not None:
        intro = (f"The lecture's reverse AD algorithm (CMU 10-414/714, Lecture 4) line by line against "
                 f"`{own.name}`. Each `_backward` closure computes a node's partial adjoints and adds each "
                 "into its child's `.grad` itself (`+=`): the lecture's `append` and `sum` happen on arrival, "
                 "in the child's running `.grad`; a closure that assigns (`=`) throws the earlier ones away.")
    counted = [f"Runs ({engine}) are counted in the user's pass, query {user}.", ""] if len(nesting.passes) > 1 else []
    return "\n".join(["## Lecture mapping", "", intro, "", *counted, table(headers, rows)])

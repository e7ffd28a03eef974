"""A diff of two backward passes (``adtrace/diff/``) as Markdown and as JSON: the verdict and the counts,
the first divergence with both sides' nodes, values and lines and its kind, what follows from it,
where the visit orders part, and the aligned nodes (capped)."""

import json

from .export import to_jsonable
from .format import fmt, text, whole
from .tables import table

VERDICTS = {"identical": "the same backward pass (structure, and values within rtol)",
            "values-differ": "the same structure; values differ",
            "structure-differs": "the structures differ (nodes only one side has)"}
UNKEPT = {"identical": "the same structure"}  # (a side without values: the verdict says no more than was compared)


def diff_markdown(d, a_name="A", b_name="B", max_rows=200):
    """The report of ``diff.Diff`` ``d``; ``a_name``, ``b_name``: what each side is (a target, a file)."""
    counts = d.counts
    lines = [f"# adtrace diff: {text(a_name)} against {text(b_name)}", "", _verdict(d), "",
             table(["", "A", "B"], [("engine", _engine(d.a.recording), _engine(d.b.recording)),
                                    ("nodes", len(d.a.nodes), len(d.b.nodes)),
                                    ("visited", len(d.a.visits), len(d.b.visits))]), "",
             "Nodes: " + ", ".join(f"{n} {_counted(d, what)}" for what, n in counts.items()) + ".", ""]
    lines += ["## The first divergence", ""]
    if d.first is None:
        lines += ["None: every matched node has the same forward value, gradient and contributions.", ""]
    else:
        lines += [f"**{d.first.kind}**, {d.first.what}: {text(d.first.detail)}.", "", _sides_table([d.first]), ""]
        if d.follows:
            lines += ["What follows from it:", ""]
            lines += [f"- {x.kind}, {x.what} of {_node(x)}: A {a}, B {b} ({text(x.detail)})"
                      for x, (a, b) in ((x, _values(x)) for x in d.follows)]
            lines.append("")
    lines += ["## Visit order", ""]
    if d.order is None:
        lines += ["The two passes visit the nodes they share in the same order.", ""]
    else:
        step, x, y = d.order
        why = ("an order difference, not a value difference: the gradients agree" if d.first is None else
               "the values differ too (the first divergence above)")
        lines += [f"The orders part at visit {step + 1}: A visits `{x}`, B visits `{y}` "
                  f"(A's `{d.alignment.b_to_a[y]}`): {why}.", ""]
    lines += ["## Aligned nodes", "", _aligned(d.rows, max_rows)]
    return "\n".join(lines) + "\n"


def _aligned(rows, max_rows):
    """The aligned nodes; B's own line where it is another than the one shown, and B's operands where B
    wrote them in another order (``b * a`` against ``a * b``): columns only where some row has one."""
    b_lines = [r.b_line if r.b_line and r.b_line != r.line else "" for r in rows]
    extra = [(name, column) for name, column in (("B's line", b_lines),
                                                 ("B's operands", [", ".join(r.b_operands) for r in rows]))
             if any(column)]
    headers = ["A", "B", "primitive", "line", *(name for name, _ in extra), "status", "differs"]
    return table(headers, [(r.a or "", r.b or "", r.primitive, r.line or "", *(column[i] for _, column in extra),
                            r.status, ", ".join(r.differs)) for i, r in enumerate(rows)], max_rows=max_rows)


def _counted(d, what):
    """A count's words: a node matched where a side kept no values is not known identical."""
    return "matched (values not compared)" if what == "identical" and d.unkept else what


def _verdict(d):
    """The verdict's sentence; a side kept without values (capture ``structure``): values not compared."""
    if not d.unkept:
        return f"**Verdict: {d.verdict}**: {VERDICTS[d.verdict]} (rtol {d.rtol:g})."
    said = UNKEPT.get(d.verdict, VERDICTS[d.verdict])
    return (f"**Verdict: {d.verdict}**: {said}; values not compared: {' and '.join(d.unkept)} kept none (capture "
            "`structure`): only the structure and the visit order are compared.")


def _engine(recording):
    return recording.engine_name


def _sides_table(divergences):
    rows = []
    for x in divergences:
        values = _values(x)
        for name, at, value in (("A", x.a, values[0]), ("B", x.b, values[1])):
            rows.append((name, "(none)", "", "", "") if at is None else
                        (name, at.node, at.primitive, at.line or "", value))
    return table(["side", "node", "primitive", "line", "value"], rows)


def _values(x):
    """Both sides' values as the reports write them, or whole (every digit) where those read the same:
    a difference past the 6th digit is seen."""
    shown = [None if at is None else fmt(at.value) for at in (x.a, x.b)]
    if None not in shown and shown[0] == shown[1]:
        shown = [whole(at.value) for at in (x.a, x.b)]
    return ["(none)" if s is None else s for s in shown]


def _node(x):
    return " / ".join(at.node for at in (x.a, x.b) if at is not None)


def diff_json(d):
    """``verdict``, ``first`` (null when none) with ``a`` and ``b`` (``node``, ``primitive``, ``line``,
    ``value``) and ``kind``, ``follows``, ``order`` and ``counts``, as a JSON document."""
    def divergence(x):
        return {"kind": x.kind, "what": x.what, "detail": x.detail, "a": _at(x.a), "b": _at(x.b)}

    document = {"verdict": d.verdict, "rtol": d.rtol, "values_compared": not d.unkept,
                "first": None if d.first is None else divergence(d.first),
                "follows": [divergence(x) for x in d.follows],
                "order": None if d.order is None else dict(zip(("step", "a", "b"), d.order)),
                "counts": d.counts,
                "nodes": [{"a": r.a, "b": r.b, "primitive": r.primitive, "line": r.line, "b_line": r.b_line,
                           "b_operands": list(r.b_operands), "status": r.status, "differs": list(r.differs)}
                          for r in d.rows]}
    return json.dumps(document, indent=1) + "\n"


def _at(at):
    if at is None:
        return None
    return {"node": at.node, "primitive": at.primitive, "line": at.line, "value": to_jsonable(at.value)}

"""The per-node checker's findings as a table and a verdict line (``adtrace check``, and the
"Checks per node" section of a report)."""

from ..compare.pass_checks import TITLES
from .fit import fit
from .format import code, made_at, text
from .naming import Namer
from .tables import table


def node_checks_table(report, max_rows=None):
    named = Namer(getattr(report, "recording", None))
    rows = [(r.node, r.primitive, "-" if r.argnum is None else r.argnum, named.site(r.node, r.site) or "-", r.test,
             r.status, _num(r.analytic), _num(r.numeric), _num(r.difference), _num(r.tolerance), r.reason or "")
            for r in report.rows]
    if report.nonfinite is not None:
        n = report.nonfinite
        rows.append((n.node, n.primitive, "-" if n.argnum is None else n.argnum, named.site(n.node, n.site) or "-",
                     n.test,
                     n.status, "-", "-", "-", "-", n.reason))
    headers = ["node", "primitive", "argnum", "call site", "test", "status", "analytic", "numeric", "difference",
               "tolerance", "note"]
    shown = rows if max_rows is None else rows[:max_rows]
    parts = [table(headers, fit(headers, shown), max_rows, total=len(rows))]
    tests = {r.test for r in report.rows}
    if tests & {"vjp", "jvp"}:
        parts.append(LOCAL_LEGEND)
    elif "local" in tests:
        parts.append(ENGINE_LEGEND)
    return "\n\n".join(parts)


LOCAL_LEGEND = ("A row passes when its difference is within its tolerance (rtol by the dtype, 1e-5 in double "
                "precision, times the size of the numbers, plus 10x the estimated error of the differences). "
                "u and v are random directions (seeded) of the node's output and input: `analytic` is "
                "dot(VJP(u), v) in a vjp row and dot(u, JVP(v)) in a jvp row, two ways to compute dot(u, J v), "
                "so both rows of a node show the same numbers when both rules are right; `numeric` is "
                "dot(u, J v) by central differences.")
ENGINE_LEGEND = ("A local row passes when its difference is within its tolerance (rtol 1e-5 times the size of "
                 "the numbers, plus 10x the estimated error of the differences): `analytic` is what the "
                 "`_backward` wrote, `numeric` the node's `.grad` times the op's derivative by central differences.")


def verdict_line(report):
    """One line: the first failing node, or how many nodes pass and how many could not be tested."""
    first = report.first_failure
    tested = {r.node for r in report.rows if r.status != "skipped"}
    skipped = {r.node for r in report.rows if r.status == "skipped"} - tested
    left = []
    if skipped:
        left.append(f"{len(skipped)} skipped (see the table)")
    if report.not_checked:
        left.append(f"{report.not_checked} not checked (limit)")
    tail = f"; {', '.join(left)}" if left else ""
    if first is None and not tested:
        return f"Nothing checked: no node could be tested{tail}."
    if first is None:
        return f"{len(tested)} of {len(tested) + len(skipped) + report.not_checked} nodes tested, all pass{tail}."
    if first.test in TITLES:  # a bug of the whole backward pass (compare/pass_checks.py)
        return (f"The backward pass is wrong: {text(TITLES[first.test])}, at {code(first.node)} ("
                f"{made_at(first.site)}): {text(first.reason)}{tail}.")
    where = f" argument {first.argnum}" if first.argnum is not None else ""
    site = Namer(getattr(report, "recording", None)).site(first.node, first.site)
    return (f"First failing node: {code(first.node)} ({code(first.primitive)}){where}, called at "
            f"{text(site or 'an unknown line')}: {text(first.reason)}{tail}.")


def node_checks_section(report, options):
    intro = ("Each node's local VJP (and JVP, where autograd has a forward rule) re-run alone on the "
             "recorded inputs, against central differences along fixed random directions.")
    if getattr(report.recording, "code", None) is not None:  # an engine with its own backward()
        intro = ("Each node's contributions (what its `_backward` wrote into each child's `.grad`) against its "
                 "`.grad` times the op's derivative, taken by central differences of the op at the recorded "
                 "values (`local`); each write that assigned instead of adding (`accumulation`).")
    passes = sorted({r.test for r in report.rows} & set(TITLES))
    if passes:  # (rows only a wrong pass has)
        intro += (" First, what went wrong in the whole backward pass, where every local rule may pass ("
                  + ", ".join(f"`{test}`: {TITLES[test]}" for test in passes) + ").")
    return "\n".join(["## Checks per node", "", intro, "", verdict_line(report), "",
                      node_checks_table(report, options.max_rows)])


def _num(x):
    return "-" if x is None else f"{x:.6g}"

"""Explanations as Markdown: a heading per element, its verdict, its causes and where its gradient
came from (per line, and per path for a scalar graph), through the reports' tables."""


from ..recording.names import named_site
from .contributions import exact
from ..report.abbreviate import clip
from ..report.fit import LINE_WIDTH, fit
from ..report.format import code, fmt, text
from ..report.tables import table

VERDICT_TEXT = {
    "contributions": "the sum of its contributions",
    "zero": "zero",
    "nonfinite": "not finite",
}


def render_explanations(explanations, title="Explanations", lines=None, leaves=None):
    """``lines``, ``leaves``: ``scale.Scale`` per line and per leaf of the input, shown after them."""
    parts = [f"# {text(title)}"]
    summed = getattr(explanations, "summed", None)
    if summed:
        parts.append(f"The output has {summed} elements: each gradient here is that of their sum (a vector-Jacobian "
                     "product with a cotangent of ones).")
    parts += [render_explanation(e) for e in explanations]
    if lines:
        parts += ["## Gradient scale by line", table(
            ["line", "nodes", "outgrads' norm", "largest", "nearest the output", "nearest the input"],
            [(s.where, s.nodes, fmt(s.norm), fmt(s.largest), fmt(s.nearest_output), fmt(s.nearest_input))
             for s in lines])]
    if leaves:
        headers = ["part", "elements", "norm", "largest"]
        parts += ["## Gradient scale by part of the input", table(headers, fit(headers, [
            (code(clip(s.where, LINE_WIDTH // 2)), s.nodes, fmt(s.norm), fmt(s.largest)) for s in leaves]))]
    return "\n\n".join(parts) + "\n"


def render_explanation(e):
    parts = [f"## {code(clip(e.selector, LINE_WIDTH // 2))} = {fmt(e.gradient)}: {VERDICT_TEXT[e.verdict]}"]
    if e.causes:
        rows = [(c.node + (" (forward)" if c.forward else ""), c.primitive, "-" if c.argnum is None else c.argnum,
                 named_site(c.name, c.line) or "-", code(c.reason), "-" if c.fraction is None else f"{c.fraction:.0%}",
                 "; ".join(f"{k} {fmt(v)}" for k, v in c.values.items()) or "-", c.detail)
                for c in e.causes]
        headers = ["node", "primitive", "argnum", "line", "reason", "paths cut", "values", "detail"]
        parts.append(table(headers, fit(headers, rows)))  # no line wider than a report's (the JSON has all)
    if e.attribution:
        rows = [(s.line, fmt(s.share), s.contributions) for s in e.attribution]
        parts.append(table(["line", "share", "contributions"], rows))
        parts.append(_sums(e))
    if e.paths:
        rows = [(_path(p.nodes), fmt(p.value)) for p in e.paths]
        parts.append(table(["path", "product of local partials"], fit(["path", "product of local partials"], rows)))
        if e.more_paths:
            parts.append(f"_{e.more_paths} more paths, summing to {fmt(e.more_paths_sum)}._")
        parts += _paths_disagree(e)
    elif e.more_paths:
        parts.append(f"_{e.more_paths} paths from the input to the output: too many to list (see the lines)._")
    return "\n\n".join(parts)


def _paths_disagree(e):
    """A sentence when the paths' products do not sum to the recorded gradient (``Explanation.paths_sum``)."""
    total, differs = e.paths_sum()
    if not differs:
        return []
    lost = any(c.reason == "grad-replaced" for c in e.causes)
    why = "a write on the way was lost (`grad-replaced` above)" if lost else "the pass did not compute this derivative"
    return [f"**The paths' products sum to {fmt(total.real if total.imag == 0 else total)}, not the recorded "
            f"gradient {fmt(e.gradient)}**: {why}."]


def _path(nodes, ends=4):
    """A path's nodes joined; a long one (a loop's chain) its first and last ``ends`` nodes (all in --json)."""
    if len(nodes) <= 2 * ends + 1:
        return " -> ".join(nodes)
    return " -> ".join(nodes[:ends]) + f" -> ... {len(nodes) - 2 * ends} more ... -> " + " -> ".join(nodes[-ends:])


def _sums(e):
    n = len(e.contributions)
    elsewhere = sum(not c.covers for c in e.contributions)
    fold = ("add up, in the recorded order, to the recorded gradient bit for bit" if e.exact
            else "do NOT add up to the recorded gradient")
    if n == 1:
        fold = fold.replace("add up", "adds up").replace("do NOT", "does NOT")
    line = f"The {n} recorded contribution{'s' if n != 1 else ''} into the input {fold}"
    if elsewhere:
        line += f" ({elsewhere} into other items of it, 0 here, not in the table)"
    if e.rounding and e.exact:
        line += f"; the lines' exact sum differs from it by the rounding of those additions, {fmt(float(e.rounding))}"
    elif e.rounding:  # (a write that replaced .grad, not a rounding): the sum, then the gradient
        line += f"; the lines sum to {fmt(float(exact(e.gradient) - e.rounding))}, the recorded gradient is " \
            f"{fmt(e.gradient)}"
    return line + "."

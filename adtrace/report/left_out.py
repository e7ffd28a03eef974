"""The report's last section: what the default options left out, and how to get it."""

from .recorded import snapshot_rows


def left_out_section(recording, nesting, options, alignment=()):
    """``None`` when the report shows everything (long values aside: each cell says so itself)."""
    items = []
    table_of_nodes = recording.nodes  # (the nodes not made inside a VJP counted: no list of every node)
    nodes = len(table_of_nodes) - sum(label in table_of_nodes for label in nesting.made_inside)
    if nodes > options.collapse_above:
        items.append(f"the graph's {nodes} nodes are grouped by source line (above {options.collapse_above}): "
                     f"`--collapse-above {nodes}` (`ReportOptions(collapse_above=N)`)")
    capped = []
    if len(recording.events) - len(nesting.inside) + len(nesting.stretches) > options.max_rows:
        capped.append("the call sequence")
    outermost = [p.query for p in nesting.passes if p.parent is None]
    shown = outermost[:options.max_queries]
    if any(snapshot_rows(recording, recording.query_events(q)) > options.max_rows for q in shown):
        capped.append("state snapshots")
    if len(alignment) > options.max_rows:
        capped.append("the side by side")
    if capped:
        tables = " and ".join([", ".join(capped[:-1]), capped[-1]] if len(capped) > 1 else capped)
        items.append(f"{tables} stop after {options.max_rows} rows: `--max-rows N` (`ReportOptions(max_rows=N)`)")
    if len(outermost) > options.max_queries:
        items.append(f"state snapshots of {options.max_queries} of {len(outermost)} backward passes are shown: "
                     "`ReportOptions(max_queries=N)`")
    if nesting.work:
        items.append("what ran inside a node's VJP is folded into one line per section: see Nested backward passes")
    if not items:
        return None
    return "\n".join(["## Left out of this report", "",
                      *(f"- {item[0].upper()}{item[1:]}." for item in items),
                      "- Long values are abbreviated in tables (`...` and their size).", "",
                      "The JSON export (`adtrace report --json FILE`, `adtrace.report.export.events_json`) has "
                      "every event with every value whole."])

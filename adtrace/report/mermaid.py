"""The recorded graph as a Mermaid flowchart: safe ids, escaped labels, a size cap."""

from .format import visible

_ENTITIES = [("#", "#35;"), ('"', "#quot;"), ("&", "#amp;"), ("<", "#lt;"), (">", "#gt;"), ("|", "#124;"),
             ("`", "#96;"), ("[", "#91;"), ("]", "#93;"), ("{", "#123;"), ("}", "#125;")]


def escape(text):
    """Text safe inside a quoted Mermaid label (entity codes; ``#`` first, entities use it); control
    and bidirectional characters shown as escapes, line breaks as Mermaid's ``<br/>``."""
    text = visible(text, keep="\r\n")
    for char, entity in _ENTITIES:
        text = text.replace(char, entity)
    return text.replace("\r\n", "<br/>").replace("\n", "<br/>").replace("\r", "<br/>")


def flowchart(nodes, max_nodes):
    """``nodes``: ``[(label, caption, ((edge text, parent label), ...))]`` in creation order (an
    edge's text: ``arg 0``, or how many edges of a collapsed graph it stands for).

    Returns a fenced ``mermaid`` block, or ``None`` above ``max_nodes`` (the caller says so)."""
    if len(nodes) > max_nodes:
        return None
    ids = {label: f"n{i}" for i, (label, _, _) in enumerate(nodes)}
    lines = ["```mermaid", "flowchart BT"]
    for label, caption, _ in nodes:
        lines.append(f'    {ids[label]}["{escape(caption)}"]')
    for label, _, parents in nodes:
        for text, parent in parents:
            if parent in ids:
                lines.append(f'    {ids[parent]} -->|"{escape(text)}"| {ids[label]}')
    lines.append("```")
    return "\n".join(lines)

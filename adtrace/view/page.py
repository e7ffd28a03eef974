"""The page: the viewer's data and assets as one self-contained HTML file.

No request leaves the page (its Content-Security-Policy allows no source but itself) and it works
from ``file://`` offline. The data goes into a ``<script type="application/json">`` element with
``<``, ``>`` and ``&`` written as JSON escapes, so no label or value can end the element or become
markup; the scripts put text on the page through ``textContent`` only. Its text (the title, a
function's name, a label, a value, a message) shows control characters, bidirectional overrides
and line breaks as escapes (``report.format.visible``), as the reports do. The same data gives the
same bytes.

The graph is laid out by the page's own layered layout (``assets/layout.js``), not a library.
The candidate was @dagrejs/dagre, the layered layout Mermaid draws the reports' flowcharts with:
on the experiments' graphs and the collapsed views both give the same pictures with as few
crossings, but dagre would be most of a small page's bytes, its time grows steeply with an
expanded loop (seconds at a thousand nodes) and it exhausts the call stack on a 4,000-node one.
autograd's graphs come with a topological order (creation order), which makes a layered layout
(longest-path layers, dummy points for long edges, barycenter sweeps) a few linear passes.
"""

import html
import json
import re
from importlib import resources

from ..report.format import visible

SCRIPTS = ("layout.js", "svg.js", "steps.js", "viewer.js", "groups.js", "graph.js", "panels.js", "failures.js",
           "readable.js", "explained.js", "controls.js")
STYLES = ("viewer.css", "explained.css")
_MARKER = re.compile(r"@@(TITLE|STYLE|DATA|SCRIPT)@@")
_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"}
# a character report.format.visible rewrites, as JSON writes it (or a look-alike: a backslash before such letters)
_MAYBE_INVISIBLE = re.compile(r"\\(u00[0189][0-9a-f]|u007f|u061c|u200[b-f]|u202[89a-e]|u206[6-9]|ufeff|[bfnrt])")


def render_page(data):
    """The HTML page for ``data`` (``adtrace.view.data.page_data``)."""
    parts = {"TITLE": html.escape(visible(data["title"])), "STYLE": "\n".join(_asset(name) for name in STYLES),
             "DATA": embed_shown(data), "SCRIPT": "\n".join(_asset(name) for name in SCRIPTS)}
    return _MARKER.sub(lambda m: parts[m.group(1)], _asset("page.html"))  # one pass: data never re-read


def embed_shown(data):
    """``embed(data)`` with control characters, bidirectional overrides and line breaks in its text
    written as escapes (``report.format.visible``), tabs kept in the code listings. The usual data
    has none: one search of its JSON, no walk."""
    text = embed(data)
    if not _MAYBE_INVISIBLE.search(text):
        return text
    return embed({key: _visible(value, "\t" if key == "code" else "") for key, value in data.items()})


def _visible(value, keep):
    if isinstance(value, str):
        return visible(value, keep)
    if isinstance(value, dict):
        return {key: _visible(item, keep) for key, item in value.items()}
    if isinstance(value, list):
        return [_visible(item, keep) for item in value]
    return value


def embed(data):
    """JSON that is inert inside a script element: ASCII only, no ``<``, ``>`` or ``&``."""
    text = json.dumps(data, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    return re.sub(r"[<>&]", lambda m: _JSON_ESCAPES[m.group(0)], text)


def _asset(name):
    text = (resources.files("adtrace.view") / "assets" / name).read_text(encoding="utf-8")
    if name.endswith(".js") and "</script" in text.lower():
        raise ValueError(f"{name} would end its script element")
    return text

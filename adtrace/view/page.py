"""The page: the viewer's data and assets as one self-contained HTML file.

No request leaves the page (its Content-Security-Policy allows no source but itself) and it works
from ``file://`` offline. The data goes into a ``<script type="application/json">`` element with
``<``, ``>`` and ``&`` written as JSON escapes, so no label or value can end the element or become
markup; the scripts put text on the page through ``textContent`` only. The same data gives the
same bytes.

The graph is laid out by the page's own layered layout (``assets/layout.js``), not a library:
the candidate, @dagrejs/dagre (the layout Mermaid uses for the reports' flowcharts), adds 49 KB to
every page and is quadratic in practice on autograd's long chains (about a second for 1,000
nodes; it exhausts the call stack before 4,000), while autograd's graphs arrive with a
topological order (creation order) that makes a layered layout a few linear passes.
"""

import html
import json
import re
from importlib import resources

SCRIPTS = ("layout.js", "viewer.js", "graph.js", "panels.js", "controls.js")
_MARKER = re.compile(r"@@(TITLE|STYLE|DATA|SCRIPT)@@")
_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"}


def render_page(data):
    """The HTML page for ``data`` (``adtrace.view.data.page_data``)."""
    parts = {"TITLE": html.escape(data["title"]), "STYLE": _asset("viewer.css"), "DATA": embed(data),
             "SCRIPT": "\n".join(_asset(name) for name in SCRIPTS)}
    return _MARKER.sub(lambda m: parts[m.group(1)], _asset("page.html"))  # one pass: data never re-read


def embed(data):
    """JSON that is inert inside a script element: ASCII only, no ``<``, ``>`` or ``&``."""
    text = json.dumps(data, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    return re.sub(r"[<>&]", lambda m: _JSON_ESCAPES[m.group(0)], text)


def _asset(name):
    text = resources.files("adtrace.view").joinpath("assets", name).read_text(encoding="utf-8")
    if name.endswith(".js") and "</script" in text.lower():
        raise ValueError(f"{name} would end its script element")
    return text

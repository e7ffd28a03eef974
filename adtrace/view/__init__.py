"""The step-through viewer: one self-contained HTML page that plays a backward pass (or a forward
one) statement by statement, with the graph, autograd's source, the lecture's pseudocode and the
state after each statement.

``page_data`` turns a ``Recording`` (or a ``TracedCall``) into the page's JSON data; ``render_page``
turns that data into HTML. ``Recording.to_html``, ``adtrace view`` and ``adtrace report --html``
use them.
"""

import html

from ..report.files import write_file
from .data import page_data
from .page import render_page

__all__ = ["page_data", "render_page", "recording_page", "call_page", "inline_frame", "write_recording_page",
           "inline_recording_page"]


def recording_page(recording, title=None):
    """The page of a ``Recording`` alone (autograd's side; no reference engine)."""
    return render_page(page_data(recording, title=title))


def call_page(call, title=None):
    """The page of a ``TracedCall``: its recordings, the reference engine's runs, the checks."""
    return render_page(page_data(call=call, title=title))


def inline_frame(page, height=640):
    """The page in an ``<iframe srcdoc>`` (Jupyter's ``_repr_html_``): scripts run in the frame
    only, and the notebook's own keys and styles are left alone."""
    return (f'<iframe srcdoc="{html.escape(page, quote=True)}" sandbox="allow-scripts" '
            f'style="width: 100%; height: {height}px; border: 1px solid #ddd"></iframe>')


def write_recording_page(recording, path=None, title=None):
    """The page of a ``Recording`` (``Recording.to_html``), written to ``path`` if given."""
    page = recording_page(recording, title=title)
    if path is not None:
        write_file(path, page)
    return page


def inline_recording_page(recording):
    """The page of a ``Recording`` in its frame (``Recording._repr_html_``)."""
    return inline_frame(recording_page(recording))

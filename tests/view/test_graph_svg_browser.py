"""The SVG export opened in headless Chromium as a file: it fetches nothing, and each node's text,
measured as the browser draws it, stays inside the node's box."""

import autograd.numpy as anp
import pytest
from autograd import grad

import adtrace
from browser import chromium_for_tests, stop_chromium

MEASURE = """
const out = [];
for (const g of document.querySelectorAll("g.node")) {
  const r = g.querySelector("rect").getBBox();
  for (const t of g.querySelectorAll("text")) {
    const b = t.getBBox();
    out.push([g.id, t.textContent, b.x >= r.x && b.x + b.width <= r.x + r.width
              && b.y >= r.y && b.y + b.height <= r.y + r.height]);
  }
}
return {texts: out, fetched: performance.getEntriesByType("resource").length,
        scripts: document.getElementsByTagName("script").length};
"""


@pytest.fixture(scope="module")
def chromium():
    driver = chromium_for_tests()
    yield driver
    stop_chromium(driver)


def f(x, w):
    y = x
    for k in range(3):
        y = anp.tanh(y * w[k]) + 0.1 * x  # array values: long lines of text in the boxes
    return anp.sum(y ** 2)


def test_the_svg_draws_offline_with_every_text_inside_its_box(chromium, tmp_path):
    with adtrace.record(sites=True) as rec:
        grad(f)(anp.array([0.5, -1.0, 2.0]), anp.array([0.3, 0.7, 1.1]))
    path = tmp_path / "graph.svg"
    rec.graph_svg(path=path)
    chromium.get(path.as_uri())
    found = chromium.execute_script(MEASURE)
    assert found["fetched"] == 0 and found["scripts"] == 0
    assert len(found["texts"]) == 4 * len(rec.nodes) - 1  # (the root has no line of the user's code)
    assert [(node, text) for node, text, inside in found["texts"] if not inside] == []

"""The diff's side-by-side page in headless Chromium: both passes' graphs, the first divergence ringed
on the right node of each side, one step control moving both to aligned steps. Skipped without a
browser, except under ADTRACE_REQUIRE_BROWSER=1 (CI)."""

import autograd.numpy as anp
import pytest
from autograd.extend import defvjp, primitive

from adtrace.diff import diff
from adtrace.diff.calls import record_call
from adtrace.diff.divergence import LOCAL_RULE
from adtrace.view.diffed import diff_page
from browser import Page, chromium_for_tests, stop_chromium


def scaled(factor):
    """``x * y`` whose VJP for ``y`` is ``factor`` times right; every one is the primitive ``scaled``."""
    @primitive
    def scaled(x, y):
        return x * y

    defvjp(scaled, lambda ans, x, y: lambda g: g * y, lambda ans, x, y: lambda g: factor * g * x)
    return scaled


def composite(product):
    def f(x):
        a = anp.sin(x) * 2.0
        b = product(a, anp.cos(x))
        return anp.tanh(b) + a * x
    return f


@pytest.fixture(scope="module")
def chromium():
    driver = chromium_for_tests()
    yield driver
    stop_chromium(driver)


def frame_state(driver, side):
    """(step counter, current nodes, the ringed nodes, how many nodes drawn) of one side's frame."""
    driver.switch_to.frame(driver.find_element("css selector", f'[data-testid="side-{side}"]'))
    try:
        page = Page.attach(driver)
        ringed = driver.execute_script("return Array.from(document.querySelectorAll('svg g[data-divergence]'))"
                                       ".map(e => e.getAttribute('data-node'))")
        drawn = driver.execute_script("return document.querySelectorAll('svg g[data-node]').length")
        return page.counter(), page.current_nodes(), ringed, drawn
    finally:
        driver.switch_to.default_content()


def test_both_passes_step_together_and_the_first_divergence_is_ringed_on_each_side(chromium, tmp_path):
    d = diff(record_call(composite(scaled(1.0)), (0.7,)), record_call(composite(scaled(1.5)), (0.7,)))
    assert d.first.kind == LOCAL_RULE and d.first.a.primitive == "scaled"
    path = tmp_path / "diff.html"
    path.write_text(diff_page(d))
    page = Page(chromium, path)
    a, b = frame_state(chromium, "a"), frame_state(chromium, "b")
    assert a[3] == len(d.a.nodes) and b[3] == len(d.b.nodes)  # both graphs drawn
    assert a[2] == [d.first.a.node] and b[2] == [d.first.b.node]
    total = len(d.a.visits) + 1
    assert page.counter() == f"step 1 of {total}"
    seen = []
    for j in range(1, total):
        page.click("next")
        page.wait(lambda: page.counter() == f"step {j + 1} of {total}")
        label = d.a.visits[j - 1]
        page.wait(lambda: frame_state(chromium, "a")[1] == [label])
        page.wait(lambda: frame_state(chromium, "b")[1] == [d.alignment.a_to_b[label]])
        seen.append(frame_state(chromium, "a")[0])
    assert len(set(seen)) == total - 1  # each step moved A's pass on (and B's with it, above)
    page.click("first")
    page.click("jump-first-divergence")
    page.wait(lambda: frame_state(chromium, "a")[1] == [d.first.a.node])
    assert frame_state(chromium, "b")[1] == [d.first.b.node]
    assert page.console_errors() == [] and page.requests() == []

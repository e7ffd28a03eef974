"""The step-through page in headless Chromium, driven through its data-testid contract: stepping
with buttons, keys and the URL fragment reproduces the Markdown report's state snapshot rows.

Skipped without a browser, except under ADTRACE_REQUIRE_BROWSER=1 (CI), where that fails."""

from pathlib import Path

import autograd.numpy as anp
import pytest
from autograd import grad

import adtrace
from adtrace.report import render, render_recording
from adtrace.compare.traced_call import trace_call
from adtrace.view import call_page, page_data, render_page
from browser import Page, chromium_for_tests, stop_chromium
from seed import SNAPSHOT_ROWS, square
from view_cases import (HOSTILE, autograd_node_made_before, buggy_twice, chain_of_22, dict_text, fan_out,
                        first_derivative, long_values,
                        forward_tangents, hostile_primitive, jacobian_recording, micrograd_leaves_made_before,
                        nested_recording, replay, snapshot_rows, sum_and_sine, wrong_rule_call)

REPO = Path(__file__).resolve().parents[2]
LOOP_ITERATIONS = 1333  # 1 + 3 * 1333 = 4,000 nodes


@pytest.fixture(scope="module")
def chromium():
    driver = chromium_for_tests()
    yield driver
    stop_chromium(driver)


@pytest.fixture
def open_page(chromium, tmp_path):
    """Write a page and open it; afterwards, the page must have logged no error and fetched nothing."""
    opened = []

    def open_(text, fragment=""):
        path = tmp_path / f"page{len(opened)}.html"
        path.write_text(text)
        opened.append(Page(chromium, path, fragment))
        return opened[-1]

    yield open_
    for page in opened[-1:]:  # the log covers every page opened in this test
        assert page.console_errors() == []
        assert page.requests() == []


def assert_row(page, row):
    statement, node, after = row
    assert page.text("statement") == statement
    assert dict_text(page.entries()) == after
    assert page.current_nodes() == ([] if node is None else [node])


def test_the_seed_function_steps_through_the_reports_eleven_rows(open_page):
    call = trace_call(square, (3.0,))
    rows = snapshot_rows(render(call))[1]
    page = open_page(call_page(call))
    n = len(rows)
    assert n == SNAPSHOT_ROWS
    for k, row in enumerate(rows, 1):
        assert page.counter() == f"step {k} of {n}"
        assert_row(page, row)
        page.click("next")
    assert page.counter() == f"step {n} of {n}"  # next stops at the last step
    for k in range(n, 0, -1):
        assert page.counter() == f"step {k} of {n}"
        assert_row(page, rows[k - 1])
        page.click("prev")
    assert page.entries("node-to-grad") == [["v1_multiply", "[1]"]]


def test_keys_step_a_fan_out_function(open_page):
    call = trace_call(fan_out, (0.7,))
    rows = snapshot_rows(render(call))[1]
    page = open_page(call_page(call))
    for row in rows:
        assert_row(page, row)
        page.key("ARROW_RIGHT")
    page.key("HOME")
    assert page.counter() == f"step 1 of {len(rows)}"
    page.key("END")
    assert page.counter() == f"step {len(rows)} of {len(rows)}"
    assert_row(page, rows[-1])
    page.key("ARROW_LEFT")
    assert_row(page, rows[-2])


def test_an_engine_of_micrographs_shape_steps_through_its_own_backward(open_page):
    """The classic bug (``a + a`` through a class whose ``__add__`` backward assigns): each step is
    the report's row, the class's own statement is lit in its own source, the lecture's list
    [1, 1] stands beside the engine's .grad of 1, and visited values stay in the .grad panel."""
    call = buggy_twice()
    rows = snapshot_rows(render(call))[1]
    page = open_page(call_page(call))
    assert page.text("autograd-name").startswith("BuggyValue.backward (tests/value_classes.py:")
    assert page.text("state-name") == ".grad of each value written (the engine)"
    assert page.text("waiting-name") == "has a .grad, not visited yet"
    for k, row in enumerate(rows, 1):
        assert page.counter() == f"step {k} of {len(rows)}"
        assert_row(page, row)
        assert page.text("statement") in lit_line(page)
        page.click("next")
    assert page.entries() == [["v1_add", "1"], ["v0_leaf", "1"]]
    assert page.entries("node-to-grad") == [["v1_add", "[1], summed: 1"], ["v0_leaf", "[1, 1], summed: 2"]]
    page.key("HOME")
    for _ in range(4):
        page.key("ARROW_RIGHT")
    assert "replaced: the previous value is lost" in page.text("details")
    assert page.current_nodes() == ["v1_add"]


def lit_line(page):
    return page.driver.execute_script(
        "return document.querySelector('[data-testid=autograd-source] .line.hl').textContent")


def test_the_graph_pans_and_zooms(open_page):
    from selenium.webdriver.common.action_chains import ActionChains

    page = open_page(call_page(trace_call(fan_out, (0.7,))))
    svg = page.find("graph")
    view = lambda: [float(v) for v in svg.get_dom_attribute("viewBox").split()]  # noqa: E731
    before = view()
    page.driver.execute_script(
        "const r = arguments[0].getBoundingClientRect(); arguments[0].dispatchEvent(new WheelEvent('wheel',"
        " {deltaY: 400, clientX: r.left + r.width / 2, clientY: r.top + r.height / 2, cancelable: true}))", svg)
    zoomed = view()
    assert zoomed[2] > before[2] * 1.5 and zoomed[3] > before[3] * 1.5  # zoomed out around the pointer
    ActionChains(page.driver).move_to_element(svg).click_and_hold().move_by_offset(120, 0).release().perform()
    assert view()[0] < zoomed[0] and view()[2:] == zoomed[2:]  # dragged right: the view moved left
    page.click("fit")
    assert view() == before


def test_each_pass_keeps_its_own_view(open_page):
    page = open_page(jacobian_recording().to_html())
    svg = page.find("graph")
    wheel = ("const r = arguments[0].getBoundingClientRect(); arguments[0].dispatchEvent(new WheelEvent('wheel',"
             " {deltaY: arguments[1], clientX: r.left + 10, clientY: r.top + 10, cancelable: true}))")
    page.driver.execute_script(wheel, svg, -300)
    zoomed = svg.get_dom_attribute("viewBox")
    page.select_pass("q2")
    page.driver.execute_script(wheel, svg, 500)  # moves q2's view only
    page.select_pass("q1")
    assert svg.get_dom_attribute("viewBox") == zoomed


def test_the_url_fragment_opens_a_step(open_page):
    call = trace_call(square, (3.0,))
    page = open_page(call_page(call), "#query=q1&step=6")
    assert page.counter() == "step 6 of 11" and page.entries() == [["v0_root", "(6,True)"]]
    assert page.driver.execute_script("return location.hash") == "#query=q1&step=6"
    page.click("next")
    assert page.driver.execute_script("return location.hash") == "#query=q1&step=7"
    page.driver.execute_script("location.hash = '#query=q1&step=3'")
    page.wait(lambda: page.counter() == "step 3 of 11")
    assert page.entries() == []


def step_through_every_query(page, rows):
    options = page.driver.execute_script(
        "return Array.from(document.querySelectorAll('[data-testid=query] option')).map(o => o.value)")
    assert sorted(options) == sorted(f"q{q}" for q in rows)
    for query, query_rows in rows.items():
        page.select_pass(f"q{query}")
        for row in query_rows:
            assert_row(page, row)
            page.key("ARROW_RIGHT")  # the select gave the keys back


def test_a_jacobian_has_one_selectable_query_per_output_row(open_page):
    rec = jacobian_recording()
    rows = snapshot_rows(render_recording(rec))
    assert len(rows) == 2
    step_through_every_query(open_page(rec.to_html()), rows)


def test_grad_of_grad_has_each_levels_pass(open_page):
    call = trace_call(first_derivative, (2.0,), capture="full")
    rows = snapshot_rows(render(call))
    page = open_page(call_page(call))
    levels = page.driver.execute_script(
        "return Array.from(document.querySelectorAll('[data-testid=query] optgroup')).map(g => g.label)")
    assert sorted(levels) == ["level 0", "level 1"]
    assert page.find("query").get_attribute("value") == "q2"  # the outer pass opens first
    step_through_every_query(page, rows)


def test_forward_mode_shows_the_tangents_node_by_node(open_page):
    call = trace_call(sum_and_sine, (3.0,), mode="both")
    tangents = forward_tangents(render(call))
    page = open_page(call_page(call), "#query=f1&step=1")
    seen = {}
    for _ in range(9):
        if page.text("statement").startswith("JVPNode("):
            node = page.text("current-node")
            seen[node] = dict(page.entries())[node]
            assert page.current_nodes() == [node]
        page.click("next")
    assert seen == {k: v for k, v in tangents.items() if k != "v0_root"}
    assert dict(page.entries()) == tangents and dict(page.entries("node-to-grad")) == tangents


def test_a_primitive_named_as_markup_is_shown_as_text(open_page):
    double = hostile_primitive(HOSTILE)
    with adtrace.record() as rec:
        grad(lambda x: double(x) * x)(3.0)
    page = open_page(rec.to_html(title=HOSTILE))
    shown = page.driver.execute_script(
        "return Array.from(document.querySelectorAll('svg .node text.primitive')).map(t => t.textContent)")
    assert any(text.startswith("<img src=x") for text in shown)
    assert page.text("title") == HOSTILE
    assert page.driver.execute_script("return document.querySelectorAll('img').length") == 0
    page.key("END")  # an alert would fail every later call with "unexpected alert open"
    assert page.counter().startswith("step ")


def test_nodes_made_before_the_recording_are_drawn_unrecorded(open_page):
    """A recorded node's parents made before the recording and never walked (the page once raised
    KeyError): the page opens; a node made before it and walked is drawn as unrecorded."""
    rec = micrograd_leaves_made_before()
    page = open_page(rec.to_html())
    page.key("END")
    count = len(page_data(rec)["passes"][0]["steps"]["statement"])
    assert page.counter() == f"step {count} of {count}"  # (c * 4).backward(), c made before the recording
    drawn = page.driver.execute_script(
        "return Array.from(document.querySelectorAll('svg [data-node]')).map(n => [n.getAttribute('data-node'),"
        " n.querySelector('text.primitive').textContent])")
    assert sorted(drawn) == [["u2_unrecorded", "(unrecorded)"], ["v1_leaf", "(leaf)"], ["v2_mul", "*"]]
    page = open_page(autograd_node_made_before().to_html())
    assert page.counter() == "step 0 of 0" and "No backward pass ran" in page.text("notes")


def test_a_page_of_values_whose_gradients_were_never_computed_says_so_in_one_visible_line(open_page):
    """draw_dot before backward(): the page of a learner's values with no pass shows one note saying no
    gradient was computed (what the report says), on screen, not only in the page's data."""
    from learner_passes import Value

    with adtrace.record(engine=Value) as rec:
        x = Value(2.0)
        x * x + x
    page = open_page(rec.to_html())
    notes = page.driver.find_elements("css selector", "[data-testid=notes] li")
    said = [n.text for n in notes if n.is_displayed()]
    assert page.counter() == "step 0 of 0" and len(said) == 1
    assert said[0].startswith("No backward pass ran: no value's gradient was computed. The .grad of each of the 3 "
                              "values is what __init__ set (0)")


def test_a_nested_pass_is_entered_from_its_node_and_left_again(open_page):
    rec = nested_recording()
    page = open_page(rec.to_html())
    assert page.find("query").get_attribute("value") == "q1"
    while not page.driver.find_elements(page.by.CSS_SELECTOR, '[data-testid="enter-nested"]'):
        page.click("next")
    assert page.text("current-node") == "v1_inner_grad_rule"  # offered from the node's first step
    assert "this node's VJP ran 1 nested pass: " in page.text("nested")
    page.click("enter-nested")
    assert page.find("query").get_attribute("value") == "q2" and page.counter().startswith("step 1 of ")
    assert "run by the VJP of v1_inner_grad_rule" in page.text("nesting")
    page.click("leave-nested")  # back in the outer pass, at the VJP that ran it
    assert page.find("query").get_attribute("value") == "q1"
    assert page.text("statement") == "ingrads = node.vjp(outgrad[0])"
    assert page.text("current-node") == "v1_inner_grad_rule"


def test_a_failing_check_is_read_first_its_node_marked_and_its_step_a_click_away(open_page):
    """Issue 29: a wrong custom rule (the engines agree, finite differences fail): the summary opens on
    the failures, the first line read names them, the node is ringed on the graph and a control goes
    to the step of its VJP."""
    page = open_page(call_page(wrong_rule_call()))
    assert page.find("summary-box").get_property("open")
    assert page.text("summary-title") == "2 checks failed: central finite differences, per-node local rules"
    first = page.driver.execute_script(  # the first list item inside the summary, in document order
        "return document.querySelector('[data-testid=summary-box] li').textContent")
    assert first.startswith("FAIL: central finite differences, at node v1_double_wrongly")
    ringed = page.driver.execute_script(
        "return Array.from(document.querySelectorAll('svg [data-failing]')).map(e => e.getAttribute('data-node'))")
    assert ringed == ["v1_double_wrongly"]
    assert page.counter() == "step 1 of 19"
    page.click("failure-jump")
    assert page.counter() == "step 13 of 19" and page.text("current-node") == "v1_double_wrongly"
    assert page.text("statement") == "ingrads = node.vjp(outgrad[0])"
    page = open_page(call_page(trace_call(fan_out, (0.7,))))  # nothing fails: closed, as it was
    assert not page.find("summary-box").get_property("open") and page.text("summary-title") == "summary and checks"
    assert not page.driver.find_elements(page.by.CSS_SELECTOR, "svg [data-failing]")


SMALLEST_TEXT = ("return Math.min(...Array.from(document.querySelectorAll('svg text'))"
                 ".map(t => t.getScreenCTM().a * parseFloat(getComputedStyle(t).fontSize)))")
OUT_OF_SIGHT = """const svg = document.querySelector('[data-testid=graph]').getBoundingClientRect();
const viewer = adtrace.viewer, steps = viewer.pass.steps, k = viewer.k;
return [steps.node[k], steps.parent[k]].filter(n => n !== null).map(n => viewer.labels[n]).filter(label => {
  const r = document.querySelector(`svg [data-node="${label}"]`).getBoundingClientRect();
  return r.left < svg.left || r.right > svg.right || r.top < svg.top || r.bottom > svg.bottom; });"""


ALL_IN_SIGHT = """const svg = document.querySelector('[data-testid=graph]').getBoundingClientRect();
return [...document.querySelectorAll('svg [data-node]')].every(node => { const r = node.getBoundingClientRect();
  return r.left >= svg.left && r.right <= svg.right && r.top >= svg.top && r.bottom <= svg.bottom; });"""


def test_labels_are_at_least_11_px_at_the_default_fit(open_page):
    """Issue 29: at 22 nodes (taller than the page) the fit made labels about 7 px high; the default fit
    keeps every text of the graph at least 11 px, and shows the graph in part; "fit" does the same, and
    "whole graph" shows all of it."""
    page = open_page(call_page(trace_call(chain_of_22, (0.3,))))
    assert len(page.driver.find_elements(page.by.CSS_SELECTOR, "svg [data-node]")) == 22
    assert page.driver.execute_script(SMALLEST_TEXT) >= 11
    page.key("END")
    page.click("fit")
    assert page.driver.execute_script(SMALLEST_TEXT) >= 11
    page.click("whole")  # the whole graph in sight, its labels smaller
    assert page.driver.execute_script(ALL_IN_SIGHT) and page.driver.execute_script(SMALLEST_TEXT) < 11


def test_auto_pan_keeps_the_current_node_and_the_node_added_into_in_sight(open_page):
    """Issue 29: at every step the boxes of the current node and of the node being added into lie
    inside the graph's viewport (they were half off-screen: 4 of 98 steps here)."""
    page = open_page(call_page(trace_call(chain_of_22, (0.3,))))
    count = int(page.counter().split()[-1])
    out = []
    for k in range(count):
        out += [(k + 1, label) for label in page.driver.execute_script(OUT_OF_SIGHT)]
        page.key("ARROW_RIGHT")
    assert count == 98 and out == []
    assert page.driver.execute_script(SMALLEST_TEXT) >= 11  # near again: back to the chosen scale


def test_long_values_wrap_cut_to_three_lines_whole_on_hover_and_click_and_no_panel_scrolls_sideways(open_page):
    """Issue 29: values wider than their panel forced horizontal scrollbars at 1400x900; an entry wraps,
    cut to three lines, its whole text in its tooltip, shown whole on a click."""
    from selenium.webdriver.common.action_chains import ActionChains

    page = open_page(call_page(trace_call(long_values, (anp.linspace(0.1, 1.2, 12),))))
    assert page.driver.execute_script("return [innerWidth, innerHeight]")[0] == 1400
    sideways = ("return Array.from(document.querySelectorAll('body *')).filter(e => e.scrollWidth > e.clientWidth + 1"
                " && ['auto', 'scroll'].includes(getComputedStyle(e).overflowX)).map(e => e.className || e.tagName)"
                ".concat(document.documentElement.scrollWidth > innerWidth ? ['the page'] : [])")
    page.key("END")
    assert page.driver.execute_script(sideways) == []
    entry = page.driver.execute_script(
        "return document.querySelector('[data-testid=node-to-grad] [data-node=v0_root]').parentElement")
    whole = entry.get_property("textContent")
    assert entry.get_property("scrollHeight") > entry.get_property("clientHeight")  # cut
    ActionChains(page.driver).move_to_element(entry).perform()
    assert entry.get_attribute("title") == whole and whole.startswith("v0_root: [array (12,)")
    entry.click()
    assert entry.get_property("scrollHeight") <= entry.get_property("clientHeight") + 1  # whole
    assert page.driver.execute_script(sideways) == []


def test_a_group_of_one_node_says_1_node(open_page):
    """Issue 29: "1 nodes" on a group."""
    with adtrace.record(sites=True) as rec:
        grad(loop)(0.3)
    page = open_page(rec.to_html())
    counts = page.driver.execute_script(
        "return Array.from(document.querySelectorAll('svg [data-group] text.primitive')).map(t => t.textContent)")
    assert "1 node" in counts and all(c == "1 node" or c.endswith(" nodes") and c != "1 nodes" for c in counts)


def loop(x):
    y = x
    for _ in range(LOOP_ITERATIONS):
        s = anp.sin(y)
        y = s * 0.5 + y
    return y


def test_a_4000_node_graph_opens_collapsed_and_reaches_its_last_step(open_page):
    """(How fast is the benchmarks' concern, never a timed assertion here: this machine is shared.)"""
    with adtrace.record(sites=True) as rec:
        grad(loop)(0.3)
    assert len(rec.nodes) == 4000
    page = open_page(rec.to_html())
    assert "(input): 1 node " in page.driver.execute_script(
        "return Array.from(document.querySelectorAll('svg [data-group] title')).map(t => t.textContent).join(' ')")
    page.key("END")
    count = page.counter().split()[-1]
    page.wait(lambda: page.counter() == f"step {count} of {count}")
    groups = page.driver.find_elements(page.by.CSS_SELECTOR, "svg [data-group]")
    assert 2 <= len(groups) <= 4
    for _ in range(5):
        page.key("ARROW_LEFT")
    current = page.text("current-node")
    assert page.current_nodes() == [current]  # drawn as a node inside the collapsed overview, with its neighbours
    consumers = {label for label, node in rec.nodes.items() if current in getattr(node, "parents", ())}
    assert consumers and set(rec.nodes[current].parents) | consumers <= set(drawn_nodes(page))
    key = next(g for g in drawn_groups(page) if g.endswith(f":{loop_line('s =')}"))  # the line's group
    assert "1,333 iterations, 1,333 nodes" in page.driver.execute_script(
        "return Array.from(document.querySelectorAll('svg [data-group]')).find(e => e.getAttribute('data-group') "
        "=== arguments[0]).textContent", key)
    shown = 1
    for opened, boxes in ((key, 32), (f"{key} iterations 1-42 of 1,333", 21), (f"{key} iterations 21-22 of 1,333", 2)):
        click_group(page, opened)  # one level at a time: at most 32 boxes each
        shown += boxes - 1
        assert len([g for g in drawn_groups(page) if g.startswith(key)]) == shown
    click_group(page, f"{key} iteration 21 of 1,333")
    assert "v61_sin" in drawn_nodes(page)
    before = drawn_nodes(page)
    page.click("expand-all")  # refused: 4,000 nodes are more than the layout draws cleanly
    assert "4,000 nodes: too many to draw expanded" in page.text("graph-message")
    assert drawn_nodes(page) == before


def drawn_nodes(page):
    return page.driver.execute_script(
        "return Array.from(document.querySelectorAll('svg [data-node]')).map(e => e.getAttribute('data-node'))")


def drawn_groups(page):
    return page.driver.execute_script(
        "return Array.from(document.querySelectorAll('svg [data-group]')).map(e => e.getAttribute('data-group'))")


def click_group(page, key):
    page.driver.execute_script(
        "Array.from(document.querySelectorAll('svg [data-group]')).find(e => e.getAttribute('data-group')"
        "=== arguments[0]).dispatchEvent(new MouseEvent('click'))", key)


def loop_line(text):
    import inspect

    lines, first = inspect.getsourcelines(loop)
    return first + next(i for i, line in enumerate(lines) if line.strip().startswith(text))


@pytest.mark.parametrize("name", sorted(p.stem for p in (REPO / "reports").glob("*.html")))
def test_every_committed_page_plays_to_its_end(chromium, name):
    page = Page(chromium, REPO / "reports" / f"{name}.html")
    passes = page.driver.execute_script("return adtrace.DATA.passes.map(p => p.id)")
    for pass_id in passes:
        page.driver.execute_script("adtrace.viewer.open(arguments[0], 0)", pass_id)
        page.key("END")
        count = page.driver.execute_script(
            "return adtrace.DATA.passes.find(p => p.id === arguments[0]).steps.node.length", pass_id)
        page.wait(lambda: page.counter() == f"step {count} of {count}")
    if not passes:
        assert page.counter() == "step 0 of 0" and "No backward pass ran" in page.text("notes")
    assert page.console_errors() == [] and page.requests() == []


def test_the_jupyter_frame_plays(chromium, tmp_path):
    """``Recording._repr_html_``: the page in a sandboxed iframe, as a notebook shows it."""
    with adtrace.record() as rec:
        grad(square)(3.0)
    path = tmp_path / "notebook.html"
    path.write_text(f"<!DOCTYPE html><html><body><p>a notebook</p>{rec._repr_html_()}</body></html>")
    chromium.get(path.as_uri())
    frame = chromium.find_element(Page.by_css, "iframe")
    chromium.switch_to.frame(frame)
    try:
        page = Page.attach(chromium)
        page.click("next")
        page.click("next")
        assert page.counter() == "step 3 of 11" and page.entries() == []
    finally:
        chromium.switch_to.default_content()
    assert [e for e in chromium.get_log("browser") if e["level"] == "SEVERE"] == []


def frames_drawn(driver):
    """For each iframe of the page: its graph has a size and every node of it lies inside it (fitted)."""
    drawn = []
    for frame in driver.find_elements(Page.by_css, "iframe"):
        driver.switch_to.frame(frame)
        try:
            drawn.append(driver.execute_script(
                "const svg = document.querySelector('[data-testid=graph]'); const box = svg.getBoundingClientRect();"
                "const nodes = Array.from(svg.querySelectorAll('[data-node]')).map((n) => n.getBoundingClientRect());"
                "const view = svg.viewBox.baseVal;"  # (0 0 0 0: nothing drawn, though each node still has a box)
                "return box.width > 0 && view.width > 0 && view.height > 0 && nodes.length > 0"
                " && nodes.every((n) => n.width > 0 && n.left >= box.left && n.right <= box.right"
                " && n.top >= box.top && n.bottom <= box.bottom)"))
        finally:
            driver.switch_to.default_content()
    return drawn


def fit_clicked(driver):
    """The first frame's viewBox, and the one its "fit" control makes."""
    driver.switch_to.frame(driver.find_element(Page.by_css, "iframe"))
    try:
        page = Page.attach(driver)
        view = page.find("graph").get_dom_attribute("viewBox")
        page.click("fit")
        return view, page.find("graph").get_dom_attribute("viewBox")
    finally:
        driver.switch_to.default_content()


def wait_drawn(driver, frames, timeout=10):
    from selenium.webdriver.support.ui import WebDriverWait
    from selenium.common.exceptions import TimeoutException

    try:
        WebDriverWait(driver, timeout, poll_frequency=0.05).until(lambda d: frames_drawn(d) == [True] * frames)
    except TimeoutException:
        return False
    return True


def test_the_jupyter_frame_is_drawn_and_fitted_whenever_it_gets_a_size(chromium, tmp_path):
    """Issue 29: the graph was fitted once, before a notebook's frame had a size (a 0 0 0 0 viewBox in 13
    of 20 loads): it is fitted whenever its frame gets or changes size: one frame loaded 20 times, two
    frames on one page, a hidden tab shown later, a frame made narrower."""
    with adtrace.record() as rec:
        grad(square)(3.0)
    frame = rec._repr_html_()
    pages = {
        "one": (f"<p>a notebook</p>{frame}", 1, 20),
        "two": (f"{frame}<p>between</p>{frame}", 2, 5),
        "hidden": (f"<div id=tab style='display:none'>{frame}</div>", 1, 5),
    }
    drawn = {}
    for name, (body, frames, loads) in pages.items():
        path = tmp_path / f"{name}.html"
        path.write_text(f"<!DOCTYPE html><html><body>{body}</body></html>")
        drawn[name] = 0
        for _ in range(loads):
            chromium.get(path.as_uri())
            if name == "hidden":
                assert not wait_drawn(chromium, frames, timeout=0.5)  # (hidden: nothing to fit yet)
                chromium.execute_script("document.getElementById('tab').style.display = 'block'")
            drawn[name] += wait_drawn(chromium, frames)
    assert drawn == {"one": 20, "two": 5, "hidden": 5}
    chromium.execute_script("const f = document.querySelector('iframe'); f.style.width = '300px';"
                            " f.style.height = '260px'")
    assert wait_drawn(chromium, 1)
    view, refitted = fit_clicked(chromium)
    assert view == refitted  # fitted again into the narrower frame, not only shrunk with it
    assert [e for e in chromium.get_log("browser") if e["level"] == "SEVERE"] == []



def feeding_every_iteration(x):
    y = x
    for _ in range(50):
        y = anp.sin(y) * y + x  # x waits in outgrads while each iteration's nodes are popped
    return y


# what a user sees of a step: the counter, both dict panels in their order, the graph's classes
SEEN = """const panel = (id) => Array.from(document.querySelectorAll(`[data-testid='${id}'] [data-node]`))
  .map((e) => e.getAttribute('data-node') + ' = ' + e.textContent);
const seen = () => [document.querySelector('[data-testid=step-counter]').textContent, panel('outgrads'),
  panel('node-to-grad'), document.querySelector('[data-testid=statement]').textContent,
  Array.from(document.querySelectorAll('svg [data-node], svg [data-group]')).map((e) => e.getAttribute('class'))];
const viewer = adtrace.viewer;
const wanted = arguments[0];
const found = [];
const look = (k) => (found[k] = seen());
"""


def test_a_step_reached_by_jumping_shows_what_stepping_to_it_shows(open_page):
    """Any step is reached from stored states: jumping there (from far away, or a few steps off) shows the
    same panels and graph as stepping forward to it from the first step, or back from the last."""
    page = open_page(call_page(trace_call(feeding_every_iteration, (0.3,))))
    page.click("expand-all")  # (every node's class compared; no drawing anew as the neighbourhood moves)
    count = page.driver.execute_script("return adtrace.viewer.count")
    assert count > 2 * 256  # several stored states apart
    page.driver.set_script_timeout(300)  # (every step looked at, on a shared machine)
    every = list(range(count))  # (an entry put back in the wrong place may be gone a step later)
    forward = page.driver.execute_script(SEEN + "for (let k = 0; k < viewer.count; k++) { viewer.go(k); look(k); }"
                                         " return found;", every)
    backward = page.driver.execute_script(SEEN + "for (let k = viewer.count - 1; k >= 0; k--) { viewer.go(k); "
                                          "look(k); } return found;", every)
    assert len(forward) == count and forward[11][1] and forward[count - 41][1]  # autograd's dict is not empty there
    assert backward == forward
    wanted = sorted({*range(0, count, 7), 255, 256, 257, count - 1})
    far = page.driver.execute_script(SEEN + "for (const k of wanted) { viewer.go((k + viewer.count / 2) % "
                                     "viewer.count); viewer.go(k); look(k); } return found;", wanted)
    near = page.driver.execute_script(SEEN + "for (const k of wanted) { viewer.go(k + 40); viewer.go(k); look(k); "
                                      "viewer.go(k - 30); viewer.go(k); look(k); } return found;", wanted)
    assert all(far[k] == forward[k] and near[k] == forward[k] for k in wanted)


def many_entries(x):
    y = x
    for _ in range(100):  # 301 nodes: at its end, the lecture's dict has more entries than a panel draws
        y = anp.sin(y) * y + x  # x's entry, written first, is added to in every iteration
    return y


# per step looked at: each dict panel's rows drawn, its "more entries" line, and the label of the row marked
PANELS = """const panel = (id) => [
  Array.from(document.querySelectorAll(`[data-testid='${id}'] [data-node]`))
    .map((e) => [e.getAttribute('data-node'), e.textContent]),
  document.querySelector(`[data-testid='${id}-more']`).hidden ? ''
    : document.querySelector(`[data-testid='${id}-more']`).textContent,
  Array.from(document.querySelectorAll(`[data-testid='${id}'] .touched`)).map((e) => {
    const [row, panel] = [e.getBoundingClientRect(), e.parentNode.getBoundingClientRect()];
    const seen = row.top >= panel.top && row.bottom <= panel.bottom;  // scrolled into the panel's view
    return e.querySelector('[data-node]').getAttribute('data-node') + (seen ? '' : ' (out of sight)');
  })];
const viewer = adtrace.viewer;
return arguments[0].map((k) => { viewer.go(k); return [panel('outgrads'), panel('node-to-grad')]; });"""


def lecture_text(items, value):
    if not items:
        return value
    return f"[{', '.join(items)}]" + ("" if value is None else f", summed: {value}")


def test_a_dict_of_many_entries_draws_its_last_rows_the_marked_one_and_counts_the_others(open_page):
    """Item 3 of issue 29: a 100,000-entry dict drawn as rows took the page 33 s at its last step. A panel
    draws about 200 rows (the last, those changed since, the current node's, scrolled to); a line counts the others,
    with a filter."""
    call = trace_call(many_entries, (0.3,))
    data = page_data(call=call)
    page_pass = data["passes"][0]
    nodes = page_pass["steps"]["node"]
    parents = page_pass["steps"]["parent"]
    names = data["graphs"][page_pass["graph"]]["nodes"]["label"]
    states = [(dict(engine), {label: lecture_text(*entry) for label, entry in lecture.items()})
              for engine, lecture in replay(page_pass, names)]
    count = len(states)
    assert len(states[-1][1]) == 301
    page = open_page(render_page(data))
    page.driver.set_script_timeout(300)
    jumps = [k for far in range(count - 1, count // 2, -5) for k in (10, far)]
    wanted = [count - 1, *range(count - 2, count - 400, -1), count // 2, count - 1, count - 300, *range(count - 299,
              count), *jumps]  # stepped back, jumped, stepped forward, jumped from far
    seen = page.driver.execute_script(PANELS, wanted)
    capped = 0
    for k, panels in zip(wanted, seen):
        marked = parents[k] if parents[k] is not None else nodes[k]
        for full, (rows, more, touched) in zip(states[k], panels):
            order = list(full)
            assert all(full[label] == text for label, text in rows), k
            places = [order.index(label) for label, _ in rows]
            assert places == sorted(places), k  # in the dict's order
            hidden = len(full) - len(rows)
            assert more == ("" if not hidden else f"{hidden} more entr{'y' if hidden == 1 else 'ies'} not drawn "
                            "(a panel draws the last 200 and those the steps since changed) "), k
            assert touched == ([names[marked]] if names[marked] in full else []), k
            assert len(rows) == len(full) or 100 <= len(rows) <= 401, k
            capped += bool(hidden)
    assert capped > 100
    panel, _, _ = page.driver.execute_script(PANELS, [count - 1])[0][1]
    assert len(panel) >= 200 and len([label for label, _ in panel if "_sin" in label]) < 100
    page.driver.find_element(page.by.CSS_SELECTOR, "[data-testid=node-to-grad-filter]").send_keys("_sin")
    rows, more, _ = page.driver.execute_script(PANELS, [count - 1])[0][1]
    last = states[-1][1]
    assert rows == [[label, text] for label, text in last.items() if "_sin" in label] and len(rows) == 100
    assert more == '201 more entries not drawn (a panel draws the last 200 whose label has "_sin") '
    page.driver.find_element(page.by.CSS_SELECTOR, "[data-testid=node-to-grad-filter]").clear()
    page.driver.execute_script("document.querySelector('[data-testid=node-to-grad-filter]')"
                               ".dispatchEvent(new Event('input'))")
    assert page.driver.execute_script(PANELS, [count - 1])[0][1][0] == panel


def feeding_many_iterations(x):
    y = x
    for _ in range(199):  # 598 nodes: x's edges into every iteration span too many layers to route them all
        y = anp.sin(y) * y + x
    return y


# the nodes a drawn edge's path passes through (other than its two ends), sampled every 4 units of its length
CROSSINGS = """const boxes = new Map();
for (const g of document.querySelectorAll('svg g[data-node]')) {
  const [x, y] = /translate\\(([^ ]+) ([^)]+)\\)/.exec(g.getAttribute('transform')).slice(1).map(Number);
  const rect = g.querySelector('rect');
  const size = ['width', 'height'].map((name) => Number(rect.getAttribute(name)));
  boxes.set(g.getAttribute('data-node'), [x, y, ...size]);
}
const nodes = adtrace.viewer.graph.graph.nodes;
const crossings = [];
for (const edge of document.querySelectorAll('svg g.edge')) {
  const [child, position] = edge.getAttribute('data-edge').split(':').map(Number);
  const ends = [nodes.label[child], nodes.label[nodes.parents[child][position][1]]];
  const path = edge.querySelector('path');
  const length = path.getTotalLength();
  for (let d = 0; d <= length; d += 4) {
    const p = path.getPointAtLength(d);
    boxes.forEach(([x, y, w, h], label) => {
      if (!ends.includes(label) && p.x > x + 1 && p.x < x + w - 1 && p.y > y + 1 && p.y < y + h - 1) {
        crossings.push(ends.join('>') + ' through ' + label);
      }
    });
  }
}
return [boxes.size, [...new Set(crossings)]];"""


def test_expand_all_draws_no_edge_through_a_node_or_is_refused(open_page):
    page = open_page(call_page(trace_call(feeding_every_iteration, (0.3,))))
    page.click("expand-all")
    page.driver.set_script_timeout(300)  # (every edge sampled, on a shared machine)
    drawn, crossings = page.driver.execute_script(CROSSINGS)
    assert drawn == 151 and crossings == [] and not page.find("graph-message").is_displayed()
    page = open_page(call_page(trace_call(feeding_many_iterations, (0.3,))))
    before = drawn_nodes(page)
    page.click("expand-all")  # the layout would leave some edges straight: refused, the overview kept
    assert "598 nodes" in page.text("graph-message") and "would be drawn through nodes" in page.text("graph-message")
    assert drawn_nodes(page) == before

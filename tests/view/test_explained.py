"""The page marks the explained gradients on the graph: each element whose gradient is zero or not finite is
listed by the control "explain"; the chosen one's paths to the output and its cause (the node that cut them,
the first NaN) are marked on the nodes and edges, a ring around the cause's box and a badge above it; a
button jumps to the step of the cause's VJP. The nodes carry the user's variable names. Checked on the
page's data and in headless Chromium by DOM and geometry (skipped without a browser, as test_view_browser)."""

import importlib.util
import textwrap

import numpy as np
import pytest
from autograd import grad

import adtrace
from adtrace.view import page_data, recording_page
from browser import Page, chromium_for_tests, stop_chromium

PROGRAM = '''
import autograd.numpy as np

X = np.array([[1.0, 0.5], [0.2, -0.3], [-1.0, 1.0]])


def mlp(params):
    h = np.maximum(0.0, X @ params["W1"].T + params["b1"])
    out = h @ params["W2"]
    return np.mean(out ** 2)


def trap(x):
    logs = np.where(x > 0, np.log(x), 0.0)
    return np.sum(logs)


def fine(x):
    return np.sum(np.sin(x))
'''
PARAMS = {"W1": np.array([[1.0, -1.0], [0.5, -2.0], [-1.0, 1.0]]), "b1": np.array([0.0, -5.0, 0.1]),
          "W2": np.array([1.0, 2.0, -1.0])}  # unit 1's bias -5 keeps it off for every example
W1_PATH = ["v0_root", "v1_container_take", "v2_transpose", "v3_matmul", "v5_add", "v6_maximum", "v8_matmul",
           "v9_power", "v10_mean"]
B1_PATH = ["v0_root", "v4_container_take", "v5_add", "v6_maximum", "v8_matmul", "v9_power", "v10_mean"]


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """The program, from one file named as no other test's (two files shown alike name nothing)."""
    folder = tmp_path_factory.mktemp("explained")
    (folder / "explained_model.py").write_text(textwrap.dedent(PROGRAM))
    spec = importlib.util.spec_from_file_location("explained_model", folder / "explained_model.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.folder = folder
    return module


def recorded(model, name, argument):
    with np.errstate(all="ignore"), adtrace.record(capture="full", sites=True, calls=True,
                                                   relative_to=model.folder) as rec:
        grad(getattr(model, name))(argument)
    return rec


def labels(data, indices):
    return [data["graphs"][0]["nodes"]["label"][i] for i in indices]


def test_a_dead_units_elements_are_explained_with_their_own_paths_and_the_relu_that_cut_them(model):
    data = page_data(recorded(model, "mlp", PARAMS))
    explained = {e["selector"]: e for e in data["explanations"]}
    assert list(explained) == ["x['W1'][1, 0]", "x['b1'][1]", "x['W2'][1]"]
    w1, b1 = explained["x['W1'][1, 0]"], explained["x['b1'][1]"]
    assert labels(data, w1["path"]) == W1_PATH  # not through b1's or W2's take: another part's nodes
    assert labels(data, b1["path"]) == B1_PATH
    (cause,) = w1["causes"]
    assert (cause["label"], cause["mark"], cause["reason"], cause["name"]) == ("v6_maximum", "cut", "relu-off", "h")
    steps = next(p for p in data["passes"] if p["id"] == w1["pass"])["steps"]
    assert steps["node"][cause["step"]] == cause["node"]
    assert data["code"]["rev"]["statements"][steps["statement"][cause["step"]]]["text"] == \
        "ingrads = node.vjp(outgrad[0])"
    names = data["graphs"][0]["nodes"]["name"]
    assert {label: name for label, name in zip(data["graphs"][0]["nodes"]["label"], names) if name} == {
        "v6_maximum": "h@explained_model.py:8", "v8_matmul": "out@explained_model.py:9"}


def test_an_engines_page_names_the_assigned_nodes_and_the_cut(tmp_path):
    from micrograd.engine import Value
    (tmp_path / "engine_explained_model.py").write_text("def unit(w, x):\n    h = (w * x).relu()\n    return h * w\n")
    spec = importlib.util.spec_from_file_location("engine_explained_model", tmp_path / "engine_explained_model.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with adtrace.record(engine="micrograd", capture="full", sites=True, relative_to=tmp_path) as rec:
        module.unit(Value(2.0), Value(-3.0)).backward()
    data = page_data(rec)
    nodes = data["graphs"][0]["nodes"]
    assert {label: name for label, name in zip(nodes["label"], nodes["name"]) if name} == {
        "v3_ReLU": "h@engine_explained_model.py:2"}  # (v2_mul is inside h's expression; a return names nothing)
    causes = [c for e in data["explanations"] for c in e["causes"]]
    assert ("v3_ReLU", "relu-off", "h") in [(c["label"], c["reason"], c["name"]) for c in causes]


def test_nothing_is_explained_when_every_gradient_is_finite_and_not_zero(model):
    assert page_data(recorded(model, "fine", np.array([0.5, 1.0])))["explanations"] == []


class Counted(list):
    """A page's steps column that counts how often it is read through."""

    def __iter__(self):
        self.reads = getattr(self, "reads", 0) + 1
        return super().__iter__()


def test_a_long_chains_causes_find_their_steps_in_one_read_of_the_pass(monkeypatch):
    from adtrace.recording.snapshots import VJP
    from adtrace.view.explained import explanations
    from adtrace.view.source import REVERSE_STATEMENTS
    from view_cases import query_scans, zero_chain

    rec = zero_chain(80)  # a zero through 320 nodes, no calls: a cause at each of them
    query, index = rec.user_query(), {label: i for i, label in enumerate(rec.nodes)}
    order = [index[e.node] for e in rec.query_events(query) if type(e).__name__ == "VJPCalled"]
    steps = {"node": Counted(n for n in order for _ in (0, 1)),  # each VJP's step after another of its node's
             "statement": Counted(s for _ in order for s in (0, REVERSE_STATEMENTS.index(VJP)))}
    (explained,) = explanations(rec, index, [{"mode": "rev", "query": query, "steps": steps}])
    assert len(explained["causes"]) > 80 and steps["node"].reads == 1
    assert all(steps["node"][c["step"]] == c["node"] and c["step"] % 2 for c in explained["causes"])
    short, long = zero_chain(10), zero_chain(80)  # the query's events read as often, however long the chain
    assert query_scans(monkeypatch, lambda: explanations(long, index, [])) == query_scans(
        monkeypatch, lambda: explanations(short, index, [])) <= 3


# -------------------- in the browser --------------------


@pytest.fixture(scope="module")
def chromium():
    driver = chromium_for_tests()
    yield driver
    stop_chromium(driver)


@pytest.fixture
def open_page(chromium, tmp_path):
    opened = []

    def open_(text):
        path = tmp_path / f"page{len(opened)}.html"
        path.write_text(text)
        opened.append(Page(chromium, path))
        return opened[-1]

    yield open_
    for page in opened[-1:]:
        assert page.console_errors() == []
        assert page.requests() == []


MARKS = ("return Array.from(document.querySelectorAll('svg [data-explained]'))"
         ".filter(e => e.hasAttribute(arguments[0])).map(e => [e.getAttribute(arguments[0]),"
         " e.getAttribute('data-explained')])")


def marks(page, attribute="data-node"):
    return dict(page.driver.execute_script(MARKS, attribute))


def box_of(page, selector):
    return page.driver.execute_script(
        "const r = document.querySelector(arguments[0]).getBoundingClientRect();"
        "return [r.left, r.top, r.right, r.bottom];", selector)


def edge_ends(page):
    """``(child, parent)`` labels of each marked edge, read from its key (``child:position``) and the data."""
    keys = marks(page, "data-edge")
    nodes = page.driver.execute_script("return adtrace.DATA.graphs[0].nodes")
    ends = []
    for key in keys:
        child, position = map(int, key.split(":"))
        ends.append((nodes["label"][child], nodes["label"][nodes["parents"][child][position][1]]))
    return ends


def choose(page, selector):
    from selenium.webdriver.support.ui import Select

    option = next(o for o in Select(page.find("explain")).options if o.text.startswith(selector))
    Select(page.find("explain")).select_by_value(option.get_attribute("value"))


def test_the_page_marks_the_chosen_elements_paths_and_the_node_that_cut_them(open_page, model):
    page = open_page(recording_page(recorded(model, "mlp", PARAMS)))
    from selenium.webdriver.support.ui import Select

    options = [o.text for o in Select(page.find("explain")).options]
    assert options == ["(no marks)", "x['W1'][1, 0] = 0 (zero)", "x['b1'][1] = 0 (zero)", "x['W2'][1] = 0 (zero)"]
    found = marks(page)  # the first element, chosen on opening
    assert found == {label: "cut" if label == "v6_maximum" else "path" for label in W1_PATH}
    ends = edge_ends(page)
    assert ("v2_transpose", "v1_container_take") in ends and all(a in W1_PATH and b in W1_PATH for a, b in ends)
    assert not any("v4_container_take" in pair or "v7_container_take" in pair for pair in ends)
    node, ring = box_of(page, "[data-node=v6_maximum] > rect:last-of-type"), box_of(page, ".explain-ring")
    assert ring[0] < node[0] and ring[1] < node[1] and ring[2] > node[2] and ring[3] > node[3]  # around its box
    badge = box_of(page, "[data-testid=explain-badge]")
    assert badge[3] <= node[1] and node[0] <= (badge[0] + badge[2]) / 2 <= node[2]  # above it, centred
    assert page.text("explain-badge") == "\u2702 cut"
    assert page.text("explain-cause").startswith("v6_maximum (maximum) h@explained_model.py:8: relu-off")

    choose(page, "x['b1'][1]")
    assert marks(page) == {label: "cut" if label == "v6_maximum" else "path" for label in B1_PATH}
    page.click("next")  # a step's classes leave the marks alone
    assert marks(page) == {label: "cut" if label == "v6_maximum" else "path" for label in B1_PATH}
    choose(page, "(no marks)")
    assert marks(page) == {} and marks(page, "data-edge") == {}
    assert page.driver.find_elements("css selector", ".explain-ring") == []


def test_the_jump_goes_to_the_causes_vjp_and_shows_the_node_out_of_its_collapsed_group(open_page, model):
    page = open_page(recording_page(recorded(model, "mlp", PARAMS)))
    page.click("collapse-all")
    groups = marks(page, "data-group")
    assert groups["explained_model.py:8"] == "cut" and groups["explained_model.py:9"] == "path"  # h: the cut
    page.click("explain-jump")
    assert page.current_nodes() == ["v6_maximum"]
    assert page.text("statement") == "ingrads = node.vjp(outgrad[0])"
    assert page.counter() == f"step {int(page.find('explain-jump').text.split()[-1])} of 48"
    assert marks(page)["v6_maximum"] == "cut"  # drawn on its own now, and marked
    assert page.text("current-name") == "h@explained_model.py:8"  # the step's panel names the variable


def test_a_nan_is_marked_at_the_vjp_that_made_it_and_nodes_show_their_variable(open_page, model):
    page = open_page(recording_page(recorded(model, "trap", np.array([2.0, 0.0, 0.5]))))
    assert marks(page) == {"v0_root": "path", "v1_log": "nan", "v2_where": "path", "v3_sum": "path"}
    assert page.text("explain-badge") == "first NaN"
    where = page.driver.find_element("css selector", "[data-node=v2_where]")
    assert [t.text for t in where.find_elements("css selector", "text")] == ["v2_where", "logs = where"]
    assert "logs@explained_model.py:14" in page.driver.execute_script(
        "return document.querySelector('[data-node=v2_where] title').textContent")


def test_no_control_when_nothing_is_zero_or_not_finite(open_page, model):
    page = open_page(recording_page(recorded(model, "fine", np.array([0.5, 1.0]))))
    assert page.driver.find_elements("css selector", "[data-testid=explain]") == []
    assert marks(page) == {}


def test_without_calls_an_elements_paths_and_causes_are_its_own(model, tmp_path):
    program = tmp_path / "explained_dz.py"
    program.write_text("import autograd.numpy as np\n\n\ndef dz(x):\n    z = x * 2.0\n"
                       "    h = np.maximum(0.0, z - 3.0)\n    u = np.sin(x[0]) * 0.0\n    return np.sum(h) + u\n")
    spec = importlib.util.spec_from_file_location("explained_dz", program)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with adtrace.record(capture="full", sites=True, relative_to=tmp_path) as rec:  # (no calls)
        grad(module.dz)(np.array([0.5, 2.5, 1.0]))
    data = page_data(rec)
    explained = {e["selector"]: e for e in data["explanations"]}
    first, third = explained["x[0]"], explained["x[2]"]
    assert labels(data, third["path"]) == ["v0_root", "v1_multiply", "v2_subtract", "v3_maximum", "v7_sum", "v8_add"]
    assert [(c["label"], c["mark"]) for c in third["causes"]] == [("v3_maximum", "cut")]  # the jump goes to the relu
    assert {"v4_ArrayBox_getitem", "v5_sin", "v6_multiply"} <= set(labels(data, first["path"]))
    assert first["causes"][0]["label"] == "v3_maximum"

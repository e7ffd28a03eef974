"""The diff's page (``adtrace diff ... --html FILE``): both backward passes side by side, each the
step-through page of its recording (``page_data``, ``render_page``) in a frame of its own, under one
step control that moves both to aligned steps: the j-th node A's pass visited, and its match in B's.
The first divergence is ringed on both sides, with a button that steps both passes to it.

The frames are ``srcdoc`` documents of this page's origin: the control sets each one's fragment
(``#query=q&step=k``, which the step-through page follows) and marks a node by its ``data-node``.
"""

import html

from .data import page_data
from .page import embed, render_page

PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; \
style-src 'unsafe-inline'">
<meta name="generator" content="adtrace">
<title>@@TITLE@@</title>
<style>
body { margin: 0; font: 14px system-ui, sans-serif; }
header { padding: 6px 10px; border-bottom: 1px solid #ccc; }
.sides { display: flex; height: calc(100vh - 90px); }
.sides figure { flex: 1; margin: 0; display: flex; flex-direction: column; border-right: 1px solid #ccc; }
.sides figcaption { padding: 2px 8px; background: #f3f3f3; }
.sides iframe { flex: 1; border: 0; width: 100%; }
.first { color: #b00; }
</style>
</head>
<body>
<header>
  <h1 data-testid="title">@@TITLE@@</h1>
  <nav>
    <button data-testid="first">|&#9664; first</button>
    <button data-testid="prev">&#9664; prev</button>
    <span data-testid="step-counter">step 1 of 1</span>
    <button data-testid="next">next &#9654;</button>
    <button data-testid="last">last &#9654;|</button>
    <button data-testid="jump-first-divergence">first divergence</button>
    <span class="first" data-testid="first-divergence"></span>
  </nav>
</header>
<div class="sides">
  <figure><figcaption data-testid="caption-a"></figcaption><iframe data-testid="side-a" title="A"></iframe></figure>
  <figure><figcaption data-testid="caption-b"></figcaption><iframe data-testid="side-b" title="B"></iframe></figure>
</div>
<script type="application/json" id="adtrace-diff">@@DATA@@</script>
<script>
(function () {
  "use strict";
  const DATA = JSON.parse(document.getElementById("adtrace-diff").textContent);
  const byTestId = (id) => document.querySelector(`[data-testid="${id}"]`);
  const frames = [byTestId("side-a"), byTestId("side-b")];
  const ready = [false, false];
  let j = 0;
  function ring(frame, label) {
    const doc = frame.contentDocument;
    if (!doc || !doc.head || !label) return; // (a frame between documents: the next step rings it)
    if (!doc.getElementById("adtrace-divergence-style")) {
      const style = doc.createElement("style");
      style.id = "adtrace-divergence-style";
      style.textContent = "g[data-divergence] > :first-child { stroke: #d00 !important; "
        + "stroke-width: 4px !important; }";
      doc.head.appendChild(style);
    }
    doc.querySelectorAll(`g[data-node="${CSS.escape(label)}"]`)
      .forEach((g) => g.setAttribute("data-divergence", "first"));
  }
  function go(k) {
    j = Math.max(0, Math.min(DATA.steps.length - 1, k));
    byTestId("step-counter").textContent = `step ${j + 1} of ${DATA.steps.length}`;
    DATA.steps[j].forEach((step, side) => {
      const win = frames[side].contentWindow;
      if (win && step !== null) win.location.hash = `#query=${encodeURIComponent(DATA.queries[side])}&step=${step + 1}`;
    });
    setTimeout(() => frames.forEach((f, side) => ring(f, DATA.first[side])), 0);
  }
  DATA.sides.forEach((side, i) => {
    byTestId(i ? "caption-b" : "caption-a").textContent = side;
    frames[i].addEventListener("load", () => {
      ready[i] = true;
      if (ready.every(Boolean)) {
        go(j);
        document.body.setAttribute("data-ready", "1");
      }
    });
    frames[i].srcdoc = DATA.pages[i];
  });
  byTestId("first-divergence").textContent = DATA.firstText;
  byTestId("jump-first-divergence").hidden = DATA.firstStep === null;
  byTestId("first").addEventListener("click", () => go(0));
  byTestId("prev").addEventListener("click", () => go(j - 1));
  byTestId("next").addEventListener("click", () => go(j + 1));
  byTestId("last").addEventListener("click", () => go(DATA.steps.length - 1));
  byTestId("jump-first-divergence").addEventListener("click", () => go(DATA.firstStep));
  go(0);
})();
</script>
</body>
</html>
"""


def diff_page(result, a_name="A", b_name="B", title=None):
    """The side-by-side HTML page of ``diff.Diff`` ``result``."""
    datas = [page_data(side.recording, title=name) for side, name in ((result.a, a_name), (result.b, b_name))]
    queries = [_user_pass(data, side.recording) for data, side in zip(datas, (result.a, result.b))]
    visited = [_visit_steps(data, q) for data, q in zip(datas, queries)]
    steps, first_step = [[0, 0]], None
    first = result.first
    first_labels = [first.a.node if first and first.a else None, first.b.node if first and first.b else None]
    for label in result.a.visits:
        m = result.alignment.a_to_b.get(label)
        if label not in visited[0] and m not in visited[1]:
            continue
        if first_step is None and (label == first_labels[0] or m is not None and m == first_labels[1]):
            first_step = len(steps)
        steps.append([visited[0].get(label), visited[1].get(m)])
    if first is not None and first_step is None:
        first_step = 0
    text = "identical" if first is None else (
        f"first divergence ({first.kind}, {first.what}): A {first_labels[0] or '-'}, B {first_labels[1] or '-'}")
    data = {"sides": [a_name, b_name], "pages": [render_page(d) for d in datas], "queries": queries,
            "steps": steps, "first": first_labels, "firstStep": first_step, "firstText": text}
    shown = html.escape(title or f"diff {a_name} {b_name}")
    return PAGE.replace("@@TITLE@@", shown).replace("@@DATA@@", embed(data))


def _user_pass(data, recording):
    wanted = recording.user_query()
    return next((p["id"] for p in data["passes"] if p["mode"] == "rev" and p["query"] == wanted), data["start"])


def _visit_steps(data, query):
    """label -> the step its node is visited (popped from outgrads, or an engine's visit) in pass ``query``."""
    found = {}
    for p in data["passes"]:
        if p["id"] != query:
            continue
        labels = data["graphs"][p["graph"]]["nodes"]["label"]
        for k, change in enumerate(p["steps"]["state"]):
            if change and change[0] in ("pop", "visit"):
                found.setdefault(labels[change[1]], k)
    return found

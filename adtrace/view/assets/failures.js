// adtrace viewer: failing checks first. When a check fails the summary opens on it, the node it
// names is marked on the graph (a red ring, data-failing) and a control jumps to its step
// (the page's data: failures, adtrace/view/failures.py).
(function (adtrace) {
  "use strict";

  const { DATA, make, byTestId, svg } = adtrace;
  const FAILURES = DATA.failures || [];

  // The data's graph -> its failing nodes -> the checks that name them.
  const named = new Map();
  for (const failure of FAILURES) {
    if (failure.node === null) continue;
    const graph = DATA.graphs[failure.graph];
    if (!named.has(graph)) named.set(graph, new Map());
    const checks = named.get(graph);
    if (!checks.has(failure.node)) checks.set(failure.node, []);
    checks.get(failure.node).push(failure.check);
  }

  // Called by GraphView for each unit it draws (a node, or a group of nodes): ring it if it holds
  // a failing node.
  function mark(g, graph, nodes, width, height) {
    const checks = named.get(graph);
    const failing = checks ? nodes.filter((n) => checks.has(n)) : [];
    if (!failing.length) return;
    const why = failing.map((n) => `${graph.nodes.label[n]}: ${checks.get(n).join(", ")} FAIL`);
    g.setAttribute("data-failing", why.join("; "));
    g.insertBefore(svg.element("rect", { x: -5, y: -5, width: width + 10, height: height + 10, rx: 8,
      class: "failing-ring" }), g.firstChild);
    const title = g.querySelector("title");
    if (title) title.textContent += `\nfailing check: ${why.join("; ")}`;
  }

  function plural(n, word) {
    return `${n} ${word}${n === 1 ? "" : "s"}`;
  }

  // The summary opened on the failures, read first: its title names them, then one line each with
  // the node it names and a control that goes to that node's step (its detail in its tooltip).
  function show(viewer) {
    if (!FAILURES.length) return;
    const box = byTestId("summary-box");
    box.open = true;
    box.classList.add("failing");
    const names = [...new Set(FAILURES.map((f) => f.check))];
    byTestId("summary-title").textContent = `${plural(names.length, "check")} failed: ${names.join(", ")}`;
    const list = byTestId("failures");
    FAILURES.forEach((failure, i) => {
      const li = make("li", "fail", `FAIL: ${failure.check}`, list);
      li.setAttribute("data-testid", "failure");
      li.title = failure.detail; // (the checks' list below says it too)
      if (failure.node === null) return;
      const label = DATA.graphs[failure.graph].nodes.label[failure.node];
      make("span", null, ", at node ", li);
      make("code", null, label, li);
      if (failure.step !== null && failure.step !== undefined) {
        const jump = make("button", null, `go to ${label} (step ${failure.step + 1})`, li);
        jump.setAttribute("data-testid", "failure-jump");
        jump.setAttribute("data-failure", String(i));
        jump.addEventListener("click", () => viewer.open(failure.pass, failure.step));
      }
    });
  }

  adtrace.failures = { mark, show };
})(window.adtrace = window.adtrace || {});

// adtrace viewer: controls (buttons, slider, keys, pass selector), the URL fragment, start-up.
(function (adtrace) {
  "use strict";

  const { DATA, make, byTestId } = adtrace;

  // The fragment names the pass and the step shown: #query=q2&step=5 (steps count from 1).
  function readFragment() {
    const found = {};
    for (const part of location.hash.replace(/^#/, "").split("&")) {
      const [key, value] = part.split("=");
      if (key) found[decodeURIComponent(key)] = decodeURIComponent(value || "");
    }
    return { pass: found.query, step: parseInt(found.step, 10) };
  }

  function remember(passId, k) {
    const hash = `#query=${encodeURIComponent(passId)}&step=${k + 1}`;
    if (location.hash === hash) return;
    try {
      history.replaceState(null, "", hash); // no history entry per step, no hashchange event
    } catch (error) {
      // a sandboxed frame (Jupyter's srcdoc) may refuse: the page works without the fragment
    }
  }

  function openFragment(viewer) {
    const wanted = readFragment();
    const id = viewer.passes.has(wanted.pass) ? wanted.pass : viewer.pass ? viewer.pass.id : DATA.start;
    const k = Number.isFinite(wanted.step) ? wanted.step - 1 : 0;
    if (id) viewer.open(id, k);
  }

  function passSelector(viewer) {
    const select = byTestId("query");
    if (DATA.passes.length < 2) return;
    const groups = new Map();
    for (const pass of DATA.passes) {
      const name = pass.parent ? "nested passes (entered from their node)"
        : pass.mode === "fwd" ? "forward mode" : `level ${pass.level}`;
      if (!groups.has(name)) groups.set(name, make("optgroup", null, null, select));
      groups.get(name).label = name;
      const option = make("option", null, pass.name, groups.get(name));
      option.value = pass.id;
    }
    select.hidden = false;
    select.addEventListener("change", () => {
      viewer.open(select.value, 0);
      select.blur(); // give the arrow keys back to the steps
    });
  }

  function buttons(viewer) {
    const on = (id, go) => byTestId(id).addEventListener("click", () => viewer.go(go()));
    on("first", () => 0);
    on("prev", () => viewer.k - 1);
    on("next", () => viewer.k + 1);
    on("last", () => viewer.count - 1);
    const slider = byTestId("slider");
    slider.addEventListener("input", () => viewer.go(parseInt(slider.value, 10) - 1));
    byTestId("fit").addEventListener("click", () => viewer.graph && viewer.graph.fit());
    byTestId("whole").addEventListener("click", () => viewer.graph && viewer.graph.fitWhole());
    byTestId("expand-all").addEventListener("click", () => expandAll(viewer, true));
    byTestId("collapse-all").addEventListener("click", () => expandAll(viewer, false));
  }

  function expandAll(viewer, on) {
    if (!viewer.graph) return;
    adtrace.groups.say(viewer.graph.expandAll(on));
    viewer.go(viewer.k);
  }

  // Arrows, Home and End step through the pass, except while a form control has the focus
  // (the slider moves itself and reports through its input event).
  function keys(viewer) {
    const moves = { ArrowRight: () => viewer.k + 1, ArrowLeft: () => viewer.k - 1, Home: () => 0,
      End: () => viewer.count - 1 };
    document.addEventListener("keydown", (event) => {
      const tag = event.target && event.target.tagName;
      if (!moves[event.key] || tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") return;
      event.preventDefault();
      viewer.go(moves[event.key]());
    });
  }

  function summary() {
    const table = byTestId("summary");
    for (const [name, value] of DATA.summary) {
      const tr = make("tr", null, null, table);
      make("th", null, name, tr);
      make("td", null, value, tr);
    }
    const checks = byTestId("checks");
    for (const [name, result, detail] of DATA.checks) {
      make("li", result === "FAIL" ? "fail" : result, `${result}: ${name} (${detail})`, checks);  // pass, skipped
    }
    byTestId("summary-box").hidden = !DATA.summary.length && !DATA.checks.length;
    const notes = byTestId("notes");
    for (const note of DATA.notes) make("li", null, note, notes);
  }

  function start() {
    const viewer = (adtrace.viewer = new adtrace.Viewer()); // for scripts and tests
    summary();
    passSelector(viewer);
    buttons(viewer);
    keys(viewer);
    adtrace.failures.show(viewer);
    openFragment(viewer);
    if (!viewer.pass) adtrace.panels.showStep(viewer);
    window.addEventListener("hashchange", () => openFragment(viewer));
    document.body.setAttribute("data-ready", "1");
  }

  adtrace.controls = { remember };
  start();
})(window.adtrace = window.adtrace || {});

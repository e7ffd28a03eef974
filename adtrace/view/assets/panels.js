// adtrace viewer: the panels beside the graph (statement, code, values, nesting) for a step.
(function (adtrace) {
  "use strict";

  const { DATA, make, byTestId } = adtrace;
  const STATE_NAMES = { outgrads: "outgrads (autograd)", tangents: "tangents: JVPNode.g (autograd)",
    grads: ".grad of each value written (the engine)" };
  const LECTURE_NAMES = { node_to_grad: "node_to_grad (the lecture, reference engine)",
    node_to_tangent: "node_to_tangent (the lecture, reference engine)" };

  // Children of a pass: "passId:node" -> nested passes run by that node's VJP.
  const nested = new Map();
  for (const pass of DATA.passes) {
    if (!pass.parent) continue;
    const key = pass.parent.pass + ":" + pass.parent.node;
    if (!nested.has(key)) nested.set(key, []);
    nested.get(key).push(pass);
  }

  function fillCode(pre, lines) {
    pre.textContent = "";
    lines.forEach((line) => make("div", "line", line || " ", pre));
  }

  function highlight(pre, index) {
    pre.querySelectorAll(".line.hl").forEach((el) => el.classList.remove("hl"));
    const line = index === null || index === undefined ? null : pre.children[index];
    if (line) line.classList.add("hl");
  }

  function showPass(viewer, pass) {
    const code = DATA.code[pass.mode];
    byTestId("autograd-name").textContent = code.autograd.name;
    fillCode(byTestId("autograd-source"), code.autograd.lines);
    fillCode(byTestId("lecture-source"), code.lecture.lines);
    byTestId("state-name").textContent = STATE_NAMES[pass.state];
    byTestId("waiting-name").textContent = pass.state === "grads" ? "has a .grad, not visited yet"
      : "waiting in outgrads";
    byTestId("lecture-name").textContent = LECTURE_NAMES[pass.lecture];
    const note = byTestId("reference-note");
    note.textContent = pass.reference || "";
    note.hidden = !pass.reference;
    byTestId("node-to-grad").hidden = Boolean(pass.reference);
    const slider = byTestId("slider");
    slider.max = String(Math.max(1, viewer.count));
    const select = byTestId("query");
    if (select.options.length) select.value = pass.id;
    showNesting(viewer, pass);
  }

  // Where this pass sits: a nested pass can be left for its parent, at its node's VJP.
  function showNesting(viewer, pass) {
    const box = byTestId("nesting");
    box.textContent = "";
    if (!pass.parent) return;
    const parent = viewer.passes.get(pass.parent.pass);
    const label = DATA.graphs[parent.graph].nodes.label[pass.parent.node];
    make("span", null, `${pass.name}: run by the VJP of ${label} in ${parent.name} `, box);
    const leave = make("button", null, "leave", box);
    leave.setAttribute("data-testid", "leave-nested");
    leave.addEventListener("click", () => viewer.open(parent.id, pass.parent.step));
  }

  function showStep(viewer) {
    const pass = viewer.pass;
    const k = viewer.k;
    byTestId("step-counter").textContent = `step ${k + 1} of ${viewer.count}`;
    byTestId("slider").value = String(k + 1);
    if (!pass || k < 0) return;
    const steps = pass.steps;
    const statement = DATA.code[pass.mode].statements[steps.statement[k]];
    byTestId("statement").textContent = statement.text;
    highlight(byTestId("autograd-source"), statement.autograd);
    highlight(byTestId("lecture-source"), statement.lecture);
    showDetails(viewer, statement, k);
    const node = steps.node[k];
    const parent = steps.parent[k];
    viewer.engine.mark(parent !== null ? parent : node, "touched");
    viewer.lecture.mark(parent !== null ? parent : node, "touched");
    viewer.graph.setActiveEdge(parent !== null ? `${node}:${steps.position[k]}` : null);
    viewer.graph.reveal(node, parent);
    showEnter(viewer, pass, node);
    adtrace.controls.remember(pass.id, k);
  }

  function showDetails(viewer, statement, k) {
    const steps = viewer.pass.steps;
    const table = byTestId("details");
    table.textContent = "";
    const row = (name, value, testid) => {
      const tr = make("tr", null, null, table);
      make("th", null, name, tr);
      make("td", null, value, tr).setAttribute("data-testid", testid);
    };
    const node = steps.node[k];
    const names = DATA.graphs[viewer.pass.graph].nodes.name || [];
    row("node", node === null ? "-" : viewer.labels[node], "current-node");
    if (node !== null && names[node]) row("variable", names[node], "current-name"); // h@model.py:4
    if (steps.parent[k] !== null) {
      const argnum = DATA.graphs[viewer.pass.graph].nodes.parents[node][steps.position[k]][0];
      const parentName = names[steps.parent[k]] ? `${names[steps.parent[k]]}, ` : "";
      row("parent", `${viewer.labels[steps.parent[k]]} (${parentName}arg ${argnum})`, "parent");
    }
    for (const field in statement.fields) row(statement.fields[field], steps[field][k], field);
  }

  function showEnter(viewer, pass, node) {
    const box = byTestId("nested");
    box.textContent = "";
    const children = node === null ? null : nested.get(pass.id + ":" + node);
    if (!children) return;
    const count = children.length === 1 ? "1 nested pass" : `${children.length} nested passes`;
    make("span", null, `this node's VJP ran ${count}: `, box);
    for (const child of children) {
      const button = make("button", null, `enter ${child.name}`, box);
      button.setAttribute("data-testid", "enter-nested");
      button.addEventListener("click", () => viewer.open(child.id, 0));
    }
  }

  adtrace.panels = { showPass, showStep };
})(window.adtrace = window.adtrace || {});

// adtrace viewer: the explained gradients on the graph (DATA.explanations, adtrace/view/explained.py).
//
// When an input element's gradient is zero or not finite, a control "explain" in the graph's toolbar lists
// those elements; the one chosen (the first, on opening) is marked on the graph: the nodes and edges of its
// paths to the output get data-explained="path", each cause node data-explained="cut" | "nan" | "origin" |
// "unknown" with a ring around its box and a badge above it (a collapsed group holding one: the group). Each
// cause has a button to its step (the step of the user's pass where its VJP ran). The marks are attributes
// and elements of their own, so the step's classes (current, waiting, visited) stay as they are.
(function (adtrace) {
  "use strict";

  const { DATA, make, byTestId } = adtrace;
  const { element, text } = adtrace.svg;
  const EXPLAINED = DATA.explanations || [];
  const GRAPH = DATA.graphs[0]; // the explanations are of the first recording's graph (the reverse one)
  const BADGES = { cut: "\u2702 cut", nan: "first NaN", origin: "NaN (forward)", unknown: "? not followed" };
  const PRIORITY = ["cut", "nan", "origin", "unknown", "path"]; // a group shows the first its nodes have
  let chosen = EXPLAINED.length ? 0 : -1;

  // The cause's mark per node index (the first cause of a node wins).
  function causeMarks(explained) {
    const marks = new Map();
    for (const cause of explained.causes) {
      if (cause.node !== null && !marks.has(cause.node)) marks.set(cause.node, cause.mark);
    }
    return marks;
  }

  function clear(view) {
    view.svg.querySelectorAll(".explain-ring, .explain-badge").forEach((el) => el.remove());
    view.svg.querySelectorAll("[data-explained]").forEach((el) => el.removeAttribute("data-explained"));
  }

  // Mark the chosen explanation on a drawn graph view (a pass of another graph: nothing).
  function mark(view) {
    clear(view);
    const explained = EXPLAINED[chosen];
    if (!explained || view.graph !== GRAPH) return;
    const onPath = new Set(explained.path);
    const causes = causeMarks(explained);
    const groups = new Map(); // collapsed group -> its most telling mark
    for (const n of view.nodes) {
      const kind = causes.get(n) || (onPath.has(n) ? "path" : null);
      if (!kind) continue;
      const el = view.nodeElements.get(n);
      if (el) {
        el.setAttribute("data-explained", kind);
        if (kind !== "path") ring(el, kind);
        continue;
      }
      const g = view.closedBox(n); // (the outermost closed box holding it)
      if (g === null) continue;
      if (!groups.has(g) || PRIORITY.indexOf(kind) < PRIORITY.indexOf(groups.get(g))) groups.set(g, kind);
    }
    groups.forEach((kind, g) => {
      const el = view.groupElements.get(g);
      if (!el) return;
      el.setAttribute("data-explained", kind);
      if (kind !== "path") ring(el, kind);
    });
    view.edgeElements.forEach((el, key) => {
      const [child, position] = key.split(":").map(Number);
      const parent = GRAPH.nodes.parents[child][position][1];
      if ((onPath.has(child) || causes.has(child)) && (onPath.has(parent) || causes.has(parent))) {
        el.setAttribute("data-explained", "path");
      }
    });
  }

  // A ring around a unit's box and a badge above it, behind and over its own drawing.
  function ring(el, kind) {
    const box = el.querySelector("rect:not([class])"); // (its own box, not a ring)
    const width = parseFloat(box.getAttribute("width"));
    const height = parseFloat(box.getAttribute("height"));
    const around = element("rect", { class: "explain-ring", x: -5, y: -5, width: width + 10, height: height + 10,
      rx: 8 }, null);
    el.insertBefore(around, el.firstChild);
    const badge = text(el, width / 2, -9, BADGES[kind], "explain-badge");
    badge.setAttribute("data-testid", "explain-badge");
  }

  // Every drawing of a pass's graph (opening, expanding a group) gets the marks.
  const draw = adtrace.GraphView.prototype.draw;
  adtrace.GraphView.prototype.draw = function () {
    draw.call(this);
    mark(this);
  };

  function describe(cause) {
    const name = cause.name ? ` ${cause.name}` : "";
    const line = cause.line ? (cause.name ? `@${cause.line}` : ` at ${cause.line}`) : "";
    const detail = cause.detail ? ` (${cause.detail})` : "";
    return `${cause.label} (${cause.primitive})${name}${line}: ${cause.reason}${detail}`;
  }

  // The chosen element's causes, each with its jump to its step.
  function showCauses(box) {
    box.textContent = "";
    const explained = EXPLAINED[chosen];
    if (!explained) return;
    for (const cause of explained.causes) {
      const line = make("div", "explain-cause " + cause.mark, null, box);
      line.setAttribute("data-testid", "explain-cause");
      make("span", null, describe(cause), line);
      if (cause.step === null || explained.pass === null) continue;
      const jump = make("button", null, `go to step ${cause.step + 1}`, line);
      jump.setAttribute("data-testid", "explain-jump");
      jump.addEventListener("click", () => goTo(explained, cause));
    }
  }

  // Open the user's pass at the cause's step, its node drawn on its own (its group expanded).
  function goTo(explained, cause) {
    const viewer = adtrace.viewer;
    viewer.open(explained.pass, cause.step);
    const view = viewer.graph;
    if (!view.nodeElements.has(cause.node) && view.closedBox(cause.node) !== null) {
      view.groups.path(cause.node).forEach((id) => view.expanded.add(id)); // (every box around it opened)
      view.draw();
      viewer.go(viewer.k);
    }
  }

  function control() {
    if (!EXPLAINED.length) return;
    const toolbar = document.querySelector(".graph-panel .toolbar");
    const holder = make("label", "explain", "explain ", toolbar);
    const select = make("select", null, null, holder);
    select.setAttribute("data-testid", "explain");
    make("option", null, "(no marks)", select).value = "-1";
    EXPLAINED.forEach((explained, i) => {
      make("option", null, `${explained.selector} = ${explained.gradient} (${explained.verdict})`, select).value = i;
    });
    select.value = String(chosen);
    const box = make("div", "explain-causes", null, null);
    box.setAttribute("data-testid", "explain-causes");
    toolbar.after(box);
    showCauses(box);
    select.addEventListener("change", () => {
      chosen = parseInt(select.value, 10);
      showCauses(box);
      if (adtrace.viewer && adtrace.viewer.graph) mark(adtrace.viewer.graph);
      select.blur(); // give the arrow keys back to the steps
    });
  }

  control();
  adtrace.explained = { mark };
})(window.adtrace = window.adtrace || {});

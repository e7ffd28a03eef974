// adtrace viewer: the graph of one pass as SVG, collapsed into groups or expanded, with pan and zoom.
//
// Each node drawn is a <g data-node="LABEL">, each collapsed group a <g data-group="KEY">; their
// classes say where the pass is: current, waiting (an outgrads entry; an engine of micrograd's shape:
// a .grad, not visited yet), visited, or none (not yet reached). Text goes in through textContent
// only, so a label never becomes markup.
(function (adtrace) {
  "use strict";

  const { element, text, curve, loop } = adtrace.svg;
  const EXPANDED_LIMIT = 60; // a pass with at most this many nodes opens expanded
  const CHAR = 7.3; // width of a character of the 12px monospace font
  const NODE_HEIGHT = 34;
  const MAX_TEXT = 30; // as svg.text cuts
  const READABLE = 1; // the least scale of the default fit: 12px labels, 11px edge labels

  class GraphView {
    // graph: the data's graph; pass: the data's pass; status(node) -> "current" | "waiting" | ...
    constructor(camera, graph, pass, status) {
      this.camera = camera;
      this.svg = camera.svg;
      this.graph = graph;
      this.status = status;
      this.nodes = pass.nodes;
      this.groups = new adtrace.groups.Groups(graph, this.nodes); // (groups.js: lines, iterations)
      this.all = this.nodes.length <= EXPANDED_LIMIT; // every node drawn
      this.expanded = new Set(); // the ids of the boxes opened, one level each
      this.paths = new Map(); // node -> the ids of its boxes, outermost first
      this.near = new Set(); // the current node, its parents and its consumers: drawn as nodes
      this.consumers = new Map();
      const inPass = (this.inPass = new Set(this.nodes));
      for (const n of this.nodes) {
        for (const [, parent] of graph.nodes.parents[n]) {
          if (!inPass.has(parent)) continue;
          if (!this.consumers.has(parent)) this.consumers.set(parent, []);
          this.consumers.get(parent).push(n);
        }
      }
      this.view = null; // this pass's part of the drawing in sight (see Camera)
    }

    // -------------------- what is drawn: units and edges --------------------

    unitsAndEdges() {
      const unitOf = new Map();
      const groupUnit = new Map();
      const units = []; // in creation order of their first node: the layout's key order
      for (const n of this.nodes) {
        const id = this.closedBox(n);
        if (id === null) {
          unitOf.set(n, units.length);
          units.push({ key: n, node: n, width: this.nodeWidth(n), height: NODE_HEIGHT });
          continue;
        }
        if (!groupUnit.has(id)) {
          groupUnit.set(id, units.length);
          const box = this.groups.boxes.get(id);
          const lines = this.groups.describe(box);
          units.push({ key: n, group: box, lines, width: this.groupWidth(lines), height: 12 + 15 * lines.length });
        }
        unitOf.set(n, groupUnit.get(id));
      }
      return { units, edges: this.edges(unitOf, units) };
    }

    // One drawn edge per parent position between nodes; edges touching a collapsed group are
    // merged per pair of units (and counted). Edges inside a collapsed group are not drawn.
    edges(unitOf, units) {
      const inPass = new Set(this.nodes);
      const merged = new Map();
      const edges = [];
      for (const child of this.nodes) {
        this.graph.nodes.parents[child].forEach(([argnum, parent], position) => {
          if (!inPass.has(parent)) return;
          const from = unitOf.get(parent);
          const to = unitOf.get(child);
          if (from === to) return;
          const single = units[from].node !== undefined && units[to].node !== undefined;
          const key = single ? child + ":" + position : from + ">" + to;
          if (!merged.has(key)) {
            merged.set(key, edges.length);
            edges.push({ from, to, argnum, position: single ? position : undefined, count: 0, raw: [] });
          }
          const edge = edges[merged.get(key)];
          edge.count += 1;
          edge.raw.push(child + ":" + position);
        });
      }
      return edges;
    }

    // Wide enough for its text, and for an "arg k" label under each edge entering it.
    nodeWidth(n) {
      const longest = Math.max(this.graph.nodes.label[n].length, this.secondLine(n).length);
      return Math.max(Math.min(longest, MAX_TEXT) * CHAR + 16, this.graph.nodes.parents[n].length * 40 + 12);
    }

    // Under the label: the primitive, with the user's variable where the source assigns the node's value
    // ("h = tanh", from "h@model.py:4").
    secondLine(n) {
      const nodes = this.graph.nodes;
      const name = nodes.name ? nodes.name[n] : "";
      return name ? `${name.slice(0, name.indexOf("@"))} = ${nodes.primitive[n]}` : nodes.primitive[n];
    }

    groupWidth(lines) {
      return Math.min(Math.max(14, ...lines.map((line) => line.length)), MAX_TEXT) * CHAR + 20;
    }

    // The outermost box of node n still closed (null: n is drawn as a node).
    closedBox(n) {
      if (this.all || this.near.has(n)) return null;
      if (!this.paths.has(n)) this.paths.set(n, this.groups.path(n));
      return this.paths.get(n).find((id) => !this.expanded.has(id)) || null;
    }

    // -------------------- drawing --------------------

    draw() {
      const { units, edges } = this.unitsAndEdges();
      const placed = adtrace.layout(units, edges);
      this.units = units;
      this.placed = placed;
      this.svg.textContent = "";
      this.defs();
      this.canvas = element("g", { class: "canvas" }, this.svg);
      const edgeLayer = element("g", { class: "edges" }, this.canvas);
      const unitLayer = element("g", { class: "units" }, this.canvas);
      this.edgeElements = new Map(); // "child:position" -> the edge drawn for it
      this.nodeElements = new Map(); // node index -> element (expanded nodes)
      this.groupElements = new Map(); // group index -> element (collapsed groups)
      this.unitOfNode = new Map();
      this.drawEdges(edgeLayer, edges, placed);
      units.forEach((unit, u) => this.drawUnit(unitLayer, unit, u, placed));
      for (const n of this.nodes) {
        this.unitOfNode.set(n, this.nodeElements.get(n) || this.groupElements.get(this.closedBox(n)));
      }
      this.refresh();
      this.active = null; // drawn anew: mark the step's edge and node in the new drawing
      if (this.activeKey !== undefined) this.setActiveEdge(this.activeKey);
      if (this.view) this.camera.show(this.view); // as this pass was left
      else this.fit();
      this.reveal(this.current, this.into);
    }

    defs() {
      const defs = element("defs", {}, this.svg);
      const marker = element("marker", { id: "arrow", viewBox: "0 0 10 10", refX: "9", refY: "5",
        markerWidth: "8", markerHeight: "8", markerUnits: "userSpaceOnUse", orient: "auto-start-reverse" }, defs);
      element("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "arrowhead" }, marker);
    }

    // An edge enters its node at a point given by its argument position (arg 0 leftmost), so
    // that x*x's two edges from the root stay apart; the edges entering a group, side by side.
    drawEdges(layer, edges, placed) {
      const entering = new Map(); // unit -> merged edges entering it
      edges.forEach((e) => e.position === undefined && entering.set(e.to, (entering.get(e.to) || 0) + 1));
      const seen = new Map();
      edges.forEach((e, i) => {
        const target = this.units[e.to];
        let slot = 0;
        let slots = 1;
        if (e.position !== undefined) {
          slot = e.position;
          slots = this.graph.nodes.parents[target.node].length;
        } else {
          slot = seen.get(e.to) || 0;
          slots = entering.get(e.to);
          seen.set(e.to, slot + 1);
        }
        const step = Math.min(40, (target.width - 12) / slots);
        const el = this.drawEdge(layer, e, placed, i, (slot - (slots - 1) / 2) * step);
        for (const raw of e.raw) this.edgeElements.set(raw, el);
      });
    }

    drawEdge(layer, e, placed, i, offset) {
      const a = this.units[e.from];
      const b = this.units[e.to];
      const back = placed.back.has(i);
      const start = [placed.x[e.from], placed.y[e.from] + (back ? a.height / 2 : -a.height / 2)];
      const end = [placed.x[e.to] + offset, placed.y[e.to] + (back ? -b.height / 2 : b.height / 2)];
      const g = element("g", { class: back ? "edge back" : "edge", "data-edge": e.raw[0] }, layer);
      element("path", { d: back ? loop(start, end) : curve([start, ...placed.routes[i], end]),
        "marker-end": "url(#arrow)" }, g);
      const label = e.count > 1 ? "\u00d7" + e.count : "arg " + e.argnum;
      if (back) text(g, Math.max(start[0], end[0]) + 80, (start[1] + end[1]) / 2, label, "edge-label");
      else text(g, end[0], end[1] + 12, label, "edge-label");
      return g;
    }

    drawUnit(layer, unit, u, placed) {
      const x = placed.x[u] - unit.width / 2;
      const y = placed.y[u] - unit.height / 2;
      const g = element("g", { transform: `translate(${x} ${y})` }, layer);
      element("rect", { width: unit.width, height: unit.height, rx: 5 }, g);
      const title = element("title", {}, g);
      const middle = unit.width / 2;
      if (unit.node !== undefined) {
        const n = unit.node;
        g.setAttribute("class", "node");
        g.setAttribute("data-node", this.graph.nodes.label[n]);
        const nodes = this.graph.nodes;
        const name = nodes.name && nodes.name[n] ? `\n${nodes.name[n]}` : "";
        title.textContent = `${nodes.label[n]} = ${nodes.primitive[n]}${name}\nvalue ${nodes.value[n]}`;
        text(g, middle, 14, this.graph.nodes.label[n], "label");
        text(g, middle, 28, this.secondLine(n), "primitive");
        this.nodeElements.set(n, g);
      } else {
        const box = unit.group;
        g.setAttribute("class", "group");
        g.setAttribute("data-group", unit.lines.slice(0, -1).join(" "));
        title.textContent = `${unit.lines.join(": ")} (click to expand)`;
        unit.lines.forEach((line, i) => text(g, middle, 16 + 15 * i, line, i ? "primitive" : "label"));
        g.addEventListener("click", () => this.camera.moved || this.expand(box.id));
        g.boxId = box.id;
        this.groupElements.set(box.id, g);
      }
      const members = unit.node !== undefined ? [unit.node] : unit.group.members;
      adtrace.failures.mark(g, this.graph, members, unit.width, unit.height);
      g.box = { x: placed.x[u], y: placed.y[u], w: unit.width, h: unit.height + 16 }; // (+ its edges' "arg k")
    }

    // -------------------- state: classes follow the steps --------------------

    // Recompute the classes of the given nodes (all when omitted) and of their collapsed groups.
    refresh(nodes) {
      const groups = new Set();
      for (const n of nodes || this.nodes) {
        const el = this.nodeElements.get(n);
        if (el) el.setAttribute("class", "node " + this.status(n));
        else groups.add(this.closedBox(n));
      }
      for (const g of groups) this.refreshGroup(g);
    }

    refreshGroup(id) {
      const el = this.groupElements.get(id);
      if (!el) return;
      const inside = this.groups.boxes.get(id).members.filter((n) => this.unitOfNode.get(n) === el);
      const statuses = inside.map((n) => this.status(n));
      const has = (s) => statuses.includes(s);
      const status = has("current") ? "holds-current" : has("waiting") ? "waiting"
        : statuses.every((s) => s === "visited") ? "visited" : has("visited") ? "partly" : "";
      el.setAttribute("class", "group " + status);
    }

    setActiveEdge(key) {
      if (this.active) this.active.classList.remove("active");
      this.activeKey = key;
      this.active = key === null ? null : this.edgeElements.get(key) || null;
      if (this.active) this.active.classList.add("active");
    }

    expand(id) {
      this.expanded.add(id);
      this.draw();
    }

    // Every node drawn (on), or every box closed; returns why it is refused, if it is (too many nodes).
    expandAll(on) {
      const refused = on && adtrace.groups.expandAllRefusal(this.nodes.length);
      if (refused) return refused;
      const [all, expanded, view] = [this.all, this.expanded, this.view];
      this.all = on;
      this.expanded = new Set();
      this.view = null;
      this.draw();
      const direct = on && this.placed.direct;
      if (!direct) return null;
      [this.all, this.expanded, this.view] = [all, expanded, view]; // as it was
      this.draw();
      return adtrace.groups.expandAllRefusal(this.nodes.length, direct);
    }

    // -------------------- what is in sight --------------------

    // Readable: labels at least 11px, the drawing shown in part when it is larger.
    fit() {
      this.view = this.camera.fit(this.placed.width, this.placed.height, READABLE);
      this.reveal(this.current, this.into);
    }

    // The whole drawing in sight, however small (least scale 0); auto-pan then zooms back in only
    // when the current node and the node being added into are out of sight.
    fitWhole() {
      this.view = this.camera.fit(this.placed.width, this.placed.height, 0);
    }

    // Keep the current node and the node being added into (or their groups) in sight, the current node
    // drawn with its parents and consumers; then also after the svg changes size.
    reveal(n, into) {
      this.current = n;
      this.into = into;
      this.camera.refitted = () => this.reveal(this.current, this.into);
      if (!this.all && this.placed && n !== null && n !== undefined && n !== this.nearOf) {
        this.nearOf = n;
        const near = new Set([n, ...this.graph.nodes.parents[n].map(([, p]) => p), ...(this.consumers.get(n) || [])]
          .filter((m) => this.inPass.has(m)));
        const drawn = (m) => this.nodeElements.has(m);
        const changed = [...near].some((m) => !drawn(m)) || [...this.near].some((m) => !near.has(m) && drawn(m));
        this.near = near;
        if (changed) return this.draw(); // (draw reveals n and into)
      }
      const boxes = [n, into].filter((m) => m !== null && m !== undefined && this.unitOfNode.get(m))
        .map((m) => this.unitOfNode.get(m).box);
      this.camera.revealBoxes(boxes);
    }
  }

  adtrace.GraphView = GraphView;
})(window.adtrace = window.adtrace || {});

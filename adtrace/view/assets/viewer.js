// adtrace viewer: plays one pass of autograd statement by statement.
//
// The page's data (adtrace/view/data.py documents it) holds each pass's steps by column, and the
// two dicts it shows (autograd's outgrads or tangents, the lecture's node_to_grad or tangents) as
// deltas per step. A move of a few steps is walked in place (applied forward, undone backward), a jump
// replays from the nearest stored state (steps.js); the panels change only the rows that differ.
(function (adtrace) {
  "use strict";

  const DATA = JSON.parse(document.getElementById("adtrace-data").textContent);

  function byTestId(id) {
    return document.querySelector(`[data-testid="${id}"]`);
  }

  function make(tag, cls, content, parent) {
    const el = document.createElement(tag);
    if (cls) el.className = cls;
    if (content !== undefined && content !== null) el.textContent = content;
    if (parent) parent.appendChild(el);
    return el;
  }

  const { emptyState, Replay } = adtrace.steps; // (steps.js: the state after any step)

  // -------------------- a dict on screen --------------------

  // One row per entry, in the dict's insertion order; the value is an element with data-node.
  class DictPanel {
    constructor(container, labels, show) {
      this.container = container;
      this.labels = labels;
      this.show = show; // entry -> text
      this.rows = new Map();
    }

    reset(map) {
      this.container.textContent = "";
      this.rows = new Map();
      const fragment = document.createDocumentFragment();
      map.forEach((entry, node) => this.row(node, entry, fragment));
      this.container.appendChild(fragment);
    }

    row(node, entry, parent) {
      const row = make("div", "entry", null, parent || this.container);
      make("span", "key", this.labels[node] + ": ", row);
      const value = make("span", "value", this.show(entry), row);
      value.setAttribute("data-node", this.labels[node]);
      this.rows.set(node, row);
      return row;
    }

    update(node, map) {
      const row = this.rows.get(node);
      if (!map.has(node)) {
        if (row) row.remove();
        this.rows.delete(node);
      } else if (row) {
        row.lastChild.textContent = this.show(map.get(node));
      } else {
        this.row(node, map.get(node));
      }
    }

    mark(node, cls) {
      if (this.marked) this.marked.classList.remove(cls);
      this.marked = this.rows.get(node) || null;
      if (this.marked) this.marked.classList.add(cls);
    }
  }

  function lectureText(entry) {
    if (!entry.items.length) return entry.value;
    const list = "[" + entry.items.join(", ") + "]";
    return entry.value === null ? list : `${list}, summed: ${entry.value}`;
  }

  // -------------------- the viewer --------------------

  class Viewer {
    constructor() {
      this.passes = new Map(DATA.passes.map((p) => [p.id, p]));
      this.replays = new Map();
      this.views = new Map();
      this.pass = null;
      this.k = -1;
      this.state = emptyState();
    }

    open(id, k) {
      const pass = this.passes.get(id);
      if (!pass) return;
      if (pass !== this.pass) this.switchPass(pass);
      this.go(k);
    }

    switchPass(pass) {
      this.pass = pass;
      if (!this.replays.has(pass.id)) this.replays.set(pass.id, new Replay(pass));
      const graph = DATA.graphs[pass.graph];
      const labels = graph.nodes.label;
      this.engine = new DictPanel(byTestId("outgrads"), labels, (text) => text);
      this.lecture = new DictPanel(byTestId("node-to-grad"), labels, lectureText);
      this.labels = labels;
      this.k = -1;
      this.state = emptyState();
      this.engine.reset(this.state.engine);
      this.lecture.reset(this.state.lecture);
      this.camera = this.camera || new adtrace.svg.Camera(byTestId("graph"));
      if (!this.views.has(pass.id)) {
        this.views.set(pass.id, new adtrace.GraphView(this.camera, graph, pass, (n) => this.status(n)));
      }
      this.graph = this.views.get(pass.id);
      this.graph.draw();
      adtrace.panels.showPass(this, pass);
    }

    get count() {
      return this.pass ? this.pass.steps.statement.length : 0;
    }

    status(n) {
      if (n === this.pass.steps.node[this.k]) return "current";
      if (this.pass.mode === "rev" && this.state.engine.has(n) && !this.state.visited.has(n)) return "waiting";
      return this.state.visited.has(n) ? "visited" : "";
    }

    // Go to step k (0-based): a few steps are walked in place, anything else rebuilt.
    go(k) {
      if (!this.count) return adtrace.panels.showStep(this);
      k = Math.max(0, Math.min(this.count - 1, k));
      const before = this.pass.steps.node[this.k];
      const replay = this.replays.get(this.pass.id);
      const born = (n) => this.state.born.get(n);
      if (Math.abs(k - this.k) <= adtrace.steps.WALK) {
        const touched = [...replay.walk(this.state, this.k, k)];
        this.k = k;
        touched.forEach((n) => {
          const had = this.engine.rows.has(n);
          this.engine.update(n, this.state.engine);
          if (!had) adtrace.steps.place(this.engine, n, born); // (an undone pop: back in its place)
          this.lecture.update(n, this.state.lecture);
        });
        const changed = [...touched, before, this.pass.steps.node[k]];
        this.graph.refresh(changed.filter((n) => n !== null && n !== undefined));
      } else {
        this.k = k;
        const state = replay.stateAfter(k);
        adtrace.steps.sync(this.engine, this.state.engine, state.engine, (n) => state.born.get(n));
        adtrace.steps.sync(this.lecture, this.state.lecture, state.lecture, adtrace.steps.positions(state.lecture));
        this.state = state;
        this.graph.refresh();
      }
      adtrace.panels.showStep(this);
    }
  }

  adtrace.Viewer = Viewer;
  adtrace.DATA = DATA;
  adtrace.make = make;
  adtrace.byTestId = byTestId;
})(window.adtrace = window.adtrace || {});

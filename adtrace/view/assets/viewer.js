// adtrace viewer: plays one pass of autograd statement by statement.
//
// The page's data (adtrace/view/data.py documents it) holds each pass's steps by column, and the
// two dicts it shows (autograd's outgrads or tangents, the lecture's node_to_grad or tangents) as
// deltas per step. The state after step k is rebuilt by replaying the deltas from the nearest
// checkpoint; stepping forward applies one delta to what is on screen.
(function (adtrace) {
  "use strict";

  const CHECKPOINT_EVERY = 256; // steps between stored states (for jumps)
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

  // -------------------- replaying the deltas --------------------

  // A state: autograd's dict (node -> text), the lecture's (node -> {items, value}) and the
  // nodes visited so far (popped in reverse mode, built in forward mode).
  function emptyState() {
    return { engine: new Map(), lecture: new Map(), visited: new Set() };
  }

  function copyState(s) {
    const lecture = new Map();
    s.lecture.forEach((entry, node) => lecture.set(node, { items: entry.items.slice(), value: entry.value }));
    return { engine: new Map(s.engine), lecture, visited: new Set(s.visited) };
  }

  // Apply step k's deltas to state s; returns the nodes whose entries changed.
  function applyStep(pass, s, k) {
    const touched = [];
    const change = pass.steps.state[k];
    if (change) {
      const [op, node, text] = change;
      if (op === "pop") {
        s.engine.delete(node);
        s.visited.add(node);
      } else if (op === "visit") { // an engine whose .grad stays after the visit
        s.visited.add(node);
      } else {
        s.engine.set(node, text);
        if (pass.mode === "fwd") s.visited.add(node);
      }
      touched.push(node);
    }
    const lecture = pass.steps.lecture[k];
    if (lecture) {
      const [op, node, text] = lecture;
      if (!s.lecture.has(node)) s.lecture.set(node, { items: [], value: null });
      const entry = s.lecture.get(node);
      if (op === "append") entry.items.push(text);
      else entry.value = text;
      touched.push(node);
    }
    return touched;
  }

  class Replay {
    constructor(pass) {
      this.pass = pass;
      this.checkpoints = [emptyState()]; // checkpoints[j]: the state before step j * CHECKPOINT_EVERY
    }

    // The state after step k (a fresh copy).
    stateAfter(k) {
      const target = k + 1;
      let j = Math.min(Math.floor(target / CHECKPOINT_EVERY), this.checkpoints.length - 1);
      const s = copyState(this.checkpoints[j]);
      for (let step = j * CHECKPOINT_EVERY; step < target; step++) {
        applyStep(this.pass, s, step);
        if ((step + 1) % CHECKPOINT_EVERY === 0 && this.checkpoints.length === (step + 1) / CHECKPOINT_EVERY) {
          this.checkpoints.push(copyState(s));
        }
      }
      return s;
    }
  }

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

    // Go to step k (0-based): one step forward is applied in place, anything else rebuilt.
    go(k) {
      if (!this.count) return adtrace.panels.showStep(this);
      k = Math.max(0, Math.min(this.count - 1, k));
      const before = this.pass.steps.node[this.k];
      if (k === this.k + 1) {
        this.k = k;
        const touched = applyStep(this.pass, this.state, k);
        touched.forEach((n) => {
          this.engine.update(n, this.state.engine);
          this.lecture.update(n, this.state.lecture);
        });
        const changed = [...touched, before, this.pass.steps.node[k]];
        this.graph.refresh(changed.filter((n) => n !== null && n !== undefined));
      } else {
        this.k = k;
        this.state = this.replays.get(this.pass.id).stateAfter(k);
        this.engine.reset(this.state.engine);
        this.lecture.reset(this.state.lecture);
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

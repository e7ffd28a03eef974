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

  const ROWS = 200; // rows a dict panel draws anew, at most: a 100,000-entry dict as rows takes the page seconds

  // One row per entry drawn, in the order of key(node); the value is an element with data-node. A dict of more
  // than ROWS entries shows its last ROWS, and the rows steps change since (the row marked always), the others
  // counted in a line above it, with a filter that draws the entries whose label has a text.
  class DictPanel {
    constructor(container, labels, show, key) {
      this.container = container;
      this.labels = labels;
      this.show = show; // entry -> text
      this.key = key; // node -> its place in the panel's order
      this.map = new Map();
      this.rows = new Map();
      const id = container.getAttribute("data-testid");
      const old = container.parentNode.querySelector(".more");
      if (old) old.remove(); // (a panel per pass: the line and its filter are this panel's)
      this.more = make("div", "note more");
      this.more.setAttribute("data-testid", id + "-more");
      this.counted = make("span", null, null, this.more);
      this.filter = make("input", "filter", null, this.more);
      Object.assign(this.filter, { type: "search", placeholder: "find a node" });
      this.filter.setAttribute("aria-label", "draw the entries whose label has this text");
      this.filter.setAttribute("data-testid", id + "-filter");
      this.filter.addEventListener("input", () => {
        this.reset();
        if (this.marking) this.mark(...this.marking);
      });
      container.before(this.more);
    }

    // Whether node's entry may be drawn (the filter's text in its label, or no filter).
    shows(node) {
      return !this.filter.value || this.labels[node].includes(this.filter.value);
    }

    reset() {
      this.container.textContent = "";
      this.rows = new Map();
      this.marked = null;
      const fragment = document.createDocumentFragment();
      const shown = [];
      adtrace.steps.ordered(this.map, this.key).forEach((entry, node) => this.shows(node) && shown.push([node, entry]));
      shown.slice(-ROWS).forEach(([node, entry]) => this.row(node, entry, fragment));
      this.container.appendChild(fragment);
      this.count();
    }

    row(node, entry, parent) {
      const row = make("div", "entry", null, parent || this.container);
      make("span", "key", this.labels[node] + ": ", row);
      const value = make("span", "value", this.show(entry), row);
      value.setAttribute("data-node", this.labels[node]);
      row.adtraceNode = node;
      this.rows.set(node, row);
      return row;
    }

    // Node's row follows the map: removed, changed, or drawn in its place.
    update(node) {
      const row = this.rows.get(node);
      if (!this.map.has(node)) {
        if (row) row.remove();
        this.rows.delete(node);
      } else if (row) {
        row.lastChild.textContent = this.show(this.map.get(node));
      } else if (this.shows(node)) {
        this.place(this.row(node, this.map.get(node)));
        this.trim(this.rows.get(node));
      }
    }

    // A new row, put at the end: moved up to its place by key.
    place(row) {
      const key = this.key(row.adtraceNode);
      let next = row;
      while (next.previousSibling && this.key(next.previousSibling.adtraceNode) > key) next = next.previousSibling;
      if (next !== row) this.container.insertBefore(row, next);
    }

    // Past 2 * ROWS rows, the first rows go (but the marked one and keep) until ROWS are left.
    trim(keep) {
      if (this.rows.size <= 2 * ROWS) return;
      for (let row = this.container.firstChild; row && this.rows.size > ROWS;) {
        const next = row.nextSibling;
        if (row !== keep && row !== this.marked) {
          row.remove();
          this.rows.delete(row.adtraceNode);
        }
        row = next;
      }
    }

    // The entries not drawn, counted.
    count() {
      const more = this.map.size - this.rows.size;
      this.more.hidden = !more && !this.filter.value;
      const entries = more === 1 ? "1 more entry" : `${more.toLocaleString("en-US")} more entries`;
      const drawn = this.filter.value ? `the last ${ROWS} whose label has "${this.filter.value}"`
        : `the last ${ROWS} and those the steps since changed`;
      this.counted.textContent = `${entries} not drawn (a panel draws ${drawn}) `;
    }

    // The row of node marked (drawn if it was not), as the current step's; rows drawn anew when steps back
    // have removed half of them.
    mark(node, cls) {
      this.marking = [node, cls];
      if (this.rows.size < ROWS / 2 && this.map.size > this.rows.size && !this.filter.value) this.reset();
      if (this.marked) this.marked.classList.remove(cls);
      if (!this.rows.has(node) && this.map.has(node)) this.update(node);
      this.marked = this.rows.get(node) || null;
      if (this.marked) this.marked.classList.add(cls);
      this.count();
      this.scrollTo(this.marked);
    }

    // A row scrolled into the panel's view, when the panel scrolls (the panel alone: the page stays).
    scrollTo(row) {
      const panel = this.container;
      if (!row || panel.scrollHeight <= panel.clientHeight) return;
      const top = row.getBoundingClientRect().top - panel.getBoundingClientRect().top - panel.clientTop + panel.scrollTop;
      if (top < panel.scrollTop) panel.scrollTop = top;
      else if (top + row.offsetHeight > panel.scrollTop + panel.clientHeight) {
        panel.scrollTop = top + row.offsetHeight - panel.clientHeight;
      }
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
      this.engine = new DictPanel(byTestId("outgrads"), labels, (text) => text, (n) => this.state.born.get(n));
      this.lecture = new DictPanel(byTestId("node-to-grad"), labels, lectureText, (n) => {
        const entry = this.state.lecture.get(n);
        return entry ? entry.at : -1;
      });
      this.labels = labels;
      this.k = -1;
      this.state = emptyState();
      this.engine.map = this.state.engine;
      this.lecture.map = this.state.lecture;
      this.engine.reset();
      this.lecture.reset();
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
      if (Math.abs(k - this.k) <= adtrace.steps.WALK) {
        const touched = [...replay.walk(this.state, this.k, k)];
        this.k = k;
        for (const panel of [this.engine, this.lecture]) { // (rows removed first: a row is placed among those left)
          touched.forEach((n) => panel.map.has(n) || panel.update(n));
          touched.forEach((n) => panel.map.has(n) && panel.update(n));
        }
        const changed = [...touched, before, this.pass.steps.node[k]];
        this.graph.refresh(changed.filter((n) => n !== null && n !== undefined));
      } else {
        this.k = k;
        this.state = replay.stateAfter(k); // (the panels' keys read it)
        adtrace.steps.sync(this.engine, this.state.engine);
        adtrace.steps.sync(this.lecture, this.state.lecture);
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

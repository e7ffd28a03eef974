// adtrace viewer: the groups of a big graph. A group is the nodes one source line made (or one primitive);
// when its nodes repeat one pattern of primitives, period after period (a loop's iterations: same line,
// same shape), it is split by iteration, and runs of iterations by range, so that no level shows more
// than FAN boxes: the line, then "iterations 1-32 of 1000", then "iteration 412 of 1000", then its nodes,
// one level expanded per click.
(function (adtrace) {
  "use strict";

  const FAN = 32; // boxes shown per expanded level, at most
  const MAX_PERIOD = 64; // nodes per iteration, at most, for a repeat to be found
  const EXPAND_ALL_LIMIT = 600; // nodes the layout draws expanded cleanly (edges around nodes, in time)

  // "1 node", "4,000 nodes"
  function counted(n, noun) {
    return `${n.toLocaleString("en-US")} ${noun}${n === 1 ? "" : "s"}`;
  }

  // The smallest period of a sequence of primitives, repeated at least twice, or 0.
  function periodOf(primitives) {
    for (let p = 1; p <= MAX_PERIOD && 2 * p <= primitives.length; p++) {
      let repeats = true;
      for (let i = p; i < primitives.length && repeats; i++) repeats = primitives[i] === primitives[i - p];
      if (repeats && primitives.length % p === 0) return p;
    }
    return 0;
  }

  // The tree of boxes of one pass: group index -> {period, iterations}, and each node's path of box ids
  // from the outermost (its group) to the innermost (its iteration), computed on demand.
  class Groups {
    constructor(graph, nodes) {
      this.graph = graph;
      this.members = new Map(); // group index -> node indices of this pass, in creation order
      for (const n of nodes) {
        const g = graph.nodes.group[n];
        if (!this.members.has(g)) this.members.set(g, []);
        this.members.get(g).push(n);
      }
      this.repeat = new Map(); // group index -> {period, iterations, at: node -> its place in the group}
      this.members.forEach((list, g) => {
        const period = periodOf(list.map((n) => graph.nodes.primitive[n]));
        if (!period) return;
        const at = new Map(list.map((n, i) => [n, i]));
        this.repeat.set(g, { period, iterations: list.length / period, at });
      });
      this.boxes = new Map(); // box id -> {id, group, first, last (iterations, 0-based), members}
    }

    // The ids of the boxes holding node n, outermost first.
    path(n) {
      const g = this.graph.nodes.group[n];
      const ids = [this.box(g, null, null).id];
      const repeat = this.repeat.get(g);
      if (!repeat) return ids;
      const iteration = Math.floor(repeat.at.get(n) / repeat.period);
      let first = 0;
      let last = repeat.iterations - 1;
      while (last > first) {
        const count = last - first + 1;
        const size = Math.ceil(count / FAN); // (at most FAN boxes at each level)
        first += Math.floor((iteration - first) / size) * size;
        last = Math.min(last, first + size - 1);
        ids.push(this.box(g, first, last).id);
      }
      return ids;
    }

    // The box of group g's iterations first..last (null: the whole group), made once.
    box(g, first, last) {
      const id = first === null ? `g${g}` : `g${g}:${first}-${last}`;
      if (!this.boxes.has(id)) {
        const all = this.members.get(g);
        const repeat = this.repeat.get(g);
        const members = first === null ? all : all.slice(first * repeat.period, (last + 1) * repeat.period);
        this.boxes.set(id, { id, group: g, first, last, members });
      }
      return this.boxes.get(id);
    }

    // A box's two lines of text: where it is, and what it holds.
    describe(box) {
      const key = this.graph.groups[box.group].key;
      const repeat = this.repeat.get(box.group);
      const nodes = counted(box.members.length, "node");
      if (!repeat) return [key, nodes];
      if (box.first === null) return [key, `${counted(repeat.iterations, "iteration")}, ${nodes}`];
      const of = ` of ${repeat.iterations.toLocaleString("en-US")}`;
      if (box.first === box.last) return [key, `iteration ${box.first + 1}${of}`, nodes];
      return [key, `iterations ${box.first + 1}-${box.last + 1}${of}`, nodes];
    }
  }

  // Why "expand all" is refused for this many nodes, or null.
  // (direct: how many edges the layout would draw straight, maybe through nodes, when it tried)
  function expandAllRefusal(count, direct) {
    const why = direct ? `${counted(direct, "edge")} would be drawn through nodes`
      : count > EXPAND_ALL_LIMIT ? `too many to draw expanded (at most ${EXPAND_ALL_LIMIT})` : null;
    if (!why) return null;
    return `${counted(count, "node")}: ${why}; click a box to expand it one level, or step: the current node ` +
      "and its neighbours are always drawn";
  }

  // A message beside the graph's buttons (null: none).
  function say(message) {
    let el = document.querySelector('[data-testid="graph-message"]');
    if (!el) {
      el = document.createElement("span");
      el.className = "note";
      el.setAttribute("data-testid", "graph-message");
      document.querySelector('[data-testid="collapse-all"]').after(el);
    }
    el.textContent = message || "";
    el.hidden = !message;
  }

  adtrace.groups = { say,  Groups, counted, periodOf, expandAllRefusal, FAN, EXPAND_ALL_LIMIT };
})(window.adtrace = window.adtrace || {});

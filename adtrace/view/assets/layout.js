// adtrace viewer: a layered layout for autograd's graphs (inputs at the bottom, output on top).
//
// The graph comes with a topological order for free: nodes are numbered in creation order, and
// a node is created after its parents. So the layers are longest paths from the inputs in one
// pass; an edge spanning several layers gets a chain of dummy points, one per layer it crosses
// (as in Sugiyama's method and dagre), so it is routed beside the nodes, not through them; the
// order within a layer comes from a few barycenter sweeps, and the x coordinates pull each unit
// towards its neighbours without overlap. Every step is linear apart from sorting each layer.
//
// A unit is a node or a collapsed group of nodes; groups can form cycles (a loop's lines feed
// each other), so only edges from a lower to a higher key (creation order) shape the layers; the
// others are "back" edges, drawn but not laid out.
(function (adtrace) {
  "use strict";

  const SWEEPS = 4; // barycenter sweeps, alternately upward and downward
  const GAP = 22; // horizontal space between units
  const DUMMY_WIDTH = 6; // an edge passing through a layer
  const RANK_GAP = 48; // vertical space between layers

  // units: [{key, width, height}] sorted by key; edges: [{from, to}] as unit indices.
  // Returns {x, y (unit centres), width, height, back (a Set of back edge indices),
  //          routes (per edge, the [x, y] points it passes between its two ends)}.
  function layout(units, edges) {
    const g = { size: units.length, width: units.map((u) => u.width), preds: [], succs: [], rank: [] };
    for (let u = 0; u < g.size; u++) {
      g.preds.push([]);
      g.succs.push([]);
    }
    const back = new Set();
    const forward = [];
    edges.forEach((e, i) => (units[e.from].key < units[e.to].key ? forward.push(i) : back.add(i)));
    for (const i of forward) link(g, edges[i].from, edges[i].to);
    g.rank = rankUnits(g);
    const chains = addDummies(g, edges, forward, units.length);
    const layers = orderLayers(g);
    const x = placeLayers(g, layers);
    return finish(units, g, layers, x, edges, chains, back);
  }

  function link(g, from, to) {
    g.preds[to].push(from);
    g.succs[from].push(to);
  }

  function unlink(list, value) {
    list.splice(list.indexOf(value), 1);
  }

  // Longest path from the inputs: units are visited in key order, a topological order.
  function rankUnits(g) {
    const rank = new Array(g.size).fill(0);
    for (let u = 0; u < g.size; u++) {
      for (const p of g.preds[u]) rank[u] = Math.max(rank[u], rank[p] + 1);
    }
    return rank;
  }

  // Replace each edge spanning k > 1 layers by a chain of k - 1 dummies. A graph where one input
  // feeds every step of a long loop would need quadratically many: past a budget, the longest
  // edges stay direct (drawn straight through).
  function addDummies(g, edges, forward, units) {
    const span = (i) => g.rank[edges[i].to] - g.rank[edges[i].from];
    let budget = Math.max(20000, 3 * units);
    const chains = new Map(); // edge index -> its dummies, bottom to top
    const long = forward.filter((i) => span(i) > 1).sort((a, b) => span(a) - span(b) || a - b);
    for (const i of long) {
      if (span(i) - 1 > budget) break;
      budget -= span(i) - 1;
      const { from, to } = edges[i];
      unlink(g.succs[from], to);
      unlink(g.preds[to], from);
      const chain = [];
      let previous = from;
      for (let r = g.rank[from] + 1; r < g.rank[to]; r++) {
        const d = g.size++;
        g.width.push(DUMMY_WIDTH);
        g.preds.push([]);
        g.succs.push([]);
        g.rank.push(r);
        link(g, previous, d);
        chain.push(d);
        previous = d;
      }
      link(g, previous, to);
      chains.set(i, chain);
    }
    chains.direct = long.length - chains.size; // edges drawn straight, maybe through nodes
    return chains;
  }

  function orderLayers(g) {
    const layers = [];
    g.rank.forEach((r, u) => (layers[r] || (layers[r] = [])).push(u));
    for (let r = 0; r < layers.length; r++) layers[r] = layers[r] || [];
    const pos = new Float64Array(g.size);
    const setPositions = (layer) => layer.forEach((u, i) => (pos[u] = (i + 0.5) / layer.length));
    layers.forEach(setPositions);
    for (let sweep = 0; sweep < SWEEPS; sweep++) {
      const upward = sweep % 2 === 0;
      const neighbours = upward ? g.preds : g.succs;
      for (let r = upward ? 1 : layers.length - 2; r >= 0 && r < layers.length; r += upward ? 1 : -1) {
        sortByBarycenter(layers[r], neighbours, pos);
        setPositions(layers[r]);
      }
    }
    return layers;
  }

  // A unit without neighbours on that side keeps its place (its own position as barycenter).
  function sortByBarycenter(layer, neighbours, pos) {
    const bary = new Map();
    for (const u of layer) {
      const ns = neighbours[u];
      bary.set(u, ns.length ? ns.reduce((s, v) => s + pos[v], 0) / ns.length : pos[u]);
    }
    layer.sort((a, b) => bary.get(a) - bary.get(b) || a - b);
  }

  function placeLayers(g, layers) {
    const x = new Float64Array(g.size);
    for (const layer of layers) packRow(g, layer, layer.map(() => 0), x);
    for (let pass = 0; pass < 6; pass++) {
      const upward = pass % 2 === 0;
      const neighbours = upward ? g.preds : g.succs;
      for (const layer of upward ? layers : layers.slice().reverse()) {
        const desired = layer.map((u) => {
          const ns = neighbours[u];
          return ns.length ? ns.reduce((s, v) => s + x[v], 0) / ns.length : x[u];
        });
        packRow(g, layer, desired, x);
      }
    }
    return x;
  }

  // Place a row at its desired x's, left to right without overlap, then shift the row so that
  // its mean matches the desired mean (packing only ever pushes right).
  function packRow(g, layer, desired, x) {
    let right = -Infinity;
    let shift = 0;
    layer.forEach((u, i) => {
      const half = g.width[u] / 2;
      x[u] = Math.max(desired[i], right + GAP + half);
      right = x[u] + half;
      shift += desired[i] - x[u];
    });
    if (layer.length) layer.forEach((u) => (x[u] += shift / layer.length));
  }

  // Output on top: the highest layer gets y = 0. Coordinates are shifted to start at 0.
  function finish(units, g, layers, x, edges, chains, back) {
    const height = (u) => (u < units.length ? units[u].height : 0); // dummies have none
    const rowHeight = layers.map((layer) => Math.max(0, ...layer.map(height)));
    const y = new Float64Array(g.size);
    let top = 0;
    for (let r = layers.length - 1; r >= 0; r--) {
      for (const u of layers[r]) y[u] = top + rowHeight[r] / 2;
      top += rowHeight[r] + RANK_GAP;
    }
    let left = Infinity;
    let right = -Infinity;
    for (let u = 0; u < g.size; u++) {
      left = Math.min(left, x[u] - g.width[u] / 2);
      right = Math.max(right, x[u] + g.width[u] / 2);
    }
    if (!g.size) left = right = 0;
    for (let u = 0; u < g.size; u++) x[u] -= left;
    const routes = edges.map((e, i) => (chains.get(i) || []).map((d) => [x[d], y[d]]));
    return { x: x.subarray(0, units.length), y: y.subarray(0, units.length), width: right - left,
      direct: chains.direct, height: Math.max(0, top - RANK_GAP), back, routes };
  }

  adtrace.layout = layout;
})(typeof window !== "undefined" ? (window.adtrace = window.adtrace || {}) : module.exports);

// adtrace viewer: the state of a pass after any step, reached in time independent of where the step lies.
//
// A state is autograd's dict (node -> text; with the step each entry was put in, its place on screen), the
// lecture's (node -> {items, value, at: its place in the order first written}) and the nodes visited so far. A step
// forward applies its deltas; a step back undoes them from an index made once per pass (what each delta
// overwrote); a jump replays at most `every` steps from the nearest stored state. At most CHECKPOINTS
// states are stored per pass, so their memory stays a few states however long the pass.
(function (adtrace) {
  "use strict";

  const CHECKPOINTS = 32; // stored states per pass, at most
  const MIN_EVERY = 256; // steps between stored states, at least
  const WALK = 64; // a move of at most this many steps is walked in place (panels change row by row)

  function emptyState() {
    return { engine: new Map(), born: new Map(), lecture: new Map(), visited: new Set() };
  }

  function copyState(s) {
    const lecture = new Map();
    s.lecture.forEach(({ items, value, at }, node) => lecture.set(node, { items: items.slice(), value, at }));
    return { engine: new Map(s.engine), born: new Map(s.born), lecture, visited: new Set(s.visited) };
  }

  // Apply step k's deltas to state s; returns the nodes whose entries changed.
  function applyStep(pass, s, k) {
    const touched = [];
    const change = pass.steps.state[k];
    if (change) {
      const [op, node, text] = change;
      if (op === "pop") {
        s.engine.delete(node);
        s.born.delete(node);
        s.visited.add(node);
      } else if (op === "visit") { // an engine whose .grad stays after the visit
        s.visited.add(node);
      } else {
        if (!s.engine.has(node)) s.born.set(node, k);
        s.engine.set(node, text);
        if (pass.mode === "fwd") s.visited.add(node);
      }
      touched.push(node);
    }
    const lecture = pass.steps.lecture[k];
    if (lecture) {
      const [op, node, text] = lecture;
      if (!s.lecture.has(node)) s.lecture.set(node, { items: [], value: null, at: s.lecture.size });
      const entry = s.lecture.get(node);
      if (op === "append") entry.items.push(text);
      else entry.value = text;
      touched.push(node);
    }
    return touched;
  }

  // What each step's deltas overwrite, per step (-1: nothing): the step whose text autograd's entry held
  // before (a set), the step that put that entry in, whether the node was visited, the step whose text
  // was the lecture's value before (a sum or set), whether the lecture had an entry for the node.
  function undoIndex(pass) {
    const { state, lecture } = pass.steps;
    const count = state.length;
    const index = { text: new Int32Array(count), born: new Int32Array(count), visited: new Uint8Array(count),
      value: new Int32Array(count), entry: new Uint8Array(count) };
    const text = new Map();
    const born = new Map();
    const visited = new Set();
    const value = new Map();
    const entry = new Set();
    for (let k = 0; k < count; k++) {
      const change = state[k];
      if (change) {
        const [op, node] = change;
        index.text[k] = text.has(node) ? text.get(node) : -1;
        index.born[k] = born.has(node) ? born.get(node) : -1;
        index.visited[k] = visited.has(node) ? 1 : 0;
        if (op === "pop") {
          text.delete(node);
          born.delete(node);
          visited.add(node);
        } else if (op === "visit") {
          visited.add(node);
        } else {
          if (!text.has(node)) born.set(node, k);
          text.set(node, k);
          if (pass.mode === "fwd") visited.add(node);
        }
      }
      const delta = lecture[k];
      if (delta) {
        const [op, node] = delta;
        index.value[k] = value.has(node) ? value.get(node) : -1;
        index.entry[k] = entry.has(node) ? 1 : 0;
        entry.add(node);
        if (op !== "append") value.set(node, k);
      }
    }
    return index;
  }

  // Undo step k's deltas on the state after step k; returns the nodes whose entries changed.
  function undoStep(pass, index, s, k) {
    const touched = [];
    const change = pass.steps.state[k];
    if (change) {
      const node = change[1];
      const before = index.text[k];
      if (before < 0) {
        s.engine.delete(node);
        s.born.delete(node);
      } else {
        s.engine.set(node, pass.steps.state[before][2]);
        s.born.set(node, index.born[k]);
      }
      if (!index.visited[k]) s.visited.delete(node);
      touched.push(node);
    }
    const delta = pass.steps.lecture[k];
    if (delta) {
      const [op, node] = delta;
      if (!index.entry[k]) {
        s.lecture.delete(node);
      } else {
        const entry = s.lecture.get(node);
        if (op === "append") entry.items.pop();
        else entry.value = index.value[k] < 0 ? null : pass.steps.lecture[index.value[k]][2];
      }
      touched.push(node);
    }
    return touched;
  }

  class Replay {
    constructor(pass) {
      this.pass = pass;
      const count = pass.steps.statement.length;
      this.every = Math.max(MIN_EVERY, Math.ceil(count / CHECKPOINTS));
      this.checkpoints = [emptyState()]; // checkpoints[j]: the state before step j * every
      this.index = null;
    }

    // The state after step k (a fresh copy): at most `every` steps replayed.
    stateAfter(k) {
      const every = this.every;
      const target = k + 1;
      let j = Math.min(Math.floor(target / every), this.checkpoints.length - 1);
      if (j < Math.floor(target / every)) { // stored states are made in order, once
        const s = copyState(this.checkpoints[j]);
        for (let step = j * every; step < target; step++) {
          applyStep(this.pass, s, step);
          if ((step + 1) % every === 0) this.checkpoints.push(copyState(s));
        }
        j = this.checkpoints.length - 1;
      }
      const s = copyState(this.checkpoints[j]);
      for (let step = j * every; step < target; step++) applyStep(this.pass, s, step);
      return s;
    }

    // Move state s (after step `from`) to after step `to` in place, one step at a time; returns the
    // nodes whose entries changed.
    walk(s, from, to) {
      const touched = new Set();
      for (let k = from + 1; k <= to; k++) applyStep(this.pass, s, k).forEach((n) => touched.add(n));
      if (to < from && !this.index) this.index = undoIndex(this.pass);
      for (let k = from; k > to; k--) undoStep(this.pass, this.index, s, k).forEach((n) => touched.add(n));
      return touched;
    }
  }

  // -------------------- the dict panels follow the state --------------------

  // The entries of map in the order its panel shows them: by key(node), when given.
  function ordered(map, key) {
    return key ? new Map([...map].sort((a, b) => key(a[0]) - key(b[0]))) : map;
  }

  // Show newMap in a panel showing another map, changing only the rows that differ (a few, for a jump of
  // a few steps); many new rows are drawn anew.
  function sync(panel, newMap) {
    const oldMap = panel.map;
    panel.map = newMap;
    const added = [];
    newMap.forEach((entry, node) => oldMap.has(node) || added.push(node));
    if (added.length > WALK) return panel.reset();
    oldMap.forEach((entry, node) => newMap.has(node) || panel.update(node));
    newMap.forEach((entry, node) => {
      if (!oldMap.has(node) || panel.show(oldMap.get(node)) !== panel.show(entry)) panel.update(node);
    });
  }

  adtrace.steps = { emptyState, copyState, applyStep, undoStep, undoIndex, Replay, ordered, sync, WALK };
})(window.adtrace = window.adtrace || {});

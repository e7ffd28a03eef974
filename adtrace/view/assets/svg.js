// adtrace viewer: SVG helpers and the camera (pan and zoom through the viewBox).
(function (adtrace) {
  "use strict";

  const NS = "http://www.w3.org/2000/svg";
  const MAX_TEXT = 30; // characters shown on a node; the whole text is in its tooltip

  function element(name, attributes, parent) {
    const el = document.createElementNS(NS, name);
    for (const key in attributes) el.setAttribute(key, attributes[key]);
    if (parent) parent.appendChild(el);
    return el;
  }

  // Text through textContent only: a label never becomes markup.
  function text(parent, x, y, content, cls) {
    const el = element("text", { x, y, class: cls }, parent);
    el.textContent = content.length > MAX_TEXT ? content.slice(0, MAX_TEXT - 1) + "\u2026" : content;
    return el;
  }

  // A smooth path through points, leaving and entering each one vertically.
  function curve(points) {
    let d = `M ${points[0][0]} ${points[0][1]}`;
    for (let i = 1; i < points.length; i++) {
      const [x0, y0] = points[i - 1];
      const [x1, y1] = points[i];
      const middle = (y0 + y1) / 2;
      d += ` C ${x0} ${middle} ${x1} ${middle} ${x1} ${y1}`;
    }
    return d;
  }

  // A back edge (between groups of a loop) goes out of one unit's bottom, round to the right,
  // and into the other's top.
  function loop([x1, y1], [x2, y2]) {
    const reach = Math.max(60, Math.abs(y1 - y2) / 2);
    return `M ${x1} ${y1} C ${x1 + 90} ${y1 + reach} ${x2 + 90} ${y2 - reach} ${x2} ${y2}`;
  }

  // The part of the drawing in sight, {x, y, w, h} in drawing units: the wheel zooms around the
  // pointer, a drag pans. Each pass keeps its own view object; the camera shows one at a time.
  class Camera {
    constructor(svg) {
      this.svg = svg;
      this.view = null;
      this.moved = false; // the last press was a drag, not a click
      this.listen();
      // A notebook's frame, a hidden tab: the svg may have no size yet when the page first fits, or
      // get another one later; the view shown follows it (show).
      if (typeof ResizeObserver !== "undefined") new ResizeObserver(() => this.resized()).observe(svg);
    }

    // Shown again at the new size; a fitted view then brings back what auto-pan keeps in sight.
    resized() {
      if (!this.view) return;
      const fitted = this.view.fitted;
      this.show(this.view);
      if (fitted && this.refitted) this.refitted();
    }

    // A view remembers the svg's size it was made for (box) and, until it is moved, the drawing it
    // fits (fitted). Shown at another size, a fitted view is fitted again and a moved one keeps its
    // centre and scale; changed in place, so the pass that holds it keeps it.
    show(view) {
      const box = this.size();
      if (box && !(view.box && view.box.width === box.width && view.box.height === box.height)) {
        if (view.fitted || !view.box) {
          const { width, height, least } = view.fitted || { width: view.w, height: view.h };
          Object.assign(view, this.fitting(width, height, box, least));
        } else {
          const cx = view.x + view.w / 2;
          const cy = view.y + view.h / 2;
          view.w = (view.w * box.width) / view.box.width;
          view.h = (view.h * box.height) / view.box.height;
          Object.assign(view, { x: cx - view.w / 2, y: cy - view.h / 2 });
        }
        view.box = box;
      }
      this.view = view;
      this.svg.setAttribute("viewBox", `${view.x} ${view.y} ${view.w} ${view.h}`);
      return view;
    }

    size() {
      const box = this.svg.getBoundingClientRect();
      return box.width > 0 && box.height > 0 ? { width: box.width, height: box.height } : null;
    }

    // The whole drawing, up to 1.5x; one too big to read whole at the scale ``least`` (default
    // 0.35) is shown at that scale instead, from its top (the output; auto-pan then brings the
    // current node in). Without a size yet (a hidden frame), the whole drawing until the svg gets one.
    fit(width, height, least) {
      const box = this.size();
      return this.show({ ...this.fitting(width, height, box, least), box, fitted: { width, height, least } });
    }

    fitting(width, height, box, least) {
      if (!box) return { x: 0, y: 0, w: Math.max(width, 1), h: Math.max(height, 1) };
      const scale = Math.min(box.width / (Math.max(width, 200) + 40), box.height / (Math.max(height, 100) + 40), 1.5);
      if (least === undefined && scale < 0.35) return { x: 0, y: 0, w: box.width, h: box.height };
      if (scale < least) {
        const w = box.width / least;
        const h = box.height / least;
        return { x: width + 40 <= w ? (width - w) / 2 : -20, y: height + 40 <= h ? (height - h) / 2 : -20, w, h };
      }
      const w = box.width / scale;
      const h = box.height / scale;
      return { x: (width - w) / 2, y: (height - h) / 2, w, h };
    }

    // The user (or auto-pan) moved the view: another size keeps it as it is, scaled.
    moveTo(view) {
      view.fitted = null;
      return this.show(view);
    }

    // Recentre on (x, y) when it is out of sight (or always).
    reveal(x, y, always) {
      const v = this.view;
      const margin = 40;
      if (always || x < v.x + margin || x > v.x + v.w - margin || y < v.y + margin || y > v.y + v.h - margin) {
        v.x = x - v.w / 2;
        v.y = y - v.h / 2;
        this.moveTo(v);
      }
    }

    // Pan as little as needed to bring the boxes ({x, y, w, h}: centre and size, in drawing units)
    // in sight with a margin; when they are further apart than the view, zoom out just enough, back
    // to the scale chosen (by the fit or the wheel) when they are near again.
    revealBoxes(boxes) {
      const v = this.view;
      const box = this.size();
      if (!v || !box || !boxes.length) return;
      const chosen = v.scale || box.width / v.w;
      const left = Math.min(...boxes.map((b) => b.x - b.w / 2));
      const right = Math.max(...boxes.map((b) => b.x + b.w / 2));
      const top = Math.min(...boxes.map((b) => b.y - b.h / 2));
      const bottom = Math.max(...boxes.map((b) => b.y + b.h / 2));
      const margin = 20 / chosen;
      const scale = Math.min(chosen, box.width / (right - left + 2 * margin), box.height / (bottom - top + 2 * margin));
      const w = box.width / scale;
      const h = box.height / scale;
      let x = v.x + (v.w - w) / 2;
      let y = v.y + (v.h - h) / 2;
      const mx = Math.min(margin, (w - right + left) / 2);
      const my = Math.min(margin, (h - bottom + top) / 2);
      if (left < x + mx) x = left - mx;
      else if (right > x + w - mx) x = right + mx - w;
      if (top < y + my) y = top - my;
      else if (bottom > y + h - my) y = bottom + my - h;
      if (x === v.x && y === v.y && w === v.w && h === v.h) return;
      Object.assign(v, { x, y, w, h, scale: chosen });
      this.moveTo(v);
    }

    listen() {
      const svg = this.svg;
      svg.addEventListener("wheel", (event) => {
        if (!this.view) return;
        event.preventDefault();
        const v = this.view;
        const box = svg.getBoundingClientRect();
        const factor = Math.exp(event.deltaY * 0.0015);
        const px = v.x + ((event.clientX - box.left) / box.width) * v.w;
        const py = v.y + ((event.clientY - box.top) / box.height) * v.h;
        Object.assign(v, { x: px - (px - v.x) * factor, y: py - (py - v.y) * factor, w: v.w * factor, h: v.h * factor,
          scale: undefined }); // (auto-pan keeps this scale now)
        this.moveTo(v);
      }, { passive: false });
      let start = null;
      svg.addEventListener("pointerdown", (event) => {
        start = this.view && { x: event.clientX, y: event.clientY, view: { ...this.view } };
        this.moved = false;
      });
      svg.addEventListener("pointermove", (event) => {
        if (!start) return;
        const box = svg.getBoundingClientRect();
        const dx = event.clientX - start.x;
        const dy = event.clientY - start.y;
        if (Math.abs(dx) + Math.abs(dy) > 4) this.moved = true;
        this.view.x = start.view.x - (dx * start.view.w) / box.width;
        this.view.y = start.view.y - (dy * start.view.h) / box.height;
        this.moveTo(this.view);
      });
      const stop = () => (start = null);
      svg.addEventListener("pointerup", stop);
      svg.addEventListener("pointerleave", stop);
    }
  }

  adtrace.svg = { element, text, curve, loop, Camera };
})(window.adtrace = window.adtrace || {});

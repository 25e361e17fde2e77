// mcp_notebook timeline view (anywidget ES module, no dependencies, no CDN).
//
// Python sends `view`: the visible window already cut and, when too dense, binned
// (see aggregate.py). This module only draws it on a canvas and reports the user's
// window (zoom / pan), width, brushed range and clicked frame back to Python.
// Every string from a trace is drawn with fillText or set with textContent: never HTML.

const OUTCOME_COLOR = {
  result: "#79a6c9", error: "#d36b66", tool_error: "#e2a542",
  unanswered: "#a9adb3", cancelled: "#a891cf",
};
const OUTCOME_LABEL = {
  result: "result", error: "error", tool_error: "tool error (isError)",
  unanswered: "unanswered", cancelled: "cancelled",
};
const TICK_COLOR = {
  notification: "#3e8e85", stderr: "#9c8a68", log: "#b9ae92", invalid: "#8e3b5f",
  orphan: "#d2785a", duplicate: "#c45f8a",
};
const TICK_LABEL = {
  notification: "notification", stderr: "stderr", log: "log", invalid: "invalid frame",
  orphan: "orphan response", duplicate: "duplicate response",
};
const SEV_COLOR = { error: "#c0392b", warning: "#e08e0b", info: "#7f8c8d" };
const INFLIGHT = "#8fb0cc";
const LABEL_W = 190, AXIS_H = 24, LANE_H = 30, STRIP_H = 46, PAD_R = 12, PAD_B = 6;

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function niceStep(span, target) {
  const raw = span / Math.max(1, target);
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
  return 10 * p;
}

function fmtDur(s) {
  const a = Math.abs(s);
  if (a === 0) return "0";
  if (a < 1e-3) return (s * 1e6).toFixed(0) + " µs";
  if (a < 1) return +(s * 1e3).toFixed(a < 0.01 ? 2 : 1) + " ms";
  if (a < 120) return +s.toFixed(a < 10 ? 3 : 1) + " s";
  if (a < 7200) return +(s / 60).toFixed(2) + " min";
  return +(s / 3600).toFixed(2) + " h";
}

// The longest prefix of text (plus "…") that fits in maxW pixels, by binary search over
// the prefix length: a few measureText calls whatever the label's length.
function fitLabel(ctx, text, maxW) {
  if (ctx.measureText(text).width <= maxW) return text;
  let lo = 0, hi = Math.min(text.length, 400);
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (ctx.measureText(text.slice(0, mid) + "…").width <= maxW) lo = mid; else hi = mid - 1;
  }
  return text.slice(0, lo) + "…";
}

// An axis tick label whose precision follows the tick step, so labels never repeat.
function fmtTick(t, step, axis) {
  if (axis === "seq") return "#" + Math.round(t);
  const sign = t < 0 ? "−" : "+", a = Math.abs(t);
  const d = Math.min(6, Math.max(0, Math.ceil(-Math.log10(step) - 1e-9)));
  if (a === 0) return "0";
  // under a second in ms ("+50 ms", "+2.5 ms"), past it in s with the step's precision
  if (a < 1 && step < 1) return sign + +(a * 1e3).toFixed(Math.max(0, d - 3)) + " ms";
  if (a < 60 && step < 1) return sign + a.toFixed(d) + " s";
  if (a < 60) return sign + a.toFixed(0) + " s";
  // past a minute: "+1 h 23 min", "+5 min 20 s" (never "+1:23:20")
  const h = Math.floor(a / 3600), m = Math.floor((a - h * 3600) / 60), sec = a - h * 3600 - m * 60;
  const parts = [];
  if (h) parts.push(h + " h");
  if (m || (h && sec)) parts.push(m + " min");
  if (sec >= 0.0005 && step < 60) parts.push(+sec.toFixed(Math.max(0, d)) + " s");
  return sign + (parts.join(" ") || "0 s");
}

const fmtN = (n) => Number(n).toLocaleString("en-US");

function fmtAxis(t, axis) {
  return axis === "seq" ? "#" + Math.round(t) : (t < 0 ? "−" + fmtDur(-t) : "+" + fmtDur(t));
}

// The view as Python packed it: compact JSON, zlib-compressed (DecompressionStream's
// "deflate" is the zlib format), arriving as a binary buffer (a DataView).
async function unpack(buf) {
  if (!buf || !buf.byteLength) return {};
  const bytes = buf instanceof ArrayBuffer ? new Uint8Array(buf)
    : new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
  return JSON.parse(await new Response(stream).text());
}

function render({ model, el: host }) {
  const root = el("div", "mnt");
  const bar = el("div", "mnt-bar");
  const title = el("span", "mnt-title", "timeline");
  const laneGroup = el("span", "mnt-group");
  const byDir = el("button", "mnt-btn", "lanes: direction");
  const byMethod = el("button", "mnt-btn", "lanes: method");
  laneGroup.append(byDir, byMethod);
  const fitBtn = el("button", "mnt-btn", "fit");
  const zoomSel = el("button", "mnt-btn", "zoom to range");
  const clearSel = el("button", "mnt-btn", "clear range");
  const selInfo = el("span", "mnt-sel");
  const picker = el("details", "mnt-picker");
  const pickSum = el("summary", "mnt-btn", "sessions");
  const pickList = el("div", "mnt-picklist");
  picker.append(pickSum, pickList);
  const foldBtn = el("button", "mnt-btn", "collapse all");
  bar.append(title, laneGroup, picker, foldBtn, fitBtn, zoomSel, clearSel, selInfo);
  const note = el("div", "mnt-note");
  const plot = el("div", "mnt-plot");
  const canvas = el("canvas", "mnt-canvas");
  const tip = el("div", "mnt-tip");
  plot.append(canvas, tip);
  const legend = el("div", "mnt-legend");
  const hint = el("div", "mnt-hint");
  root.append(bar, note, plot, legend, hint);
  host.append(root);

  let data = {};         // the view, once unpacked (Python sends it zlib-compressed)
  let win = (model.get("window") || []).length === 2 ? model.get("window").slice()
    : (data.window || [0, 1]).slice();
  let drag = null;      // {x0, t0, mode: "pan"|"brush", moved, win0}
  let brushLive = null; // [a, b] while dragging
  let pushTimer = null, widthTimer = null, lastPush = -Infinity;
  let geom = null;      // last layout, for hit tests
  let placed = null;    // per-span sub-row and lane index (items mode)

  function theme() {
    const cs = getComputedStyle(root);
    const v = (n, d) => (cs.getPropertyValue(n) || "").trim() || d;
    return {
      fg: v("--jp-ui-font-color1", "#2b2f33"), fg2: v("--jp-ui-font-color2", "#6b7177"),
      bg: v("--jp-layout-color0", "#ffffff"), band: v("--jp-layout-color2", "#f3f4f6"),
      line: v("--jp-border-color2", "#dde0e4"),
      font: v("--jp-ui-font-family", "system-ui, -apple-system, 'Segoe UI', sans-serif"),
    };
  }

  function buildLegend() {
    legend.replaceChildren();
    const item = (color, label, shape) => {
      const it = el("span", "mnt-li");
      const sw = el("span", "mnt-sw mnt-sw-" + shape);
      sw.style.background = color;
      it.append(sw, el("span", "", label));
      legend.append(it);
    };
    // only what is on screen now (Python lists the codes present in the view)
    const pr = data.present || {};
    const group = (head, codes, names, colors, labels, shape) => {
      if (!codes || !codes.length) return;
      legend.append(el("span", "mnt-lh", head));
      for (const c of codes) { const n = names[c]; item(colors[n] || "#999", labels[n] || n, shape); }
    };
    group("requests:", pr.outcomes, data.outcomes || [], OUTCOME_COLOR, OUTCOME_LABEL, "bar");
    group("frames:", pr.tick_kinds, data.tick_kinds || [], TICK_COLOR, TICK_LABEL, "tick");
    group("violations:", pr.severities, data.severities || [], SEV_COLOR, {}, "tri");
    if (pr.outcomes && pr.outcomes.length) item(INFLIGHT, "requests in flight", "bar");
  }

  function buildPicker() {
    const names = data.sessions || [];
    picker.style.display = names.length > 1 ? "" : "none";
    foldBtn.style.display = names.length > 1 && model.get("lane_by") === "direction" ? "" : "none";
    const hidden = new Set(model.get("hidden") || []);
    pickSum.textContent = "sessions: " + fmtN(names.length - hidden.size) + " of " + fmtN(names.length);
    const folded = new Set(model.get("collapsed") || []);
    foldBtn.textContent = folded.size >= names.length ? "expand all" : "collapse all";
    if (!picker.open) return;  // the list is built when opened (30,000 sessions stay cheap)
    pickList.replaceChildren();
    const all = el("button", "mnt-btn", "all"), none = el("button", "mnt-btn", "none");
    all.addEventListener("click", () => { model.set("hidden", []); model.save_changes(); });
    none.addEventListener("click", () => { model.set("hidden", names.map((_, i) => i)); model.save_changes(); });
    const row = el("div", "mnt-pickrow"); row.append(all, none); pickList.append(row);
    names.slice(0, 500).forEach((name, i) => {
      const lab = el("label", "mnt-pick");
      const cb = el("input"); cb.type = "checkbox"; cb.checked = !hidden.has(i);
      cb.addEventListener("change", () => {
        const h = new Set(model.get("hidden") || []);
        if (cb.checked) h.delete(i); else h.add(i);
        model.set("hidden", Array.from(h).sort((a, b) => a - b)); model.save_changes();
      });
      lab.append(cb, el("span", "", name));
      pickList.append(lab);
    });
    if (names.length > 500) pickList.append(el("div", "mnt-hint", "first 500 sessions listed; hide others from Python: tl.show_sessions(...)"));
  }
  picker.addEventListener("toggle", buildPicker);
  foldBtn.addEventListener("click", () => {
    const n = (data.sessions || []).length, folded = (model.get("collapsed") || []).length;
    model.set("collapsed", folded >= n ? [] : Array.from({ length: n }, (_, i) => i));
    model.save_changes();
  });

  function toggleLane(l) {
    const k = (data.lane_session || [])[l];
    if (k === undefined || k < 0 || (data.sessions || []).length < 2) return false;
    const c = new Set(model.get("collapsed") || []);
    if (c.has(k)) c.delete(k); else c.add(k);
    model.set("collapsed", Array.from(c).sort((a, b) => a - b)); model.save_changes();
    return true;
  }

  function updateChrome() {
    const lb = model.get("lane_by");
    byDir.classList.toggle("mnt-on", lb === "direction");
    byMethod.classList.toggle("mnt-on", lb === "method");
    note.textContent = data.note || "";
    note.classList.toggle("mnt-binned", data.mode === "bins");
    const sel = model.get("selected_seq");
    const br = model.get("brush") || [];
    const parts = [];
    if (sel !== null && sel !== undefined) parts.push("selected frame #" + sel);
    if (br.length === 2) parts.push("range " + fmtAxis(br[0], data.axis) + " … " + fmtAxis(br[1], data.axis));
    selInfo.textContent = parts.join(" · ");
    zoomSel.disabled = br.length !== 2;
    clearSel.disabled = br.length !== 2;
    const origin = data.axis === "time" && data.origin ? "time 0 = " + data.origin + " · " : "axis: frame number · ";
    hint.textContent = origin + "Ctrl/⌘+wheel to zoom (the wheel alone scrolls the page) · drag to pan · shift+drag to select a range · click a span or tick to inspect it · click a session's label to collapse or expand it · double-click to fit";
  }

  // Greedy packing of overlapping spans into up to 3 sub-rows per lane.
  function pack(X) {
    const s = data.spans;
    if (!s) { placed = null; return; }
    const n = s.t0.length, nl = (data.lanes || []).length;
    const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => s.t0[a] - s.t0[b]);
    const ends = Array.from({ length: nl }, () => []);
    const row = new Int16Array(n);
    for (const i of order) {
      if (s.open[i]) { row[i] = -1; continue; }  // drawn as a tail at the lane's bottom
      const l = s.lane[i], x0 = X(s.t0[i]), x1 = Math.max(X(s.t1[i]), x0 + 3);
      const e = ends[l];
      let r = e.findIndex((end) => end + 1 < x0);
      if (r < 0) { r = e.length < 3 ? e.length : e.indexOf(Math.min(...e)); }
      e[r] = Math.max(e[r] || -Infinity, x1);
      row[i] = r;
    }
    placed = { row, rows: ends.map((e) => Math.max(1, e.length)) };
  }

  function draw() {
    const started = performance.now();
    const th = theme();
    const W = Math.max(320, plot.clientWidth || 900);
    const lanes = data.lanes || [];
    const H = AXIS_H + Math.max(1, lanes.length) * LANE_H + STRIP_H + PAD_B;
    const dpr = window.devicePixelRatio || 1;
    canvas.width = Math.round(W * dpr); canvas.height = Math.round(H * dpr);
    canvas.style.width = W + "px"; canvas.style.height = H + "px";
    const ctx = canvas.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, W, H);
    const x0 = LABEL_W, pw = W - LABEL_W - PAD_R;
    const [lo, hi] = win;
    const X = (t) => x0 + ((t - lo) / (hi - lo)) * pw;
    const laneTop = (l) => AXIS_H + l * LANE_H;
    const stripTop = AXIS_H + lanes.length * LANE_H + 4;
    geom = { W, H, x0, pw, lo, hi, X, laneTop, stripTop, n: lanes.length };
    ctx.font = "12px " + th.font;
    ctx.textBaseline = "middle";

    // lane bands and labels
    for (let l = 0; l < lanes.length; l++) {
      if (l % 2 === 0) { ctx.fillStyle = th.band; ctx.fillRect(0, laneTop(l), W, LANE_H); }
      ctx.fillStyle = th.fg;
      const k = (data.lane_session || [])[l], multi = (data.sessions || []).length > 1;
      const firstOfSession = k >= 0 && (l === 0 || data.lane_session[l - 1] !== k);
      const mark = multi && k >= 0 ? (data.lane_collapsed[l] ? "▸ " : (firstOfSession ? "▾ " : "   ")) : "";
      ctx.fillText(fitLabel(ctx, mark + String(lanes[l]), LABEL_W - 14), 8, laneTop(l) + LANE_H / 2);
    }
    ctx.fillStyle = th.fg2;
    ctx.fillText("in flight", 8, stripTop + STRIP_H / 2);

    // axis
    const step = niceStep(hi - lo, Math.max(2, pw / 110));
    ctx.strokeStyle = th.line; ctx.lineWidth = 1;
    ctx.beginPath(); ctx.moveTo(x0, AXIS_H - 0.5); ctx.lineTo(x0 + pw, AXIS_H - 0.5); ctx.stroke();
    ctx.textAlign = "center";
    for (let t = Math.ceil(lo / step) * step; t <= hi + 1e-12; t += step) {
      const x = Math.round(X(t)) + 0.5;
      ctx.strokeStyle = th.line;
      ctx.beginPath(); ctx.moveTo(x, AXIS_H - 5); ctx.lineTo(x, stripTop + STRIP_H); ctx.stroke();
      ctx.fillStyle = th.fg2;
      ctx.fillText(fmtTick(Math.abs(t) < step / 1e6 ? 0 : t, step, data.axis), x, 11);
    }
    ctx.textAlign = "left";

    ctx.save();
    ctx.beginPath(); ctx.rect(x0, 0, pw, H); ctx.clip();
    const sel = model.get("selected_seq");
    if (data.mode === "items") drawItems(ctx, X, laneTop, sel);
    else if (data.mode === "bins") { canvas.mntBoxes = []; drawBins(ctx, X, laneTop); }
    drawInflight(ctx, X, stripTop);
    const br = brushLive || model.get("brush") || [];
    if (br.length === 2) {
      const a = X(Math.min(br[0], br[1])), b = X(Math.max(br[0], br[1]));
      ctx.fillStyle = "rgba(70, 120, 190, 0.13)";
      ctx.fillRect(a, AXIS_H, Math.max(1, b - a), stripTop + STRIP_H - AXIS_H);
      ctx.strokeStyle = "rgba(70, 120, 190, 0.75)";
      ctx.strokeRect(a + 0.5, AXIS_H + 0.5, Math.max(1, b - a - 1), stripTop + STRIP_H - AXIS_H - 1);
    }
    ctx.restore();
    updateChrome();
    root.dataset.drawMs = (performance.now() - started).toFixed(1);  // read by the benchmark
  }

  function drawItems(ctx, X, laneTop, sel) {
    const s = data.spans, k = data.ticks, v = data.viol;
    pack(X);
    let selBox = null;
    const boxes = [];  // [kind, seq, x, y, w, h] of what was drawn (hit areas; read by tests)
    for (let i = 0; i < s.t0.length; i++) {
      const l = s.lane[i], rows = placed.rows[l], r = placed.row[i];
      const a = X(s.t0[i]), b = Math.max(X(s.t1[i]), a + 3);
      const o = data.outcomes[s.outcome[i]];
      ctx.fillStyle = OUTCOME_COLOR[o] || "#999";
      if (s.open[i]) {  // never answered: a head at the request and a dashed tail
        const yb = laneTop(l) + LANE_H - 3;
        ctx.fillRect(a, yb - 7, 3, 7);
        ctx.setLineDash([3, 3]); ctx.strokeStyle = OUTCOME_COLOR[o] || "#999"; ctx.lineWidth = 1;
        ctx.beginPath(); ctx.moveTo(a, yb - 0.5); ctx.lineTo(b, yb - 0.5); ctx.stroke();
        ctx.setLineDash([]);
        boxes.push(["span", s.seq[i], a - 1, yb - 7, 5, 7]);
        if (sel !== null && s.seq[i] === sel) selBox = [a - 1, yb - 7, 5, 7];
        continue;
      }
      const h = (LANE_H - 12) / rows, y = laneTop(l) + 5 + r * h;
      ctx.fillRect(a, y + 1, b - a, h - 2);
      if (b - a > 6) { ctx.fillStyle = "rgba(0,0,0,0.18)"; ctx.fillRect(a, y + 1, 1.5, h - 2); }
      boxes.push(["span", s.seq[i], a, y, b - a, h]);
      if (sel !== null && (s.seq[i] === sel || s.rseq[i] === sel)) selBox = [a, y, b - a, h];
    }
    for (let i = 0; i < k.t.length; i++) {
      const x = Math.round(X(k.t[i])) + 0.5, l = k.lane[i];
      ctx.strokeStyle = TICK_COLOR[data.tick_kinds[k.kind[i]]] || "#999";
      ctx.lineWidth = 2;
      ctx.beginPath(); ctx.moveTo(x, laneTop(l) + 5); ctx.lineTo(x, laneTop(l) + LANE_H - 5); ctx.stroke();
      ctx.fillStyle = ctx.strokeStyle;
      ctx.beginPath(); ctx.arc(x, laneTop(l) + 6, 2.5, 0, 2 * Math.PI); ctx.fill();
      boxes.push(["tick", k.seq[i], x - 2, laneTop(l) + 5, 4, LANE_H - 10]);
      if (sel !== null && k.seq[i] === sel) selBox = [x - 4, laneTop(l) + 2, 8, LANE_H - 4];
    }
    ctx.lineWidth = 1;
    for (let i = 0; i < v.t.length; i++) {
      tri(ctx, X(v.t[i]), laneTop(v.lane[i]) + 1, SEV_COLOR[data.severities[v.sev[i]]]);
      boxes.push(["viol", v.seq[i], X(v.t[i]) - 4.5, laneTop(v.lane[i]) + 1, 9, 7]);
    }
    canvas.mntBoxes = boxes;
    if (selBox) {
      ctx.strokeStyle = theme().fg; ctx.lineWidth = 2;
      ctx.strokeRect(selBox[0] - 1.5, selBox[1] - 0.5, selBox[2] + 3, selBox[3] + 1);
      ctx.lineWidth = 1;
    }
  }

  function tri(ctx, x, y, color) {
    ctx.fillStyle = color || "#c0392b";
    ctx.beginPath(); ctx.moveTo(x - 4.5, y); ctx.lineTo(x + 4.5, y); ctx.lineTo(x, y + 7); ctx.closePath(); ctx.fill();
  }

  function rowCounts(row, nb) {
    if (row.counts) return row.counts;
    const c = new Array(nb).fill(0);
    row.idx.forEach((b, j) => { c[b] = row.n[j]; });
    return c;
  }

  function drawBins(ctx, X, laneTop) {
    const B = data.bins, nb = B.n, [e0, e1] = B.edges, bw = (e1 - e0) / nb;
    const nl = data.lanes.length;
    const per = Array.from({ length: nl }, () => []);
    for (const row of B.spans) per[row.lane].push([row.cat, rowCounts(row, nb)]);
    for (let l = 0; l < nl; l++) {
      if (!per[l].length) continue;
      const tot = new Array(nb).fill(0);
      for (const [, c] of per[l]) c.forEach((n, b) => { tot[b] += n; });
      const mx = Math.log1p(Math.max(...tot));
      const base = laneTop(l) + LANE_H - 4, full = LANE_H - 10;
      for (let b = 0; b < nb; b++) {
        if (!tot[b]) continue;
        const h = Math.max(1.5, (Math.log1p(tot[b]) / mx) * full);
        const a = X(e0 + b * bw), w = Math.max(1, X(e0 + (b + 1) * bw) - a - 0.3);
        let y = base;
        for (const [cat, c] of per[l]) {
          if (!c[b]) continue;
          const hh = (h * c[b]) / tot[b];
          ctx.fillStyle = OUTCOME_COLOR[data.outcomes[cat]] || "#999";
          ctx.fillRect(a, y - hh, w, hh); y -= hh;
        }
      }
    }
    for (const row of B.ticks) {
      const c = rowCounts(row, nb), mx = Math.max(...c);
      const hasSpans = per[row.lane].length > 0;
      ctx.fillStyle = TICK_COLOR[data.tick_kinds[row.cat]] || "#999";
      for (let b = 0; b < nb; b++) {
        if (!c[b]) continue;
        const a = X(e0 + b * bw), w = Math.max(1, X(e0 + (b + 1) * bw) - a - 0.3);
        const f = Math.log1p(c[b]) / Math.log1p(mx);
        if (hasSpans) { ctx.globalAlpha = 0.25 + 0.75 * f; ctx.fillRect(a, laneTop(row.lane) + 3, w, 3); }
        else {
          const h = Math.max(1.5, f * (LANE_H - 10));
          ctx.fillRect(a, laneTop(row.lane) + LANE_H - 4 - h, w, h);
        }
        ctx.globalAlpha = 1;
      }
    }
    for (const row of B.viol) {
      const c = rowCounts(row, nb);
      for (let b = 0; b < nb; b++) if (c[b]) tri(ctx, X(e0 + (b + 0.5) * bw), laneTop(row.lane) + 1, SEV_COLOR[data.severities[row.cat]]);
    }
  }

  function drawInflight(ctx, X, top) {
    const f = data.inflight;
    if (!f || !f.max.length) return;
    const nb = f.max.length, [e0, e1] = f.edges, bw = (e1 - e0) / nb;
    const mx = Math.max(1, ...f.max), h = STRIP_H - 12, base = top + STRIP_H - 4;
    ctx.fillStyle = INFLIGHT;
    ctx.beginPath(); ctx.moveTo(X(e0), base);
    for (let b = 0; b < nb; b++) {
      const y = base - (f.max[b] / mx) * h;
      ctx.lineTo(X(e0 + b * bw), y); ctx.lineTo(X(e0 + (b + 1) * bw), y);
    }
    ctx.lineTo(X(e1), base); ctx.closePath(); ctx.fill();
    ctx.fillStyle = theme().fg2; ctx.textAlign = "right";
    ctx.fillText("at most " + fmtN(mx) + " in flight", geom.x0 + geom.pw - 4, top + 8); ctx.textAlign = "left";
  }

  // ---- hit testing -------------------------------------------------------
  function hit(mx, my) {
    if (!geom || mx < geom.x0 || data.mode !== "items") return null;
    const l = Math.floor((my - AXIS_H) / LANE_H);
    if (l < 0 || l >= geom.n) return null;
    const { X } = geom, k = data.ticks, s = data.spans, v = data.viol;
    // a violation marker (the top 9 px of its lane) wins over the tick under it
    for (let i = 0; i < v.t.length; i++) {
      if (v.lane[i] === l && Math.abs(X(v.t[i]) - mx) < 5 && my - geom.laneTop(l) < 9) return { type: "viol", i, seq: v.seq[i] };
    }
    let best = null, bd = 5;
    for (let i = 0; i < k.t.length; i++) {
      if (k.lane[i] !== l) continue;
      const d = Math.abs(X(k.t[i]) - mx);
      if (d < bd) { bd = d; best = { type: "tick", i, seq: k.seq[i] }; }
    }
    if (best) return best;
    let bw = Infinity;
    for (let i = 0; i < s.t0.length; i++) {
      if (s.lane[i] !== l) continue;
      const a = X(s.t0[i]), b = Math.max(X(s.t1[i]), a + 3);
      if (mx < a - 2 || mx > b + 2) continue;
      if (s.open[i]) {
        const yb = geom.laneTop(l) + LANE_H - 3;
        if (my < yb - 9 || my > yb + 2) continue;
      } else if (placed) {
        const h = (LANE_H - 12) / placed.rows[l], y = geom.laneTop(l) + 5 + placed.row[i] * h;
        if (my < y - 2 || my > y + h + 2) continue;
      }
      if (b - a < bw) { bw = b - a; best = { type: "span", i, seq: s.seq[i] }; }
    }
    return best;
  }

  function tipText(h, mx, my) {
    if (h && h.type === "span") {
      const s = data.spans, i = h.i, o = data.outcomes[s.outcome[i]];
      const m = s.method[i] >= 0 ? data.methods[s.method[i]] : "(no method)";
      const lat = s.open[i] ? "no response" : (data.axis === "time" ? fmtDur(s.t1[i] - s.t0[i]) : (s.t1[i] - s.t0[i]) + " frames later");
      return m + "\n" + (OUTCOME_LABEL[o] || o) + " · " + lat + "\nrequest #" + s.seq[i] + (s.rseq[i] >= 0 ? " → response #" + s.rseq[i] : "");
    }
    if (h && h.type === "tick") {
      const k = data.ticks, i = h.i, kind = data.tick_kinds[k.kind[i]];
      const m = k.method[i] >= 0 ? data.methods[k.method[i]] : "";
      return (TICK_LABEL[kind] || kind) + (m ? "\n" + m : "") + "\nframe #" + k.seq[i] + " at " + fmtAxis(k.t[i], data.axis);
    }
    if (h && h.type === "viol") {
      const r = (data.viol.rule || [])[h.i];
      return data.severities[data.viol.sev[h.i]] + " violation" + (r ? ": " + r : "") + "\non frame #" + h.seq;
    }
    if (data.mode === "bins" && geom && mx >= geom.x0) {
      const l = Math.floor((my - AXIS_H) / LANE_H);
      if (l < 0 || l >= geom.n) return null;
      const B = data.bins, nb = B.n, bw = (B.edges[1] - B.edges[0]) / nb;
      const t = geom.lo + ((mx - geom.x0) / geom.pw) * (geom.hi - geom.lo);
      const b = Math.floor((t - B.edges[0]) / bw);
      if (b < 0 || b >= nb) return null;
      const lines = [];
      for (const row of B.spans) if (row.lane === l) { const c = rowCounts(row, nb)[b]; if (c) lines.push(fmtN(c) + " " + (OUTCOME_LABEL[data.outcomes[row.cat]] || "")); }
      for (const row of B.ticks) if (row.lane === l) { const c = rowCounts(row, nb)[b]; if (c) lines.push(fmtN(c) + " " + (TICK_LABEL[data.tick_kinds[row.cat]] || "")); }
      if (!lines.length) return null;
      return data.lanes[l] + "\n" + fmtAxis(B.edges[0] + b * bw, data.axis) + " … " + fmtAxis(B.edges[0] + (b + 1) * bw, data.axis) + "\n" + lines.join("\n") + "\nclick to zoom in";
    }
    return null;
  }

  // ---- interaction --------------------------------------------------------
  const tOf = (mx) => geom.lo + ((mx - geom.x0) / geom.pw) * (geom.hi - geom.lo);
  const local = (e) => { const r = canvas.getBoundingClientRect(); return [e.clientX - r.left, e.clientY - r.top]; };

  function setWindow(lo, hi, push = true) {
    const [e0, e1] = data.extent || [0, 1];
    const full = Math.max(e1 - e0, 1e-9);
    const minSpan = data.axis === "seq" ? 5 : 1e-6;
    let span = Math.min(Math.max(hi - lo, minSpan), full * 1.5);
    lo = Math.max(lo, e0 - full * 0.25); lo = Math.min(lo, e1 + full * 0.25 - span);
    win = [lo, lo + span];
    if (push) {  // the first change goes to Python at once (before the local redraw), the
      // rest of a burst after it
      const send = () => { model.set("window", win.slice()); model.save_changes(); };
      const now = performance.now();
      clearTimeout(pushTimer);
      if (now - lastPush > 120) { lastPush = now; send(); }
      else pushTimer = setTimeout(() => { lastPush = performance.now(); send(); }, 60);
    }
    draw();
  }

  function fit() {
    const [e0, e1] = data.extent || [0, 1];
    const pad = Math.max((e1 - e0) * 0.02, data.axis === "seq" ? 1 : 1e-3);
    setWindow(e0 - pad, e1 + pad);
  }

  canvas.addEventListener("wheel", (e) => {
    if (!geom || !(e.ctrlKey || e.metaKey)) return;  // the page scrolls
    e.preventDefault();
    tip.style.display = "none";
    const [mx] = local(e);
    const t = tOf(Math.max(geom.x0, mx));
    const f = Math.exp((e.deltaY || e.deltaX) * 0.0015);
    setWindow(t - (t - win[0]) * f, t + (win[1] - t) * f);
  }, { passive: false });

  canvas.addEventListener("mousedown", (e) => {
    if (!geom || e.button !== 0) return;
    const [mx, my] = local(e);
    if (mx < geom.x0) {
      const l = Math.floor((my - AXIS_H) / LANE_H);
      if (l >= 0 && l < geom.n && toggleLane(l)) e.preventDefault();
      return;
    }
    e.preventDefault();
    drag = { x0: mx, t0: tOf(mx), mode: e.shiftKey ? "brush" : "pan", moved: false, win0: win.slice() };
  });

  const onMove = (e) => {
    if (!geom) return;
    const [mx, my] = local(e);
    if (drag) {
      if (Math.abs(mx - drag.x0) > 3) drag.moved = true;
      if (!drag.moved) return;
      tip.style.display = "none";
      if (drag.mode === "pan") {
        const dt = ((mx - drag.x0) / geom.pw) * (drag.win0[1] - drag.win0[0]);
        setWindow(drag.win0[0] - dt, drag.win0[1] - dt);
      } else {
        brushLive = [drag.t0, tOf(Math.min(Math.max(mx, geom.x0), geom.x0 + geom.pw))];
        draw();
      }
      return;
    }
    if (e.target !== canvas) return;
    const text = tipText(hit(mx, my), mx, my);
    if (text) {
      tip.textContent = text;
      tip.style.display = "block";
      const left = Math.min(mx + 14, geom.W - 230);
      tip.style.left = left + "px"; tip.style.top = (my + 14) + "px";
    } else tip.style.display = "none";
    canvas.style.cursor = hit(mx, my) ? "pointer" : (data.mode === "bins" ? "zoom-in" : "grab");
  };
  const onUp = (e) => {
    if (!drag) return;
    const d = drag; drag = null;
    const [mx, my] = local(e);
    if (d.mode === "brush" && d.moved && brushLive) {
      const a = Math.min(...brushLive), b = Math.max(...brushLive);
      brushLive = null;
      model.set("brush", [a, b]); model.save_changes();
      draw();
      return;
    }
    brushLive = null;
    if (d.moved) return;
    const h = hit(mx, my);
    if (h) {
      model.set("selected_seq", h.seq); model.save_changes();
      draw();
    } else if (data.mode === "bins") {
      const t = tOf(mx), span = (win[1] - win[0]) / 8;
      setWindow(t - span / 2, t + span / 2);
    }
  };
  window.addEventListener("mousemove", onMove);
  window.addEventListener("mouseup", onUp);
  canvas.addEventListener("mouseleave", () => { tip.style.display = "none"; });
  canvas.addEventListener("dblclick", (e) => { e.preventDefault(); fit(); });

  byDir.addEventListener("click", () => { model.set("lane_by", "direction"); model.save_changes(); });
  byMethod.addEventListener("click", () => { model.set("lane_by", "method"); model.save_changes(); });
  fitBtn.addEventListener("click", fit);
  zoomSel.addEventListener("click", () => {
    const br = model.get("brush") || [];
    if (br.length === 2) setWindow(br[0], br[1]);
  });
  clearSel.addEventListener("click", () => { model.set("brush", []); model.save_changes(); draw(); });

  // a new view (zoom, pan, sessions) hides the tooltip: what it described may have moved
  let asked = 0;  // views asked to unpack: an older one that finishes late is dropped
  const onView = async () => {
    const n = ++asked, v = await unpack(model.get("packed"));
    if (n !== asked) return;
    data = v; tip.style.display = "none"; buildLegend(); buildPicker(); draw();
    root.dataset.views = String((+root.dataset.views || 0) + 1);  // views drawn (read by tests)
  };
  const onWindow = () => {
    const w = model.get("window") || [];
    if (w.length === 2 && (w[0] !== win[0] || w[1] !== win[1])) { win = w.slice(); draw(); }
  };
  model.on("change:packed", onView);
  model.on("change:window", onWindow);
  model.on("change:selected_seq", draw);
  model.on("change:brush", draw);
  model.on("change:lane_by", updateChrome);
  model.on("change:hidden", buildPicker);

  const ro = new ResizeObserver(() => {
    draw();
    clearTimeout(widthTimer);
    widthTimer = setTimeout(() => {
      const w = Math.round(plot.clientWidth - LABEL_W - PAD_R);
      if (w > 0 && Math.abs(w - model.get("width")) > 20) { model.set("width", w); model.save_changes(); }
    }, 200);
  });
  ro.observe(plot);
  buildLegend();
  buildPicker();
  draw();
  onView();

  return () => {
    ro.disconnect();
    window.removeEventListener("mousemove", onMove);
    window.removeEventListener("mouseup", onUp);
    model.off("change:packed", onView);
    model.off("change:window", onWindow);
    model.off("change:selected_seq", draw);
    model.off("change:brush", draw);
    model.off("change:lane_by", updateChrome);
    model.off("change:hidden", buildPicker);
    clearTimeout(pushTimer); clearTimeout(widthTimer);
  };
}

export default { render };

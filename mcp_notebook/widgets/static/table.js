// mcp_notebook frame table: a virtual scroller over the filtered rows held in Python.
// Only a window of rows (`rows`, starting at row `start` of `total`) travels; scrolling
// past it asks for another (`want`). Cells are set with textContent only.
// Keys: ↑/↓ (and PageUp/PageDown/Home/End) move the selection, Enter opens the detail,
// `p` goes to the pair, `c` copies the frame as JSON, `r` its raw text, `l` one JSON-RPC line.

const KINDS = new Set(["request", "notification", "result", "error", "invalid", "stderr", "log"]);
const OUTCOMES = new Set(["result", "error", "tool error", "unanswered", "cancelled", "orphan", "duplicate"]);
const ROW_H = 22;

function render({ model, el }) {
  const wrap = document.createElement("div");
  wrap.className = "mnf";
  wrap.tabIndex = 0;
  wrap.setAttribute("role", "grid");
  wrap.setAttribute("aria-label", "frames: arrow keys move, Enter opens, p pair, c/r/l copy");
  const head = document.createElement("div");
  head.className = "mnf-head";
  const scroller = document.createElement("div");
  scroller.className = "mnf-scroll";
  const spacer = document.createElement("div");
  spacer.className = "mnf-spacer";
  const body = document.createElement("div");
  body.className = "mnf-body";
  spacer.append(body);
  scroller.append(head, spacer);  // the heading scrolls sideways with the rows, sticks on top
  const foot = document.createElement("div");
  foot.className = "mnf-foot";
  const note = document.createElement("span");
  note.className = "mnf-note";
  const copied = document.createElement("span");
  copied.className = "mnf-copied";
  copied.setAttribute("aria-live", "polite");
  const buttons = [["json", "copy JSON", "c"], ["raw", "copy raw", "r"], ["line", "copy JSON-RPC line", "l"]]
    .map(([what, label, key]) => {
      const b = document.createElement("button");
      b.className = "mnf-copy";
      b.dataset.what = what;
      b.textContent = label;
      b.title = label + " of the selected frame (key " + key + ")";
      b.addEventListener("click", () => copy(what));
      return b;
    });
  foot.append(note, ...buttons, copied);
  wrap.append(scroller, foot);
  el.append(wrap);

  let first = -1, count = -1, asked = -1;

  function template() {
    const widths = model.get("widths");
    return model.get("columns").map((_, i) => (widths[i] || 80) + "px").join(" ");
  }

  function heads() {
    head.replaceChildren();
    head.style.gridTemplateColumns = template();
    const width = model.get("widths").reduce((a, b) => a + b, 0);
    head.style.minWidth = spacer.style.minWidth = width + "px";
    const [skey, sdir] = model.get("sort");
    model.get("columns").forEach((c, i) => {
      const key = model.get("col_keys")[i];
      const th = document.createElement("div");
      th.className = "mnf-th";
      th.setAttribute("role", "columnheader");
      th.dataset.key = key;
      const arrow = key === skey ? (sdir === "desc" ? " ▼" : " ▲") : "";
      th.textContent = c + arrow;
      th.title = "sort by " + c + (key === skey ? (sdir === "desc" ? " (now descending)" : " (now ascending)") : "");
      if (key === skey) th.setAttribute("aria-sort", sdir === "desc" ? "descending" : "ascending");
      th.addEventListener("click", () => {
        const [k, d] = model.get("sort");
        // ascending, then descending, then capture order
        const next = k !== key ? [key, "asc"] : d === "asc" ? [key, "desc"] : ["", ""];
        model.set("sort", next);
        model.save_changes();
      });
      head.append(th);
    });
  }

  function size() {
    spacer.style.height = Math.max(1, model.get("total")) * ROW_H + "px";
    note.textContent = model.get("total") ? model.get("note") : "no frames match this filter";
  }

  function visible() {
    const top = Math.floor(Math.max(0, scroller.scrollTop) / ROW_H);
    const n = Math.ceil(scroller.clientHeight / ROW_H) + 1;
    return [top, n];
  }

  function paint(force) {
    const [top, n] = visible();
    if (!force && top === first && n === count) return;
    first = top; count = n;
    const start = model.get("start"), rows = model.get("rows");
    const cols = model.get("columns"), keys = model.get("col_keys");
    const sel = model.get("selected_seq");
    const ki = keys.indexOf("kind"), oi = keys.indexOf("outcome"), fi = keys.indexOf("flag");
    const ii = keys.indexOf("info");
    const tpl = template();
    body.replaceChildren();
    body.style.transform = "translateY(" + top * ROW_H + "px)";
    let missing = false;
    for (let r = top; r < Math.min(top + n, model.get("total")); r++) {
      const row = rows[r - start];
      const tr = document.createElement("div");
      tr.className = "mnf-tr";
      tr.setAttribute("role", "row");
      tr.style.gridTemplateColumns = tpl;
      if (!row) {
        missing = true;
        tr.classList.add("mnf-wait");
        tr.textContent = "…";
        body.append(tr);
        continue;
      }
      const seq = Number(row[0]);
      tr.dataset.seq = String(seq);
      tr.dataset.index = String(r);
      if (sel !== null && seq === sel) tr.classList.add("mnf-sel");
      row.forEach((cell, i) => {
        const td = document.createElement("div");
        td.className = "mnf-td";
        td.setAttribute("role", "gridcell");
        td.textContent = cell;
        if (i === ki && KINDS.has(cell)) td.classList.add("mnf-k", "mnf-k-" + cell);
        if (i === oi && OUTCOMES.has(cell)) td.classList.add("mnf-o", "mnf-o-" + cell.replace(" ", "_"));
        if (i === fi && cell) td.classList.add("mnf-flag");
        if (i === ii || i === fi || cell.length > 24) td.title = i === fi && cell ? "violation: " + cell.slice(2) : cell;
        tr.append(td);
      });
      tr.addEventListener("click", () => {
        wrap.focus({ preventScroll: true });
        model.set("selected_seq", seq);
        model.save_changes();
      });
      body.append(tr);
    }
    if (missing) ask(top);
  }

  function ask(top) {
    if (asked === top) return;
    asked = top;
    model.set("want", top);
    model.save_changes();
  }

  function onScroll() {
    const [top, n] = visible();
    const start = model.get("start"), len = model.get("rows").length;
    if (top < start || top + n > start + len) ask(top);
    paint(false);
  }

  function reveal() {
    const i = model.get("sel_index");
    if (i < 0) { paint(true); return; }
    const y = i * ROW_H, hh = head.offsetHeight;
    if (y < scroller.scrollTop) scroller.scrollTop = y;
    else if (y + ROW_H + hh > scroller.scrollTop + scroller.clientHeight)
      scroller.scrollTop = y + ROW_H + hh - scroller.clientHeight;
    paint(true);
  }

  async function copy(what) {
    const text = (model.get("clip") || {})[what];
    if (text === undefined || text === null) {
      copied.textContent = "select a frame to copy it";
      return;
    }
    const label = { json: "JSON", raw: "raw text", line: "JSON-RPC line" }[what];
    try {
      await navigator.clipboard.writeText(text);
      copied.textContent = "copied " + label + " (" + text.length.toLocaleString() + " chars)";
    } catch (e) {
      copied.textContent = "the browser refused the clipboard: " + e;
    }
    model.send({ type: "copied", what });
  }

  function onKey(ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const moves = { ArrowDown: 1, ArrowUp: -1, PageDown: 20, PageUp: -20 };
    if (ev.key in moves) {
      model.send({ type: "move", by: moves[ev.key] });
    } else if (ev.key === "Home" || ev.key === "End") {
      model.send({ type: "move", to: ev.key === "Home" ? 0 : -1 });
    } else if (ev.key === "Enter") {
      model.send({ type: "open" });
      const detail = el.closest(".mn-inspector")?.querySelector(".mn-detail");
      if (detail) { detail.scrollTop = 0; detail.scrollIntoView({ block: "nearest" }); }
    } else if (ev.key === "p") {
      model.send({ type: "pair" });
    } else if (ev.key === "c" || ev.key === "r" || ev.key === "l") {
      copy({ c: "json", r: "raw", l: "line" }[ev.key]);
    } else {
      return;
    }
    ev.preventDefault();
    ev.stopPropagation();  // JupyterLab's notebook shortcuts must not see these
  }

  scroller.addEventListener("scroll", onScroll, { passive: true });
  wrap.addEventListener("keydown", onKey);
  wrap.mnfCopy = copy;  // the copy buttons beside the table call this

  const onRows = () => { asked = -1; paint(true); };
  const onTotal = () => { size(); paint(true); };
  heads();
  size();
  paint(true);
  requestAnimationFrame(reveal);
  for (const n of ["columns", "sort", "widths"]) model.on("change:" + n, heads);
  model.on("change:rows", onRows);
  model.on("change:total", onTotal);
  model.on("change:note", onTotal);
  model.on("change:selected_seq", () => paint(true));
  // one update from the kernel may both reorder the rows (tops) and move the selection's
  // index: once all its attributes are set (a microtask: before the page is drawn), the view
  // goes to the top, or else to the selection
  let toTop = false, toReveal = false, settling = false;
  const settle = () => {
    settling = false;
    if (toTop) { scroller.scrollTop = 0; paint(true); }
    else if (toReveal) reveal();
    toTop = toReveal = false;
  };
  const later = () => { if (!settling) { settling = true; queueMicrotask(settle); } };
  model.on("change:tops", () => { toTop = true; later(); });
  model.on("change:sel_index", () => { toReveal = true; later(); });
  return () => {
    scroller.removeEventListener("scroll", onScroll);
    wrap.removeEventListener("keydown", onKey);
  };
}

export default { render };

// mcp_notebook frame table: one page of rows, plain text cells, click to select.
// Rows come from Python as arrays of strings and are set with textContent only.

const KINDS = new Set(["request", "notification", "result", "error", "invalid", "stderr", "log"]);
const OUTCOMES = new Set(["result", "error", "tool error", "unanswered", "cancelled", "orphan", "duplicate"]);

function render({ model, el }) {
  const wrap = document.createElement("div");
  wrap.className = "mnf";
  const table = document.createElement("table");
  table.className = "mnf-table";
  const thead = document.createElement("thead");
  const tbody = document.createElement("tbody");
  table.append(thead, tbody);
  const empty = document.createElement("div");
  empty.className = "mnf-empty";
  wrap.append(table, empty);
  el.append(wrap);

  function head() {
    thead.replaceChildren();
    const tr = document.createElement("tr");
    for (const c of model.get("columns")) {
      const th = document.createElement("th");
      th.textContent = c;
      tr.append(th);
    }
    thead.append(tr);
  }

  function body() {
    tbody.replaceChildren();
    const cols = model.get("columns");
    const rows = model.get("rows");
    const sel = model.get("selected_seq");
    const ki = cols.indexOf("kind"), oi = cols.indexOf("outcome");
    for (const row of rows) {
      const tr = document.createElement("tr");
      const seq = Number(row[0]);
      tr.dataset.seq = String(seq);
      if (sel !== null && seq === sel) tr.classList.add("mnf-sel");
      row.forEach((cell, i) => {
        const td = document.createElement("td");
        td.textContent = cell;
        if (i === ki && KINDS.has(cell)) td.className = "mnf-k mnf-k-" + cell;
        if (i === oi && OUTCOMES.has(cell)) td.className = "mnf-o mnf-o-" + cell.replace(" ", "_");
        if (cols[i] === "!" && cell) td.className = "mnf-flag";
        tr.append(td);
      });
      tr.addEventListener("click", () => {
        model.set("selected_seq", seq);
        model.save_changes();
      });
      tbody.append(tr);
    }
    empty.textContent = rows.length ? "" : "no frames match this filter";
  }

  function mark() {
    const sel = model.get("selected_seq");
    for (const tr of tbody.children) tr.classList.toggle("mnf-sel", sel !== null && Number(tr.dataset.seq) === sel);
  }

  head();
  body();
  model.on("change:columns", head);
  model.on("change:rows", body);
  model.on("change:selected_seq", mark);
  return () => {
    model.off("change:columns", head);
    model.off("change:rows", body);
    model.off("change:selected_seq", mark);
  };
}

export default { render };

// mcp_notebook sessions table: rows of plain text (textContent only), a click on a
// heading sorts (Python orders the rows), a click on a row selects that session.

function render({ model, el }) {
  const wrap = document.createElement("div");
  wrap.className = "mnfl-wrap";
  const table = document.createElement("table");
  table.className = "mnfl-table";
  const thead = document.createElement("thead");
  const tbody = document.createElement("tbody");
  table.append(thead, tbody);
  const note = document.createElement("div");
  note.className = "mnfl-note";
  wrap.append(table, note);
  el.append(wrap);

  function head() {
    thead.replaceChildren();
    const tr = document.createElement("tr");
    const keys = model.get("fields"), by = model.get("sort_by"), asc = model.get("ascending");
    model.get("columns").forEach((c, i) => {
      const th = document.createElement("th");
      th.textContent = c + (keys[i] === by ? (asc ? " ▲" : " ▼") : "");
      th.dataset.key = keys[i];
      th.title = "sort by " + c;
      th.addEventListener("click", () => {
        if (model.get("sort_by") === keys[i]) model.set("ascending", !model.get("ascending"));
        else { model.set("sort_by", keys[i]); model.set("ascending", true); }
        model.save_changes();
      });
      tr.append(th);
    });
    thead.append(tr);
  }

  function body() {
    tbody.replaceChildren();
    const sel = model.get("selected_row");
    const numeric = new Set(model.get("numeric"));
    const keys = model.get("fields");
    for (const row of model.get("rows")) {
      const tr = document.createElement("tr");
      const pos = Number(row[0]);
      tr.dataset.row = String(pos);
      if (sel !== null && pos === sel) tr.classList.add("mnfl-sel");
      row.slice(1).forEach((cell, i) => {
        const td = document.createElement("td");
        td.textContent = cell;
        if (numeric.has(keys[i])) td.classList.add("mnfl-num");
        if (keys[i].startsWith("violations_") || keys[i] === "errors" || keys[i] === "tool_errors") {
          if (cell && cell !== "0") td.classList.add("mnfl-bad");
        }
        tr.append(td);
      });
      tr.addEventListener("click", () => {
        model.set("selected_row", pos);
        model.save_changes();
      });
      tbody.append(tr);
    }
    note.textContent = model.get("note");
  }

  function mark() {
    const sel = model.get("selected_row");
    for (const tr of tbody.children) tr.classList.toggle("mnfl-sel", sel !== null && Number(tr.dataset.row) === sel);
  }

  head();
  body();
  const onHead = () => head();
  model.on("change:columns", onHead);
  model.on("change:sort_by", onHead);
  model.on("change:ascending", onHead);
  model.on("change:rows", body);
  model.on("change:note", body);
  model.on("change:selected_row", mark);
  return () => {
    model.off("change:columns", onHead);
    model.off("change:sort_by", onHead);
    model.off("change:ascending", onHead);
    model.off("change:rows", body);
    model.off("change:note", body);
    model.off("change:selected_row", mark);
  };
}

export default { render };

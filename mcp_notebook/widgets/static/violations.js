// mcp_notebook violations list: one row per finding; a click selects its frame.
function render({ model, el }) {
  const wrap = document.createElement("div");
  wrap.className = "mnv";
  el.append(wrap);
  function draw() {
    wrap.replaceChildren();
    const items = model.get("items"), total = model.get("total");
    const head = document.createElement("div");
    head.className = "mnv-head";
    head.textContent = total === 0 ? "no violations found" :
      `${total.toLocaleString()} violation${total === 1 ? "" : "s"}` +
      (items.length < total ? ` (first ${items.length.toLocaleString()} listed)` : "") +
      " — click one to select its frame and the related one";
    wrap.append(head);
    const list = document.createElement("div");
    list.className = "mnv-list";
    const sel = model.get("selected_seq");
    items.forEach((it, i) => {
      const row = document.createElement("div");
      row.className = "mnv-row mnv-" + it.severity;
      row.dataset.seq = String(it.seq);
      row.dataset.rule = it.rule;
      if (sel !== null && it.seq === sel) row.classList.add("mnv-sel");
      const cells = [
        ["mnv-sev", it.severity], ["mnv-rule", it.rule],
        ["mnv-seq", it.seq === null ? "" : "#" + it.seq + (it.related === null ? "" : " ↔ #" + it.related)],
        ["mnv-msg", it.message]];
      for (const [cls, text] of cells) {
        const c = document.createElement("span");
        c.className = cls;
        c.textContent = text;
        row.append(c);
      }
      const spec = (model.get("specs") || {})[it.rule] || it.spec || "";
      row.title = it.rule + (spec ? "\n" + spec : "");
      row.addEventListener("click", () => { model.set("picked", -1); model.set("picked", i); model.save_changes(); });
      list.append(row);
    });
    wrap.append(list);
    if (items.length < total) {  // the rest on demand: a big trace lists 80,000 findings
      const more = document.createElement("button");
      more.className = "mnv-more";
      more.textContent = `show ${Math.min(500, total - items.length).toLocaleString()} more`;
      more.addEventListener("click", () => {
        model.set("limit", items.length + 500); model.save_changes(); });
      wrap.append(more);
    }
  }
  function mark() {  // a new selection only moves the highlight (the list can be long)
    const sel = model.get("selected_seq");
    for (const row of wrap.querySelectorAll(".mnv-row"))
      row.classList.toggle("mnv-sel", sel !== null && row.dataset.seq === String(sel));
  }
  draw();
  model.on("change:items", draw);
  model.on("change:selected_seq", mark);
}
export default { render };

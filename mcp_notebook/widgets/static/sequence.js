// mcp_notebook sequence diagram (anywidget ES module, no dependencies, no CDN).
//
// Python builds the whole SVG (seqdraw.py: every trace string XML-escaped, no script);
// this module parses it as SVG, shows it, and reports the clicked message back
// (`selected_seq`), highlighting the message and its pair (request <-> response) and
// the request a cancel or progress notification is about.

function render({ model, el: host }) {
  const root = document.createElement("div");
  root.className = "mns";
  const status = document.createElement("div");
  status.className = "mns-status";
  const holder = document.createElement("div");
  holder.className = "mns-holder";
  root.append(holder, status);
  host.append(root);

  function show() {
    const doc = new DOMParser().parseFromString(model.get("svg") || "<svg xmlns='http://www.w3.org/2000/svg'/>", "image/svg+xml");
    const svg = doc.documentElement;
    svg.querySelectorAll("script, foreignObject").forEach((n) => n.remove());
    holder.replaceChildren(document.importNode(svg, true));
    mark();
  }

  function mark() {
    const sel = model.get("selected_seq");
    const svg = holder.querySelector("svg");
    if (!svg) return;
    svg.querySelectorAll(".mns-sel, .mns-pair").forEach((n) => n.classList.remove("mns-sel", "mns-pair"));
    if (sel === null || sel === undefined) { status.textContent = "click an arrow to select its frame"; return; }
    const g = svg.querySelector(`.mns-msg[data-seq="${Number(sel)}"]`);
    if (!g) { status.textContent = "frame #" + sel + " is not in this diagram"; return; }
    g.classList.add("mns-sel");
    const rel = [g.dataset.pair, g.dataset.target].filter((v) => v !== undefined);
    for (const r of rel) {
      const o = svg.querySelector(`.mns-msg[data-seq="${Number(r)}"]`);
      if (o) o.classList.add("mns-pair");
    }
    status.textContent = "selected frame #" + sel + (g.dataset.pair ? " · pair #" + g.dataset.pair : "")
      + (g.dataset.target ? " · about request #" + g.dataset.target : "");
  }

  holder.addEventListener("click", (e) => {
    const g = e.target.closest && e.target.closest(".mns-msg, .mns-viol, .mns-act");
    if (!g || !g.dataset.seq) return;
    model.set("selected_seq", Number(g.dataset.seq));
    model.save_changes();
  });
  model.on("change:svg", show);
  model.on("change:selected_seq", mark);
  show();
  return () => { model.off("change:svg", show); model.off("change:selected_seq", mark); };
}

export default { render };

// mcp_notebook latency histograms: SVG made (and escaped) in Python; a bar click picks it.
function render({ model, el }) {
  const wrap = document.createElement("div");
  wrap.className = "mnh";
  const style = document.createElement("style");
  style.textContent = `.mnh{font-family:var(--jp-ui-font-family,system-ui,sans-serif);
    color:var(--jp-ui-font-color0,#111)}.mnh-grid{display:flex;flex-wrap:wrap;gap:4px 12px}
    .mnh rect{cursor:pointer;fill:var(--jp-brand-color1,#1976d2)}
    .mnh rect:hover,.mnh rect.mnh-on{fill:var(--jp-warn-color1,#f57c00)}
    .mnh-none,.mnh-more,.mnh-hint{color:var(--jp-ui-font-color1,#3d4146);font-size:12px}`;
  const hint = document.createElement("div");
  hint.className = "mnh-hint";
  hint.textContent = "latency per method — click a bar to show those requests in the table";
  const body = document.createElement("div");
  wrap.append(style, hint, body);
  el.append(wrap);
  function draw() {
    body.innerHTML = model.get("svg");  // built by Python from escaped text only
    for (const one of body.querySelectorAll(".mnh-one")) {
      const rects = [...one.querySelectorAll("rect")];
      rects.forEach((r, i) => r.addEventListener("click", () => {
        for (const x of body.querySelectorAll("rect.mnh-on")) x.classList.remove("mnh-on");
        r.classList.add("mnh-on");
        model.set("picked", { method: one.dataset.method, lo: i ? rects[i - 1].dataset.le : "0",
                              hi: r.dataset.le, n: Date.now() });
        model.save_changes();
      }));
    }
  }
  draw();
  model.on("change:svg", draw);
}
export default { render };

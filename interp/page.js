// Draws a pto-run report (pto/interp/page.py) from the JSON in #report-data.
// No libraries and nothing fetched: the page must open from disk, offline.
"use strict";
const D = JSON.parse(document.getElementById("report-data").textContent);
const app = document.getElementById("app");
const tip = document.getElementById("tip");
const PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7",
                 "#9c755f", "#bab0ac"];
const stages = [...new Set(D.groups.map(g => g.stage))];
const colour = g => PALETTE[stages.indexOf(D.groups[g].stage) % PALETTE.length];

const esc = s => String(s).replace(/[&<>"]/g, c => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c]));
const num = x => typeof x === "number" ? x.toLocaleString("en-US", {maximumFractionDigits: 1}) : esc(x);
const pct = x => (100 * x).toFixed(1) + "%";
const meter = x => `<span class="meter"><span style="width:${Math.min(100, 100 * x).toFixed(1)}%"></span></span>`;

function section(id, title, body) {
  const s = document.createElement("section");
  s.id = id;
  s.innerHTML = `<h2>${esc(title)}</h2>${body}`;
  app.appendChild(s);
  return s;
}

function table(head, rows, left = 1) {
  const cell = (tag, v, i) => `<${tag}${i < left ? ' class="l"' : ""}>${v}</${tag}>`;
  return `<table><tr>${head.map((h, i) => cell("th", esc(h), i)).join("")}</tr>` +
    rows.map(r => `<tr>${r.map((v, i) => cell("td", v, i)).join("")}</tr>`).join("") + "</table>";
}

function keyValues(obj) {
  const rows = Object.entries(obj).map(([k, v]) => [esc(k), num(v)]);
  return rows.length ? table(["", ""], rows, 2) : '<p class="hint">none recorded (a kernel given at the npu level)</p>';
}

// -- configuration and totals: side by side, so that two pages compare at a glance --
section("summary", "Configuration and totals",
  `<div class="pair"><div id="config"><b>configuration</b>${keyValues(D.config)}</div>` +
  `<div id="totals"><b>totals</b>${keyValues(D.totals)}</div></div>` +
  D.notes.map(n => `<p class="hint">note: ${esc(n)}</p>`).join(""));

// -- timeline ---------------------------------------------------------------------------
const TL = {t0: 0, t1: Math.max(1, D.timeline.cycles), open: new Set(), label: 64, row: 13, pipeRow: 8};
const tl = section("timeline", "Timeline",
  `<p class="hint">${D.timeline.aggregated ? "aggregated: each bar is the tasks of one time slot on one core, coloured by the group that ran longest in it; " : ""}` +
  `wheel: zoom, drag: pan, click a core: its pipes (shade: the pipe's share of the task). ` +
  `<button id="reset">reset zoom</button><button id="allpipes">all pipes</button></p>` +
  `<div class="legend">${stages.map((s, i) => `<span><i style="background:${PALETTE[i % PALETTE.length]}"></i>${esc(s)}</span>`).join("")}</div>` +
  `<svg id="tl"></svg>`);
const svg = document.getElementById("tl");
const byCore = D.cores.map(() => []);
D.timeline.bars.forEach((b, i) => byCore[b[0]].push(i));

function drawTimeline() {
  const W = Math.max(400, svg.clientWidth || 1000), plot = W - TL.label - 8;
  const x = t => TL.label + (t - TL.t0) / (TL.t1 - TL.t0) * plot;
  let y = 18, out = [axis(x, plot)];
  D.cores.forEach((c, ci) => {
    out.push(`<text class="core" data-core="${ci}" x="2" y="${y + 10}">${TL.open.has(ci) ? "▾" : "▸"} ${esc(c.name)}</text>`);
    out.push(bars(byCore[ci], x, y, TL.row - 2, -1));
    y += TL.row;
    if (!TL.open.has(ci)) return;
    D.pipes.forEach((p, pi) => {
      out.push(`<text class="pipe" x="14" y="${y + 7}">${p}</text>` + bars(byCore[ci], x, y, TL.pipeRow - 1, pi));
      y += TL.pipeRow;
    });
  });
  svg.setAttribute("height", y + 4);
  svg.innerHTML = out.join("");
}

function bars(ids, x, y, h, pipe) {
  let s = "";
  for (const i of ids) {
    const b = D.timeline.bars[i];
    if (b[5] < TL.t0 || b[4] > TL.t1) continue;
    const x0 = Math.max(TL.label, x(b[4])), w = Math.max(0.5, Math.min(x(b[5]), svg.clientWidth) - x0);
    const share = pipe < 0 ? 1 : b[8][pipe] / Math.max(1e-9, b[5] - b[4]);
    if (pipe >= 0 && !share) continue;
    s += `<rect class="bar" data-i="${i}" data-group="${esc(D.groups[b[1]].name)}" x="${x0.toFixed(1)}" y="${y}" ` +
      `width="${w.toFixed(1)}" height="${h}" fill="${colour(b[1])}"${pipe < 0 ? "" : ` fill-opacity="${Math.min(1, share).toFixed(2)}"`}/>`;
  }
  return s;
}

function axis(x, plot) {
  const span = TL.t1 - TL.t0, step = Math.pow(10, Math.floor(Math.log10(span / 5)));
  const nice = [1, 2, 5, 10].map(m => m * step).find(s => span / s <= 8);
  let s = "";
  for (let t = Math.ceil(TL.t0 / nice) * nice; t <= TL.t1; t += nice) {
    s += `<line x1="${x(t)}" x2="${x(t)}" y1="12" y2="100%" stroke="#eee"/>` +
      `<text x="${x(t) + 2}" y="10">${num(t)}</text>`;
  }
  return s + `<text x="2" y="10">cycles</text>`;
}

function hover(ev) {
  const i = ev.target.dataset && ev.target.dataset.i;
  if (i === undefined) { tip.hidden = true; return; }
  const b = D.timeline.bars[+i], g = D.groups[b[1]];
  const head = b[3] < 0 ? `${b[2]} tasks, mostly ${g.name}` : `task ${g.name}[${b[2]},${b[3]}]\nbody ${b[2]}, task ${b[3]}`;
  const busy = D.pipes.map((p, k) => b[8][k] ? `${p} ${num(b[8][k])}` : "").filter(Boolean).join(", ");
  tip.textContent = `${head}\ngroup ${g.name} (stage ${g.stage}) on ${D.cores[b[0]].name}\n` +
    `start ${num(b[4])}, end ${num(b[5])} (${num(b[5] - b[4])} cycles)\n` +
    `bytes ${num(b[6])} through HBM, ${num(b[7])} MACs\nbusy: ${busy}`;
  tip.hidden = false;
  tip.style.left = Math.min(ev.clientX + 12, window.innerWidth - tip.offsetWidth - 4) + "px";
  tip.style.top = (ev.clientY + 12) + "px";
}

function zoom(ev) {
  ev.preventDefault();
  const r = svg.getBoundingClientRect(), plot = r.width - TL.label - 8;
  const f = Math.min(1, Math.max(0, (ev.clientX - r.left - TL.label) / plot));
  const at = TL.t0 + f * (TL.t1 - TL.t0), k = ev.deltaY > 0 ? 1.25 : 0.8;
  const span = Math.max(10, Math.min(D.timeline.cycles, (TL.t1 - TL.t0) * k));
  TL.t0 = Math.max(0, at - f * span);
  TL.t1 = Math.min(Math.max(1, D.timeline.cycles), TL.t0 + span);
  drawTimeline();
}

let drag = null;
svg.addEventListener("mousemove", ev => {
  hover(ev);
  if (!drag) return;
  const plot = svg.getBoundingClientRect().width - TL.label - 8;
  const dt = (drag.x - ev.clientX) / plot * (drag.t1 - drag.t0);
  const shift = Math.max(-drag.t0, Math.min(D.timeline.cycles - drag.t1, dt));
  TL.t0 = drag.t0 + shift; TL.t1 = drag.t1 + shift;
  drawTimeline();
});
svg.addEventListener("mousedown", ev => { drag = {x: ev.clientX, t0: TL.t0, t1: TL.t1}; });
window.addEventListener("mouseup", () => { drag = null; });
svg.addEventListener("mouseleave", () => { tip.hidden = true; });
svg.addEventListener("wheel", zoom, {passive: false});
svg.addEventListener("click", ev => {
  const c = ev.target.dataset && ev.target.dataset.core;
  if (c === undefined) return;
  TL.open.has(+c) ? TL.open.delete(+c) : TL.open.add(+c);
  drawTimeline();
});
document.getElementById("reset").onclick = () => { TL.t0 = 0; TL.t1 = Math.max(1, D.timeline.cycles); drawTimeline(); };
document.getElementById("allpipes").onclick = () => {
  const used = [...new Set(D.timeline.bars.map(b => b[0]))];
  TL.open = TL.open.size ? new Set() : new Set(used);
  drawTimeline();
};
window.addEventListener("resize", drawTimeline);
drawTimeline();

// -- utilisation ------------------------------------------------------------------------
const active = D.pipes.filter(p => D.stages.some(s => s.util[p] > 0));
const heat = u => `<span class="heat" style="background:rgba(74,123,208,${Math.min(1, u).toFixed(2)});` +
  `color:${u > 0.5 ? "#fff" : "#222"};padding:0 4px">${pct(u)}</span>`;
section("utilisation", "Pipe utilisation",
  `<div class="pair"><div><b>per core kind</b> (busy cycles over the run)` +
  table(["pipe", "cores", "busy cycles", "mean", "", "max"],
    D.pipe_rows.map(r => [r.pipe, r.kind, num(r.busy), pct(r.mean), meter(r.mean), pct(r.max)]), 2) +
  `</div><div><b>per stage</b> (busy cycles over the stage's task cycles)` +
  table(["stage", "cores", "tasks", ...active],
    D.stages.map(s => [esc(s.stage), s.kind, s.tasks, ...active.map(p => heat(s.util[p]))]), 2) +
  `</div></div>`);

// -- roofline ---------------------------------------------------------------------------
section("roofline", "Roofline: achieved against peak per stage",
  `<p class="hint">cube: MACs per cycle of a core over its tasks (peak: the rate its mmads run at); ` +
  `vector: bytes per cycle of a core at the vector unit's rate while busy; HBM: bytes per cycle ` +
  `of the chip over the stage's span. Bound: the busiest pipe or HBM; below 50% the stage mostly waits.</p>` +
  table(["stage", "resource", "achieved", "peak", "unit", "share", "", "bound"],
    D.stages.flatMap(s => s.roofline.map((r, i) => [i ? "" : esc(s.stage), r.resource, num(r.achieved),
      num(r.peak), r.unit, pct(r.share), meter(r.share), i ? "" : `<b>${esc(s.bound)}</b>`])), 2));

// -- L2 and buffers -----------------------------------------------------------------------
section("l2", "L2 per tensor",
  table(["tensor", "hits", "misses", "hit rate", "", "HBM read", "HBM written", "DMA bursts"],
    D.tensors.map(t => [esc(t.name), num(t.hits), num(t.misses), pct(t.hit_rate), meter(t.hit_rate),
      num(t.hbm_read), num(t.hbm_written), num(t.bursts || 0)])));
section("buffers", "Buffer peaks per space",
  table(["space", "peak bytes", "capacity", "use", ""],
    D.buffers.map(b => [b.space, num(b.bytes), num(b.capacity), pct(b.bytes / b.capacity), meter(b.bytes / b.capacity)])));

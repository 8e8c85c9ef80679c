// tx8c report: draws the data embedded in the page (#report-data); no network.
"use strict";
(function () {
  const errors = [];
  const note = (msg) => { errors.push(String(msg)); document.body.dataset.errors = errors.length; };
  window.addEventListener("error", (e) => note(e.message));
  const origError = console.error;
  console.error = function (...args) { note(args.join(" ")); origError.apply(console, args); };

  const D = JSON.parse(document.getElementById("report-data").textContent);
  const $ = (id) => document.getElementById(id);
  const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c]));
  const fmt = (v, d = 3) => v == null ? "–" : (typeof v === "number" ? (Math.abs(v) >= 1e5 || (Math.abs(v) < 1e-3 && v !== 0) ? v.toExponential(2) : +v.toFixed(d)) : v);
  const bytes = (b) => b == null ? "–" : b >= 1 << 30 ? (b / (1 << 30)).toFixed(2) + " GiB" : b >= 1 << 20 ? (b / (1 << 20)).toFixed(2) + " MiB" : b >= 1024 ? (b / 1024).toFixed(1) + " KiB" : b + " B";
  const us = (s) => s == null ? "–" : s < 1e-3 ? (s * 1e6).toFixed(1) + " µs" : (s * 1e3).toFixed(3) + " ms";
  const PALETTE = ["#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462", "#b3de69", "#fccde5", "#d9d9d9", "#bc80bd", "#ccebc5", "#ffed6f"];
  const groupColor = (g) => g < 0 ? "#eeeeee" : PALETTE[g % PALETTE.length];
  const LAYOUT_COLOR = {Tensor: "#4c78a8", NTensor: "#72b7b2", Cx: "#e45756", NCx: "#f58518"};
  const LANE_COLOR = {ld: "#4c78a8", st: "#72b7b2", ne: "#e45756", ct: "#f58518", tdma: "#54a24b", noc: "#b279a2"};

  // ---------------------------------------------------------------- summary
  function card(k, v, s) { return `<div class="card"><div class="k">${esc(k)}</div><div class="v">${v}</div><div class="s">${s || ""}</div></div>`; }
  function drawSummary() {
    const S = D.summary, R = S.roofline || {};
    const cards = [
      card("estimated latency", us(S.estimate_seconds), `${fmt(S.cycles)} cycles at ${S.clock_hz / 1e9} GHz`),
      card("simulated latency", S.simulated_seconds == null ? "–" : us(S.simulated_seconds), S.simulated_seconds == null ? "no cmodel v2 timing in report.json" : "cmodel v2, event-driven"),
      card("roofline bound", us(R.seconds), R.bound_by ? `${R.bound_by}-bound` : ""),
      card("estimate / roofline", S.roofline_ratio == null ? "–" : fmt(S.roofline_ratio, 2) + "×", "1× is the hardware limit"),
      card("DDR traffic", bytes(S.ddr_bytes), `compulsory ${bytes(R.weight_bytes + R.io_bytes)}`),
      card("SPM peak / lower bound", `${bytes(S.spm_peak)} / ${bytes(S.spm_lower_bound)}`, `per tile, of ${bytes(S.spm_bytes)}`),
      card("groups", S.groups, `${S.templates_reused || 0} reuse a template`),
      card("ops (graph)", D.graph.nodes.length, `${D.graph.nodes.filter((n) => n.conversion).length} ChannelNorm/Transpose`),
    ];
    $("cards").innerHTML = cards.join("");
    const util = Object.entries(S.utilisation || {});
    $("util").innerHTML = util.length ? util.map(([lane, u]) =>
      `<div><span style="display:inline-block;width:40px">${lane}</span><span class="bartrack" style="display:inline-block;width:70%"><span class="bar" style="display:block;width:${Math.min(100, u * 100)}%;background:${LANE_COLOR[lane] || "#888"}"></span></span> ${(u * 100).toFixed(1)}%</div>`).join("") : "<p class=muted>no slicing plans</p>";
    // the phases (import ... write-program) cover the whole compile; the passes are the
    // pipeline's part of it, one row each
    const phases = Object.entries(S.phase_seconds || {}).map(([name, seconds]) => ({name, seconds}));
    const passes = (S.pass_seconds || []).map((p) => ({name: p.pass, seconds: p.seconds}));
    $("passes").innerHTML = secondsTable("phase", phases) + secondsTable("pass", passes);
    const opts = Object.entries(S.options || {}).map(([k, v]) => `<tr><td class=l>${esc(k)}</td><td class=l>${esc(JSON.stringify(v))}</td></tr>`);
    const tgt = Object.entries(S.target || {}).map(([k, v]) => `<tr><td class=l>target ${esc(k)}</td><td class=l>${esc(JSON.stringify(v))}</td></tr>`);
    $("options").innerHTML = `<table>${opts.join("")}${tgt.join("") || "<tr><td class=l>target</td><td class=l>default TX8Config</td></tr>"}</table>`;
  }

  function secondsTable(what, rows) {
    if (!rows.length) return "";
    const most = Math.max(1e-9, ...rows.map((r) => r.seconds));
    const total = rows.reduce((sum, r) => sum + r.seconds, 0);
    return `<table><tr><th class=l>${what}</th><th>seconds</th><th class=l>total ${total.toFixed(2)} s</th></tr>` + rows.map((r) =>
      `<tr><td class=l>${esc(r.name)}</td><td>${r.seconds.toFixed(3)}</td><td class=l style="width:160px"><div class="bar" style="width:${100 * r.seconds / most}%"></div></td></tr>`).join("") + "</table>";
  }

  // ---------------------------------------------------------------- graph
  let view = {x: 0, y: 0, k: 1}, selected = null;
  function drawGraph() {
    const G = D.graph, L = D.layout, parts = [];
    G.edges.forEach((e, i) => {
      const p = L.edges[i];
      if (!p || p.length < 4) return;
      let d = `M${p[0]},${p[1]}`;
      for (let k = 2; k + 5 < p.length + 0; k += 6) d += `C${p[k]},${p[k + 1]} ${p[k + 2]},${p[k + 3]} ${p[k + 4]},${p[k + 5]}`;
      parts.push(`<path class="e" d="${d}" stroke="${LAYOUT_COLOR[e.layout] || "#999"}"/>`);
    });
    G.nodes.forEach((n, i) => {
      const [x, y, w, h] = L.nodes[i];
      parts.push(`<g class="node${n.conversion ? " conv" : ""}" data-id="${i}" transform="translate(${x},${y})"><rect x="${-w / 2}" y="${-h / 2}" width="${w}" height="${h}" rx="4" fill="${groupColor(n.group)}"/><text>${esc(n.op)} ${esc(n.shape)}</text></g>`);
    });
    $("graph-layer").innerHTML = parts.join("");
    const box = $("graph-view").getBoundingClientRect();
    view.k = Math.min(1, box.width / Math.max(1, L.width));
    view.x = (box.width - L.width * view.k) / 2; view.y = 10;
    applyView();
    $("graph-layer").addEventListener("click", (ev) => {
      const g = ev.target.closest(".node");
      if (g) selectNode(+g.dataset.id, false);
    });
    const sv = $("graph-view");
    let drag = null;
    sv.addEventListener("mousedown", (ev) => { drag = [ev.clientX, ev.clientY, view.x, view.y]; });
    window.addEventListener("mouseup", () => { drag = null; });
    window.addEventListener("mousemove", (ev) => {
      if (!drag) return;
      view.x = drag[2] + ev.clientX - drag[0]; view.y = drag[3] + ev.clientY - drag[1]; applyView();
    });
    sv.addEventListener("wheel", (ev) => {
      ev.preventDefault();
      const r = sv.getBoundingClientRect(), mx = ev.clientX - r.left, my = ev.clientY - r.top;
      const f = Math.exp(-ev.deltaY * 0.0015), k = Math.max(0.02, Math.min(8, view.k * f));
      view.x = mx - (mx - view.x) * k / view.k; view.y = my - (my - view.y) * k / view.k; view.k = k; applyView();
    }, {passive: false});
    $("search").addEventListener("input", (ev) => search(ev.target.value.trim().toLowerCase()));
    $("legend").innerHTML = Object.entries(LAYOUT_COLOR).map(([k, c]) => `<span><i class="sw" style="background:${c}"></i>${k} tensor</span>`).join("") +
      `<span><i class="sw" style="border:2px dashed #d62728;height:8px;width:14px;background:none"></i>ChannelNorm / Transpose (layout conversion)</span><span class=muted>fill: group</span>`;
  }
  function applyView() { $("graph-layer").setAttribute("transform", `translate(${view.x},${view.y}) scale(${view.k})`); }
  function nodeEl(i) { return $("graph-layer").querySelector(`.node[data-id="${i}"]`); }
  function search(q) {
    $("graph-layer").querySelectorAll(".node.hit").forEach((n) => n.classList.remove("hit"));
    if (!q) { $("hits").textContent = ""; return; }
    const hits = D.graph.nodes.filter((n) => (`${n.op} ${n.shape} g${n.group} #${n.id}`).toLowerCase().includes(q));
    hits.forEach((n) => nodeEl(n.id).classList.add("hit"));
    $("hits").textContent = `${hits.length} match`;
    if (hits.length) centreOn(hits[0].id);
  }
  function centreOn(i) {
    const [x, y] = D.layout.nodes[i], r = $("graph-view").getBoundingClientRect();
    view.k = Math.max(view.k, 0.8); view.x = r.width / 2 - x * view.k; view.y = r.height / 2 - y * view.k; applyView();
  }
  function selectNode(i, centre) {
    if (selected != null) { const old = nodeEl(selected); if (old) old.classList.remove("sel"); }
    selected = i; nodeEl(i).classList.add("sel");
    if (centre) centreOn(i);
    const n = D.graph.nodes[i], grp = D.groups.find((g) => g.id === n.group);
    let html = `<h3>${esc(n.op)} <span class=muted>#${i}</span></h3><div>result ${esc(n.shape)}; group ${n.group}</div>`;
    for (const [k, v] of Object.entries(n.attrs)) html += `<div><b>${esc(k)}</b><pre>${esc(v)}</pre></div>`;
    if (grp) html += `<div><b>plan of group ${grp.id}</b><pre>${esc(JSON.stringify({sharding: grp.sharding, split: grp.split, tiles: grp.tiles, steps: grp.steps, cycles: grp.cycles, bound_cycles: grp.bound_cycles, engines: grp.engines, spm_peak: grp.spm_peak, spm_lower_bound: grp.spm_lower_bound, template_id: grp.template_id}, null, 1))}</pre><a href="#groupview" data-g="${grp.id}" id="to-group">show the group's pipeline and SPM</a></div>`;
    $("details").innerHTML = html;
    const link = $("to-group"); if (link) link.addEventListener("click", () => showGroup(grp.id));
  }

  // ---------------------------------------------------------------- groups table
  const COLS = [
    ["id", "group", (g) => g.id], ["ops", "ops", (g) => g.ops.join(" "), true],
    ["shard", "sharding × split", (g) => g.sharding ? `${g.sharding.join("·")} × ${g.split.join("·")}` : "–", true],
    ["tiles", "tiles", (g) => g.tiles], ["steps", "steps", (g) => g.steps],
    ["ld", "ld", (g) => g.engines.ld || 0], ["ne", "ne", (g) => g.engines.ne || 0], ["ct", "ct", (g) => g.engines.ct || 0],
    ["st", "st", (g) => g.engines.st || 0], ["cycles", "cycles (est.)", (g) => g.cycles],
    ["sim", "cycles (sim.)", (g) => g.simulated_cycles], ["bound", "bound", (g) => g.bound_cycles],
    ["ratio", "est./bound", (g) => g.cycles && g.bound_cycles ? +(g.cycles / g.bound_cycles).toFixed(2) : null],
    ["spm", "SPM peak", (g) => g.spm_peak], ["spmlb", "SPM lower bd.", (g) => g.spm_lower_bound],
    ["ddr", "DDR bytes", (g) => g.ddr_bytes],
  ];
  let sortBy = 0, sortDir = 1;
  function drawGroups() {
    $("groups-head").innerHTML = "<tr>" + COLS.map((c, i) => `<th data-c="${i}" class="${c[3] ? "l" : ""}">${c[1]}</th>`).join("") + "</tr>";
    $("groups-head").addEventListener("click", (ev) => {
      const c = ev.target.dataset.c; if (c == null) return;
      sortDir = +c === sortBy ? -sortDir : 1; sortBy = +c; fillGroups();
    });
    $("groups-body").addEventListener("click", (ev) => { const tr = ev.target.closest("tr"); if (tr) showGroup(+tr.dataset.g); });
    fillGroups();
  }
  function fillGroups() {
    const get = COLS[sortBy][2];
    const rows = D.groups.slice().sort((a, b) => { const x = get(a), y = get(b); return (x == null) - (y == null) || (x < y ? -1 : x > y ? 1 : 0) * sortDir; });
    $("groups-body").innerHTML = rows.map((g) => `<tr data-g="${g.id}">` + COLS.map((c) => {
      const v = c[2](g);
      return `<td class="${c[3] ? "l" : ""}">${c[0] === "ops" ? esc(v.length > 60 ? v.slice(0, 57) + "…" : v) : esc(fmt(v))}</td>`;
    }).join("") + "</tr>").join("");
  }

  // ---------------------------------------------------------------- per-group views
  function showGroup(gid) {
    $("group-select").value = gid;
    document.querySelectorAll("#groups-body tr.sel").forEach((r) => r.classList.remove("sel"));
    const tr = document.querySelector(`#groups-body tr[data-g="${gid}"]`); if (tr) tr.classList.add("sel");
    const V = D.views[String(gid)], g = D.groups.find((x) => x.id === gid);
    $("group-title").textContent = g ? `group ${gid}: ${g.ops.join(", ")}` : `group ${gid}`;
    if (!V || V.error) { $("gantt").innerHTML = ""; $("spm").innerHTML = ""; $("group-note").textContent = V ? V.error : "this group has no plan (it runs in DDR)"; return; }
    $("group-note").textContent = `${V.steps} steps (first ${V.shown} drawn), one frame = ${V.period} cycles; SPM peak ${bytes(V.spm_peak)}, lower bound ${bytes(V.spm_lower_bound)}, capacity ${bytes(V.spm_bytes)}`;
    drawGantt(V); drawSpm(V);
  }
  function timeAxis(w, tmax, left, y) {
    let s = `<line x1="${left}" y1="${y}" x2="${left + w}" y2="${y}" stroke="#999"/>`;
    for (let i = 0; i <= 5; i++) { const t = tmax * i / 5, x = left + w * i / 5; s += `<text x="${x}" y="${y + 12}" text-anchor="middle">${Math.round(t)}</text>`; }
    return s + `<text x="${left + w}" y="${y + 24}" text-anchor="end">cycles</text>`;
  }
  function drawGantt(V) {
    const lanes = ["ld", "ne", "ct", "tdma", "noc", "st"].filter((l) => V.bars.some((b) => b[0] === l));
    const W = Math.max(600, $("gantt-box").clientWidth - 20), left = 50, w = W - left - 10, lh = 22;
    const tmax = Math.max(1, ...V.bars.map((b) => b[2]));
    let s = "";
    lanes.forEach((l, i) => { s += `<text x="4" y="${i * lh + 15}">${l}</text><rect x="${left}" y="${i * lh + 2}" width="${w}" height="${lh - 4}" fill="#f3f4f7"/>`; });
    for (const [lane, a, z, node, step] of V.bars) {
      const i = lanes.indexOf(lane), x = left + w * a / tmax, bw = Math.max(1, w * (z - a) / tmax);
      s += `<rect class="task" x="${x}" y="${i * lh + 3}" width="${bw}" height="${lh - 6}" fill="${LANE_COLOR[lane]}" opacity="${0.55 + 0.45 * ((step % 2))}"><title>${esc(V.labels[node])} step ${step}: ${a}–${z}</title></rect>`;
    }
    s += timeAxis(w, tmax, left, lanes.length * lh + 2);
    $("gantt").setAttribute("viewBox", `0 0 ${W} ${lanes.length * lh + 30}`);
    $("gantt").setAttribute("height", lanes.length * lh + 30);
    $("gantt").innerHTML = s;
  }
  function drawSpm(V) {
    const W = Math.max(600, $("gantt-box").clientWidth - 20), left = 60, w = W - left - 10, H = 240;
    const tmax = Math.max(1, ...V.buffers.map((b) => b[4])), amax = Math.max(1, V.spm_peak, ...V.buffers.map((b) => b[1] + b[2]));
    let s = `<rect x="${left}" y="0" width="${w}" height="${H}" fill="#f3f4f7"/>`;
    const names = [...new Set(V.buffers.map((b) => b[0].split("#")[0]))];
    for (const [name, off, size, a, z] of V.buffers) {
      const c = PALETTE[names.indexOf(name.split("#")[0]) % PALETTE.length];
      const y = H - H * (off + size) / amax, h = Math.max(1, H * size / amax);
      s += `<rect class="buf" x="${left + w * a / tmax}" y="${y}" width="${Math.max(1, w * (z - a) / tmax)}" height="${h}" fill="${c}" stroke="#555" stroke-width=".4"><title>${esc(name)}: ${size} B at ${off}, live ${a}–${z}</title></rect>`;
    }
    const lb = H - H * V.spm_lower_bound / amax;
    s += `<line x1="${left}" x2="${left + w}" y1="${lb}" y2="${lb}" stroke="#d62728" stroke-dasharray="4 3"/><text x="${left + w}" y="${lb - 3}" text-anchor="end" fill="#d62728">lower bound</text>`;
    s += `<text x="4" y="10">${bytes(amax)}</text><text x="4" y="${H}">0</text>` + timeAxis(w, tmax, left, H);
    $("spm").setAttribute("viewBox", `0 0 ${W} ${H + 30}`);
    $("spm").setAttribute("height", H + 30);
    $("spm").innerHTML = s;
  }
  function drawGroupSelect() {
    const ids = Object.keys(D.views).map(Number).sort((a, b) => a - b);
    $("group-select").innerHTML = D.groups.map((g) => `<option value="${g.id}">group ${g.id}: ${esc(g.ops.slice(0, 4).join(" "))}${g.ops.length > 4 ? " …" : ""}</option>`).join("");
    $("group-select").addEventListener("change", (ev) => showGroup(+ev.target.value));
    const first = D.groups.slice().sort((a, b) => (b.cycles || 0) - (a.cycles || 0))[0];
    if (first) showGroup(first.id); else if (ids.length) showGroup(ids[0]);
  }

  // ---------------------------------------------------------------- numerics
  function drawNumerics() {
    const N = D.numerics;
    if (!N || !N.stages) { $("numerics").innerHTML = `<p class=muted>No comparison in this report. Run <code>tx8c compare MODEL --json &gt; OUT/compare.json</code> (add <code>--all-tensors</code> for every intermediate tensor) and write the report again.</p>`; return; }
    $("numerics").innerHTML = "<table><tr><th class=l>stage</th><th>cosine</th><th>SQNR (dB)</th><th>max abs err</th><th class=l>verdict</th><th class=l>tensors</th></tr>" + N.stages.map((r) => {
      const t = r.tensors, f = t && t.first_failure;
      const tt = t ? `${t.compared} compared, ${t.failed} failed${f ? `; first: ${esc(f.tensor)} from ${esc(f.producer)}` : ""}` : "";
      const col = r.verdict === "PASS" ? "#2a7" : r.verdict === "FAIL" ? "#d33" : "#c80";
      return `<tr><td class=l>${esc(r.stage)}</td><td>${r.cosine.toFixed(8)}</td><td>${fmt(r.sqnr_db, 2)}</td><td>${fmt(r.max_abs_error)}</td><td class=l style="color:${col};font-weight:600">${esc(r.verdict)}${r.reason ? " – " + esc(r.reason) : ""}</td><td class=l>${tt}</td></tr>`;
    }).join("") + "</table>";
  }

  function main() {
    const steps = [drawSummary, drawGraph, drawGroups, drawGroupSelect, drawNumerics];
    for (const step of steps) { try { step(); } catch (e) { note(`${step.name}: ${e.message}`); } }
    document.body.getBoundingClientRect();  // style and layout done: the page is drawn
    document.body.dataset.renderMs = Math.round(performance.now());
    document.body.dataset.nodes = $("graph-layer").querySelectorAll(".node").length;
    document.body.dataset.groupRows = $("groups-body").querySelectorAll("tr").length;
    document.body.dataset.timeRows = $("passes").querySelectorAll("tr").length;
    document.body.dataset.ready = "1";
  }
  main();
})();

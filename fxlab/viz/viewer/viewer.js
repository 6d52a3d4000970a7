/* fxlab graph viewer: the module tree and the graph of one stage at a time, folded as
   the pictures are; expand and collapse groups, pan and zoom, search, node details with
   the same node in the other stages. Layout by dagre (vendored), only of what is open.
   Reads the JSON in #fxlab-data; fetches nothing. */
(function () {
  "use strict";
  const DATA = JSON.parse(document.getElementById("fxlab-data").textContent);
  const root = document.getElementById("fxlab-viewer");
  const $ = (sel) => root.querySelector(sel);
  const NS = "http://www.w3.org/2000/svg";
  const F = {};
  DATA.node_fields.forEach((f, i) => { F[f] = i; });
  const G = {};
  DATA.group_fields.forEach((f, i) => { G[f] = i; });
  const views = new Map();  // "graph/stage" -> view state
  let current = null;
  const timings = {};

  function esc(text) {
    return String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
  }

  // ------------------------------------------------------------ per-stage indexes

  function prepare(st) {
    if (st.children) return;
    st.children = st.groups.map(() => []);
    st.leaves = st.groups.map(() => []);
    st.repeatMembers = [];
    st.groups.forEach((g, i) => {
      if (i === 0) return;
      st.children[g[G.parent]].push(i);
      if (g[G.repeat] >= 0) (st.repeatMembers[g[G.repeat]] = st.repeatMembers[g[G.repeat]] || []).push(i);
    });
    st.nodes.forEach((n, i) => st.leaves[n[F.group]].push(i));
    st.byName = new Map(st.nodes.map((n, i) => [n[F.name], i]));
  }

  function viewOf(gi, si) {
    const key = gi + "/" + si;
    if (!views.has(key)) {
      const st = DATA.graphs[gi].stages[si];
      prepare(st);
      const open = new Set();
      st.groups.forEach((g, i) => { if (g[G.open]) open.add(i); });
      views.set(key, { gi, si, st, open, unfolded: new Set(), selected: -1, hits: new Set(), transform: null, cache: new Map(), where: new Map() });
    }
    return views.get(key);
  }

  // ------------------------------------------------------------ what is drawn, per group
  // Each open group is laid out on its own (its nodes, its folded children as boxes, its
  // open children as boxes of their own laid-out size), and the layout is kept until
  // something inside it opens or closes: expanding a module lays out that module and the
  // short rows of its ancestors, not the graph.

  const PAD = 8, LABEL = 16, FAN_OUT = 5;

  function ancestry(st) {
    // node -> its groups from the innermost to the root (root excluded)
    if (st.chains) return st.chains;
    st.chains = st.nodes.map((n) => { const out = []; for (let g = n[F.group]; g > 0; g = st.groups[g][G.parent]) out.push(g); return out; });
    st.subtree = st.groups.map(() => []);
    st.nodes.forEach((n, i) => { st.subtree[0].push(i); for (const g of st.chains[i]) st.subtree[g].push(i); });
    return st.chains;
  }

  function unitIn(view, gi, n) {
    // the unit that stands for node n in open group gi's own layout
    const st = view.st, chain = st.chains[n];
    const k = gi === 0 ? chain.length : chain.indexOf(gi);
    if (k === 0) return "n" + n;
    const c = chain[k - 1];
    const r = st.groups[c][G.repeat];
    if (r >= 0 && !view.unfolded.has(r)) return "r" + r;
    return (view.open.has(c) ? "c" : "g") + c;
  }

  function unitsOf(view, gi) {
    const st = view.st, units = [], seen = new Set();
    for (const n of st.leaves[gi]) units.push({ id: "n" + n, type: "node", index: n });
    for (const c of st.children[gi]) {
      const r = st.groups[c][G.repeat];
      if (r >= 0 && !view.unfolded.has(r)) {
        if (!seen.has(r)) { seen.add(r); units.push({ id: "r" + r, type: "repeat", index: r }); }
      } else {
        units.push({ id: (view.open.has(c) ? "c" : "g") + c, type: view.open.has(c) ? "cluster" : "group", index: c });
      }
    }
    return units;
  }

  function layoutGroup(view, gi) {
    if (view.cache.has(gi)) return view.cache.get(gi);
    const st = view.st;
    const g = new dagre.graphlib.Graph();
    g.setGraph({ rankdir: "TB", nodesep: 14, ranksep: 24, marginx: 0, marginy: 0 });
    g.setDefaultEdgeLabel(() => ({}));
    const units = unitsOf(view, gi);
    for (const u of units) {
      if (u.type === "cluster") {
        const inner = layoutGroup(view, u.index);
        g.setNode(u.id, { unit: u, width: inner.width + 2 * PAD, height: inner.height + 2 * PAD + LABEL });
      } else {
        const lines = unitLines(st, u);
        const width = Math.min(320, 16 + 6.4 * Math.max(...lines.map((l) => l.length)));
        g.setNode(u.id, { unit: u, lines, width, height: 8 + 14 * lines.length });
      }
    }
    const counts = new Map();
    for (const n of st.subtree[gi]) {
      const dst = unitIn(view, gi, n);
      for (const m of st.inputs[n]) {
        if (gi !== 0 && !st.chains[m].includes(gi)) continue;  // from outside this group
        const src = unitIn(view, gi, m);
        if (src !== dst) counts.set(src + ">" + dst, (counts.get(src + ">" + dst) || 0) + 1);
      }
    }
    // A box feeding many others (cos/sin tables read by every layer) would drag its
    // edges across every rank, and dagre's ordering time with them; its edges become
    // stubs over the boxes it feeds ("<- slice_1"), laid out by nobody.
    const fanOut = new Map();
    for (const k of counts.keys()) { const a = k.split(">")[0]; fanOut.set(a, (fanOut.get(a) || 0) + 1); }
    const stubs = new Map();  // target -> source ids
    for (const [k, count] of counts) {
      const [a, b] = k.split(">");
      if (fanOut.get(a) > FAN_OUT) { if (!stubs.has(b)) stubs.set(b, []); stubs.get(b).push(a); }
      else g.setEdge(a, b, { count });
    }
    dagre.layout(g);
    const info = g.graph();
    const result = { g, stubs, fanOut, width: Math.max(info.width || 0, 60), height: Math.max(info.height || 0, 20), units: units.length };
    view.cache.set(gi, result);
    return result;
  }

  function invalidate(view, gi) {
    // a group changed: its own layout and every ancestor's are stale
    for (let g = gi; g > 0; g = view.st.groups[g][G.parent]) view.cache.delete(g);
    view.cache.delete(0);
  }

  function unitLines(st, u) {
    if (u.type === "node") {
      const n = st.nodes[u.index];
      return [n[F.name], n[F.text] === n[F.name] ? "" : n[F.text], n[F.sig]].filter(Boolean);
    }
    if (u.type === "repeat") {
      const members = st.repeatMembers[u.index];
      const first = st.groups[members[0]][G.label], last = st.groups[members[members.length - 1]][G.label];
      const size = members.reduce((s, m) => s + st.groups[m][G.size], 0);
      const a = /^(.*?)(\d+)( \(.*\))?$/.exec(first), b = /^(.*?)(\d+)( \(.*\))?$/.exec(last);
      const names = members.length === 1 ? first : a && b ? `${a[1]}${a[2]}-${b[2]}${a[3] || ""}` : `${first} … ${last}`;
      return [names, "x" + members.length + " like the one drawn · " + size + " nodes"];
    }
    const g = st.groups[u.index];
    return [...g[G.label].split("\n"), g[G.size] + " nodes (click to open)"];
  }

  function unitColours(st, u) {
    if (u.type === "node") {
      const kind = DATA.kinds[st.nodes[u.index][F.kind]];
      return kind ? [kind[0], kind[1]] : ["#ffffff", "#888888"];
    }
    if (u.type === "repeat") return ["#dce6f5", "#3d5a80"];
    const g = st.groups[u.index];
    if (u.type === "group") return [g[G.fill] || "#e8edf4", g[G.border] || "#5b6f8a"];
    return [g[G.fill] || "#ffffff", g[G.border] || "#8093ad"];
  }

  // ------------------------------------------------------------ drawing

  function drawGroup(view, gi, ox, oy, parts) {
    const st = view.st, lay = layoutGroup(view, gi), g = lay.g;
    for (const e of g.edges()) {
      const d = g.edge(e);
      const pts = d.points.map((p) => (p.x + ox).toFixed(1) + "," + (p.y + oy).toFixed(1)).join(" ");
      parts.push(`<polyline points="${pts}" fill="none" stroke="#777" stroke-width="${Math.min(1 + d.count / 8, 4).toFixed(1)}" marker-end="url(#fxlab-arrow)"/>`);
      if (d.count > 1) { const p = d.points[Math.floor(d.points.length / 2)]; parts.push(`<text x="${p.x + ox + 3}" y="${p.y + oy}" font-size="9" fill="#555">x${d.count}</text>`); }
    }
    for (const [dst, sources] of lay.stubs) {
      const d = g.node(dst), x = d.x + ox, top = d.y - d.height / 2 + oy;
      const names = sources.map((src) => unitLines(st, g.node(src).unit)[0]).join(", ");
      parts.push(`<line x1="${x}" y1="${top - 12}" x2="${x}" y2="${top}" stroke="#999" stroke-dasharray="3,2" marker-end="url(#fxlab-arrow)"/><text x="${x + 4}" y="${top - 4}" font-size="9" fill="#777">← ${esc(names.length > 60 ? names.slice(0, 58) + "…" : names)}</text>`);
    }
    for (const id of g.nodes()) {
      const d = g.node(id), u = d.unit;
      const x = d.x - d.width / 2 + ox, y = d.y - d.height / 2 + oy;
      view.where.set(id, { x: x + d.width / 2, y: y + d.height / 2 });
      if (lay.fanOut.get(id) > FAN_OUT) parts.push(`<text x="${x + d.width / 2}" y="${y + d.height + 11}" text-anchor="middle" font-size="9" fill="#777">→ ${lay.fanOut.get(id)} boxes</text>`);
      const [fill, stroke] = unitColours(st, u);
      if (u.type === "cluster") {
        const label = st.groups[u.index][G.label].split("\n")[0];
        parts.push(`<g class="unit cluster" data-unit="${id}"><rect x="${x}" y="${y}" width="${d.width}" height="${d.height}" rx="6" fill="${fill}" fill-opacity="0.35" stroke="${stroke}" stroke-dasharray="5,3"/><text x="${x + 5}" y="${y + 12}" font-size="10" fill="#3d4f66">▾ ${esc(label)}</text></g>`);
        drawGroup(view, u.index, x + PAD, y + PAD + LABEL, parts);
        continue;
      }
      const cls = ["unit", u.type];
      if (u.type === "node" && u.index === view.selected) cls.push("selected");
      if (u.type === "node" && view.hits.has(u.index)) cls.push("hit");
      const text = d.lines.map((l, i) => `<text x="${x + d.width / 2}" y="${y + 16 + 14 * i}" text-anchor="middle" font-size="${i ? 10 : 11}"${i ? ' fill="#444"' : ' font-weight="600"'}>${esc(l.length > 48 ? l.slice(0, 46) + "…" : l)}</text>`).join("");
      let extra = u.type === "repeat" ? `<rect x="${x + 4}" y="${y - 4}" width="${d.width}" height="${d.height}" fill="${fill}" stroke="${stroke}"/>` : "";
      if (u.type === "node") {
        // hover: source line; a corner mark where functionalization changed the node
        const node = st.nodes[u.index], change = DATA.graphs[view.gi].diff[st.name + "/" + node[F.name]];
        extra += `<title>${esc([node[F.source], node[F.code], change ? "functionalization: " + change.join("; ") : ""].filter(Boolean).join("\n"))}</title>`;
        if (change) extra += `<text class="changed" x="${x + d.width - 4}" y="${y + 11}" text-anchor="end" font-size="10" fill="#a3229a">Δ</text>`;
      }
      parts.push(`<g class="${cls.join(" ")}" data-unit="${id}">${extra}<rect x="${x}" y="${y}" width="${d.width}" height="${d.height}" rx="${u.type === "node" ? 4 : 1}" fill="${fill}" stroke="${stroke}"/>${text}</g>`);
    }
  }

  function countUnits(view, gi) {
    const lay = layoutGroup(view, gi);
    let total = lay.units;
    for (const id of lay.g.nodes()) if (id[0] === "c") total += countUnits(view, Number(id.slice(1)));
    return total;
  }

  function render(view) {
    const start = performance.now();
    ancestry(view.st);
    const lay = layoutGroup(view, 0);
    const parts = [];
    view.where = new Map();
    drawGroup(view, 0, 16, 16, parts);
    $(".viewport").innerHTML = parts.join("");
    view.size = { width: lay.width + 32, height: lay.height + 32 };
    if (!view.transform) fit(view);
    applyTransform(view);
    view.renderMs = performance.now() - start;
    const ops = view.st.nodes.filter((n) => n[F.text] !== "placeholder" && n[F.text] !== "output").length;
    const counted = view.st.name === "ascend_ir" ? `${ops} GE ops` : `${view.st.nodes.length} nodes (${ops} ops)`;
    $(".status").textContent = `${counted}, ${countUnits(view, 0)} boxes drawn; laid out and drawn in ${view.renderMs.toFixed(0)} ms`;
    renderTree(view);
  }


  // ------------------------------------------------------------ pan and zoom

  function fit(view) {
    // the width fits, the top shows; a tall graph is scrolled (dragged), not shrunk unreadable
    const box = $(".canvas").getBoundingClientRect(), width = box.width || 800;
    const k = Math.max(0.45, Math.min(1, width / view.size.width));
    view.transform = { k, x: Math.max(0, (width - view.size.width * k) / 2), y: 4 };
  }

  function applyTransform(view) {
    const t = view.transform;
    $(".viewport").setAttribute("transform", `translate(${t.x},${t.y}) scale(${t.k})`);
  }

  function centreOn(view, unitId) {
    const d = view.where.get(unitId);
    if (!d) return;
    const box = $(".canvas").getBoundingClientRect();
    const k = Math.max(view.transform.k, 0.8);
    view.transform = { k, x: (box.width || 800) / 2 - d.x * k, y: (box.height || 600) / 2 - d.y * k };
    applyTransform(view);
  }

  function installPanZoom() {
    const canvas = $(".canvas");
    canvas.addEventListener("wheel", (ev) => {
      ev.preventDefault();
      const t = current.transform, box = canvas.getBoundingClientRect();
      const factor = Math.exp(-ev.deltaY * 0.0015);
      const mx = ev.clientX - box.left, my = ev.clientY - box.top;
      current.transform = { k: t.k * factor, x: mx - (mx - t.x) * factor, y: my - (my - t.y) * factor };
      applyTransform(current);
    }, { passive: false });
    let drag = null;
    canvas.addEventListener("mousedown", (ev) => { drag = { x: ev.clientX, y: ev.clientY, t: { ...current.transform }, moved: false }; });
    window.addEventListener("mousemove", (ev) => {
      if (!drag) return;
      const dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
      if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
      current.transform = { k: drag.t.k, x: drag.t.x + dx, y: drag.t.y + dy };
      applyTransform(current);
    });
    window.addEventListener("mouseup", () => { setTimeout(() => { drag = null; }, 0); });
    canvas.addEventListener("click", (ev) => {
      if (drag && drag.moved) return;
      const el = ev.target.closest("g.unit");
      // a cluster closes from its label only: its area is where its contents are
      if (el && !(el.classList.contains("cluster") && ev.target.tagName !== "text")) clickUnit(current, el.dataset.unit);
    });
  }

  // ------------------------------------------------------------ expand, collapse, select

  function clickUnit(view, id) {
    const type = id[0], index = Number(id.slice(1));
    if (type === "g") { view.open.add(index); invalidate(view, index); render(view); }
    else if (type === "c") { view.open.delete(index); invalidate(view, index); render(view); }
    else if (type === "r") { view.unfolded.add(index); invalidate(view, view.st.groups[view.st.repeatMembers[index][0]][G.parent]); render(view); }
    else if (type === "n") { select(view, index); }
  }

  function toggleGroup(view, gi) {
    const r = view.st.groups[gi][G.repeat];
    if (r >= 0 && !view.unfolded.has(r)) { view.unfolded.add(r); view.open.add(gi); }
    else if (view.open.has(gi)) view.open.delete(gi);
    else view.open.add(gi);
    invalidate(view, gi);
    render(view);
  }

  function reveal(view, n) {
    const st = view.st;
    let gi = st.nodes[n][F.group];
    invalidate(view, gi);
    while (gi > 0) {
      view.open.add(gi);
      const r = st.groups[gi][G.repeat];
      if (r >= 0) view.unfolded.add(r);
      gi = st.groups[gi][G.parent];
    }
    render(view);
    select(view, n);
    centreOn(view, "n" + n);
  }

  function select(view, n) {
    view.selected = n;
    for (const el of root.querySelectorAll("g.unit.selected")) el.classList.remove("selected");
    const el = root.querySelector(`g.unit[data-unit="n${n}"]`);
    if (el) el.classList.add("selected");
    showDetails(view, n);
  }

  // ------------------------------------------------------------ the module tree

  function renderTree(view) {
    const st = view.st;
    function items(gi) {
      const out = [];
      const seen = new Set();
      for (const c of st.children[gi]) {
        const g = st.groups[c], r = g[G.repeat];
        if (r >= 0 && !view.unfolded.has(r)) {
          if (seen.has(r)) continue;
          seen.add(r);
          const members = st.repeatMembers[r];
          out.push(`<li><span data-group="${c}">▸ ${esc(unitLines(st, { type: "repeat", index: r })[0])} <span class="count">x${members.length}</span></span></li>`);
          continue;
        }
        const isOpen = view.open.has(c);
        const inner = isOpen && st.children[c].length ? `<ul>${items(c)}</ul>` : "";
        out.push(`<li><span data-group="${c}">${isOpen ? "▾" : "▸"} ${esc(g[G.label].split("\n")[0])} <span class="count">${g[G.size]}</span></span>${inner}</li>`);
      }
      return out.join("");
    }
    $(".tree").innerHTML = `<div class="status">modules</div><ul>${items(0)}</ul>`;
  }

  // ------------------------------------------------------------ details and counterparts

  function counterparts(view, n) {
    const graph = DATA.graphs[view.gi], st = view.st, name = st.nodes[n][F.name];
    const found = [];
    const add = (stage, node) => {
      const si = graph.stages.findIndex((s) => s.name === stage);
      if (si >= 0 && si !== view.si && !found.some((f) => f[0] === si && f[1] === node)) found.push([si, node]);
    };
    for (const [left, ln, rs, rn] of graph.links) {
      if (left === st.name && ln === name) add(rs, rn);
      if (rs === st.name && rn === name) add(left, ln);
    }
    // two hops (aten -> functional -> GE ops), so every stage is reached
    for (const [si, node] of found.slice()) {
      const stage = graph.stages[si].name;
      for (const [left, ln, rs, rn] of graph.links) {
        if (left === stage && ln === node) add(rs, rn);
        if (rs === stage && rn === node) add(left, ln);
      }
    }
    // the same source line in the same modules, for what provenance does not link (the
    // dynamo stage's torch-level ops, a copy_ epilogue): not placeholders, whose line is
    // only their first use
    const source = st.nodes[n][F.source], where = modulePath(st, n);
    if (source && st.nodes[n][F.text] !== "placeholder") {
      graph.stages.forEach((other, si) => {
        if (si === view.si || found.some((f) => f[0] === si)) return;
        prepare(other);
        other.nodes.forEach((m, i) => {
          if (m[F.source] === source && m[F.text] !== "placeholder" && found.length < 40 && modulePath(other, i) === where) add(other.name, m[F.name]);
        });
      });
    }
    return found;
  }

  function modulePath(st, n) {
    const path = [];
    for (let gi = st.nodes[n][F.group]; gi > 0; gi = st.groups[gi][G.parent]) path.push(st.groups[gi][G.label]);
    return path.join("|");
  }

  // The Ascend IR and GE's phases off an NPU machine ("ge:<phase>") list GE ops.
  function isGe(st) {
    return st.name === "ascend_ir" || st.name.startsWith("ge:");
  }

  function showDetails(view, n) {
    const st = view.st, node = st.nodes[n], graph = DATA.graphs[view.gi];
    const rows = [["node", node[F.name]], [isGe(st) ? "GE op type" : "target", node[F.text]], ["output", node[F.sig]]];
    if (node[F.kind]) rows.push(["kind", (DATA.kinds[node[F.kind]] || [0, 0, node[F.kind]])[2]]);
    const path = [];
    for (let gi = node[F.group]; gi > 0; gi = st.groups[gi][G.parent]) path.unshift(st.groups[gi][G.label].split("\n").join(" · "));
    if (path.length) rows.push(["in", path.join(" › ")]);
    if (node[F.source]) rows.push(["source", node[F.source]]);
    if (node[F.code]) rows.push([isGe(st) ? "attrs" : "code", node[F.code]]);
    const change = graph.diff[st.name + "/" + node[F.name]];
    if (change) rows.push(["functionalization", change.join("; ")]);
    let html = "<h4>details</h4><table>" + rows.map(([k, v]) => `<tr><th>${esc(k)}</th><td><code>${esc(v)}</code></td></tr>`).join("") + "</table>";
    const others = counterparts(view, n);
    if (others.length) {
      html += "<h4>in the other stages</h4>" + others.map(([si, name]) => `<div><a data-stage="${si}" data-node="${esc(name)}">${esc(graph.stages[si].name)}: ${esc(name)}</a></div>`).join("");
    }
    $(".details").innerHTML = html;
  }

  // ------------------------------------------------------------ search

  function highlight(view) {
    for (const el of root.querySelectorAll("g.unit.node")) el.classList.toggle("hit", view.hits.has(Number(el.dataset.unit.slice(1))));
  }

  function search(view, query) {
    const q = query.trim().toLowerCase();
    view.hits = new Set();
    if (!q) { $(".results").innerHTML = ""; highlight(view); return []; }
    const st = view.st;
    st.nodes.forEach((n, i) => {
      if (n[F.name].toLowerCase().includes(q) || n[F.text].toLowerCase().includes(q) || n[F.source].toLowerCase().includes(q) || n[F.code].toLowerCase().includes(q)) view.hits.add(i);
    });
    const shown = [...view.hits].slice(0, 200);
    $(".results").innerHTML = `<div class="status">${view.hits.size} match${view.hits.size === 1 ? "" : "es"}</div>` +
      shown.map((i) => `<div data-node-index="${i}">${esc(st.nodes[i][F.name])} <span class="count">${esc(st.nodes[i][F.text])}</span></div>`).join("");
    highlight(view);
    return shown;
  }

  // ------------------------------------------------------------ stage picker and start

  function show(gi, si) {
    current = viewOf(gi, si);
    $(".pick").value = gi + "/" + si;
    render(current);
    const q = $(".search").value;
    if (q) search(current, q);
    if (current.selected >= 0) showDetails(current, current.selected); else $(".details").innerHTML = notesHtml(current.st);
  }

  function notesHtml(st) {
    const notes = (st.notes || []).map((n) => `<p class="status">${esc(n)}</p>`).join("");
    return `<p class="status">Click a box to open a module, a cluster's label to close it, a node for its details. Search by node name, op, or source line.</p>${notes}`;
  }

  function buildChrome() {
    const options = [];
    DATA.graphs.forEach((g, gi) => g.stages.forEach((s, si) => options.push(`<option value="${gi}/${si}">graph ${g.index} · ${esc(s.name)} (${s.nodes.length})</option>`)));
    root.innerHTML = `<div class="bar"><select class="pick">${options.join("")}</select>` +
      `<input class="search" type="search" placeholder="search: node, op type, source line"><button class="fit" type="button">fit</button><span class="status"></span></div>` +
      `<div class="tree"></div><div class="canvas"><svg><defs><marker id="fxlab-arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0L10,5L0,10z" fill="#777"/></marker></defs><g class="viewport"></g></svg></div>` +
      `<div class="side"><div class="results"></div><div class="details"></div></div>`;
    $(".pick").addEventListener("change", (ev) => { const [gi, si] = ev.target.value.split("/").map(Number); show(gi, si); });
    $(".fit").addEventListener("click", () => { fit(current); applyTransform(current); });
    let timer = null;
    $(".search").addEventListener("input", (ev) => { clearTimeout(timer); timer = setTimeout(() => search(current, ev.target.value), 200); });
    $(".tree").addEventListener("click", (ev) => { const el = ev.target.closest("[data-group]"); if (el) toggleGroup(current, Number(el.dataset.group)); });
    $(".results").addEventListener("click", (ev) => { const el = ev.target.closest("[data-node-index]"); if (el) reveal(current, Number(el.dataset.nodeIndex)); });
    $(".details").addEventListener("click", (ev) => {
      const el = ev.target.closest("a[data-stage]");
      if (!el) return;
      show(current.gi, Number(el.dataset.stage));
      const n = current.st.byName.get(el.dataset.node);
      if (n !== undefined) reveal(current, n);
    });
    installPanZoom();
  }

  function firstStage(graph) {
    const si = graph.stages.findIndex((s) => s.name === "functional");
    return si >= 0 ? si : 0;
  }

  // A page opened with #fxlab-selftest exercises the viewer and writes what it saw into
  // #fxlab-selftest (for the browser test and the benchmark).
  function selftest() {
    const out = { first_view_ms: timings.firstView, errors: window.__fxlabErrors || [] };
    const view = current;
    out.units = root.querySelectorAll("g.unit").length;
    out.tree_items = root.querySelectorAll(".tree [data-group]").length;
    out.changed_marks = root.querySelectorAll("text.changed").length;
    out.expand = [];
    for (const kind of ["group", "repeat"]) {
      const folded = root.querySelector("g.unit." + kind);
      if (!folded) continue;
      const before = root.querySelectorAll("g.unit").length, t0 = performance.now();
      clickUnit(view, folded.dataset.unit);
      const ms = performance.now() - t0;
      out.expand.push({ kind, unit: folded.dataset.unit, label: folded.textContent.slice(0, 80), ms, before, after: root.querySelectorAll("g.unit").length });
      if (kind === "repeat") {
        // then open one of the layers that were in the box
        const members = view.st.repeatMembers[Number(folded.dataset.unit.slice(1))];
        const id = "g" + members[members.length - 1], el = root.querySelector(`g.unit[data-unit="${id}"]`);
        if (el) {
          const count = root.querySelectorAll("g.unit").length, t1 = performance.now();
          clickUnit(view, id);
          out.expand.push({ kind: "layer", unit: id, label: el.textContent.slice(0, 80), ms: performance.now() - t1, before: count, after: root.querySelectorAll("g.unit").length });
        }
      }
    }
    const st = view.st;
    const probe = st.nodes[st.nodes.length - 2] || st.nodes[0];
    const hits = search(view, probe[F.text]);
    out.search = probe[F.text];
    out.search_hits = view.hits.size;
    if (hits.length) {
      const t0 = performance.now();
      reveal(view, hits[hits.length - 1]);
      out.reveal_ms = performance.now() - t0;
      out.revealed = st.nodes[hits[hits.length - 1]][F.name];
      out.revealed_drawn = !!root.querySelector(`g.unit.selected[data-unit="n${hits[hits.length - 1]}"]`);
      out.details = $(".details").textContent.slice(0, 400);
    }
    out.stages = DATA.graphs.map((g) => g.stages.map((s) => s.name));
    const pre = document.createElement("pre");
    pre.id = "fxlab-selftest";
    pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  }

  buildChrome();
  if (DATA.graphs.length) show(0, firstStage(DATA.graphs[0]));
  timings.firstView = performance.now();
  root.dataset.firstViewMs = timings.firstView.toFixed(0);
  if (location.hash === "#fxlab-selftest") selftest();
  if (location.hash.startsWith("#fxlab-shot")) {
    // the viewer alone, a highlighted node selected: for screenshots (#fxlab-shot:STAGE
    // shows that stage of the first graph)
    document.body.classList.add("fxlab-shot");
    const wanted = DATA.graphs.length ? DATA.graphs[0].stages.findIndex((s) => "#fxlab-shot:" + s.name === location.hash) : -1;
    if (wanted >= 0) show(0, wanted);
    const n = current ? current.st.nodes.findIndex((node) => node[F.kind] && node[F.kind] !== "scope") : -1;
    if (n >= 0) reveal(current, n);
  }
})();

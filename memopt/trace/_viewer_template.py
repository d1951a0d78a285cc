"""The page of the evolution-graph viewer: one HTML string with inline CSS and vanilla JS (canvas, no network).

`memopt.trace.render.view_html` puts the HTML-escaped title at `TITLE_MARK` and the view JSON (with
``<``, ``>`` and ``&`` escaped, so no value can close the script element) at `DATA_MARK`. The script
reads that JSON and draws the layout `graph_view` computed (world pixels in ``meta.layout``, node
``px`` / ``py`` / ``r``) on a canvas: the wheel zooms the time axis, shift + wheel the lanes, drag
pans, hovering shows a node's full label, a click selects (and tells a page that embeds the viewer, with a
``memopt:select`` event on the window whose ``detail`` is the node id); ``#node=ID`` in the URL selects and centres
a node. Nodes shrink with the columns so they
never overlap; a label is drawn only where it fits before the next node of its lane (cut like
`memopt.trace.render.shown_label`), and only when the lanes are tall enough. The side panel is
filled with text nodes only (``textContent``), never with HTML built from data.
"""

__all__ = ["PAGE", "TITLE_MARK", "DATA_MARK"]

TITLE_MARK = "@@TITLE@@"
DATA_MARK = "@@DATA@@"

PAGE = r"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>@@TITLE@@</title>
<style>
* { box-sizing: border-box; }
html, body { margin: 0; height: 100%; font: 13px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d2329; }
body { display: flex; flex-direction: column; }
header { padding: 8px 14px; border-bottom: 1px solid #d8dee4; background: #f6f8fa; }
#title { font-size: 16px; font-weight: 600; }
#sub, #case { color: #57606a; margin-top: 2px; }
#banner { margin-top: 6px; padding: 5px 10px; border-radius: 4px; background: #ffebe9; color: #82071e;
  border: 1px solid #ff8182; font-weight: 600; }
#pathline { margin-top: 4px; color: #8a4b00; }
main { flex: 1; display: flex; min-height: 0; }
#stage { position: relative; flex: 1; min-width: 0; overflow: hidden; background: #fff; cursor: grab; }
#stage.dragging { cursor: grabbing; }
canvas { display: block; width: 100%; height: 100%; }
#tools { position: absolute; top: 8px; right: 8px; display: flex; gap: 4px; }
#tools button, #tools input { font: inherit; padding: 3px 8px; border: 1px solid #c9d1d9; border-radius: 4px;
  background: #fff; }
#tip { position: absolute; pointer-events: none; padding: 2px 6px; background: #24292f; color: #fff;
  border-radius: 3px; font: 12px ui-monospace, Menlo, Consolas, monospace; white-space: nowrap; }
#legend { position: absolute; left: 8px; bottom: 8px; max-width: 60%; padding: 6px 8px;
  background: rgba(255,255,255,.92); border: 1px solid #d8dee4; border-radius: 4px; display: flex;
  flex-wrap: wrap; gap: 4px 12px; font-size: 12px; }
.key { display: inline-flex; align-items: center; gap: 5px; white-space: nowrap; }
.sw { width: 11px; height: 11px; display: inline-block; }
.sw.circle { border-radius: 50%; }
.sw.diamond { transform: rotate(45deg) scale(.8); }
.sw.ring { background: transparent !important; border-radius: 50%; border: 3px solid; }
.sw.hollow { background: #fff !important; border-radius: 50%; border: 2px solid #3182bd; }
aside { width: 380px; border-left: 1px solid #d8dee4; overflow: auto; padding: 10px 14px; background: #fcfcfd; }
aside h2 { font-size: 14px; margin: 0 0 6px; word-break: break-all; }
aside h3 { font-size: 12px; margin: 12px 0 4px; text-transform: uppercase; color: #57606a; letter-spacing: .03em; }
aside table { border-collapse: collapse; width: 100%; }
aside td { padding: 2px 4px; vertical-align: top; border-bottom: 1px solid #eef1f4; word-break: break-word; }
aside td:first-child { color: #57606a; width: 38%; }
aside pre { margin: 0; padding: 6px; background: #f3f5f7; border-radius: 4px; white-space: pre-wrap;
  word-break: break-word; max-height: 320px; overflow: auto; font: 12px/1.35 ui-monospace, Menlo, Consolas, monospace; }
.links button { display: block; width: 100%; text-align: left; margin: 1px 0; padding: 2px 6px; border: 0;
  background: none; color: #0969da; cursor: pointer; font: 12px ui-monospace, Menlo, Consolas, monospace; }
.links button:hover { background: #ddf4ff; }
.links span { display: block; padding: 2px 6px; color: #8c959f; font: 12px ui-monospace, Menlo, Consolas, monospace; }
.hint { color: #57606a; }
.err { color: #cf222e; }
</style>
</head>
<body>
<header>
  <div id="title"></div>
  <div id="sub"></div>
  <div id="case"></div>
  <div id="banner" hidden></div>
  <div id="pathline" hidden></div>
</header>
<main>
  <div id="stage">
    <canvas id="canvas"></canvas>
    <div id="tools">
      <input id="find" placeholder="find node id…" size="22">
      <button id="fit" type="button" title="Show the whole graph">Fit</button>
      <button id="gopath" type="button" title="Show the evidence path and blamed op">Path</button>
    </div>
    <div id="legend"></div>
    <div id="tip" hidden></div>
  </div>
  <aside id="panel"><p class="hint">Click a node to see its value, inputs and outputs, and who read or wrote it.
    Wheel zooms the time axis (shift + wheel the lanes), drag pans, hover shows a node's label.</p></aside>
</main>
<script type="application/json" id="graph-data">@@DATA@@</script>
<script>
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("graph-data").textContent);
  var M = D.meta, nodes = D.nodes, lanes = D.lanes, edges = D.edges;
  var L = M.layout, GUTTER = 150, TOP = 44, CW = L.char_width;
  var stage = document.getElementById("stage"), canvas = document.getElementById("canvas");
  var ctx = canvas.getContext("2d"), panel = document.getElementById("panel"), tip = document.getElementById("tip");
  var byId = new Map(), adj = nodes.map(function () { return []; }), next = nodes.map(function () { return -1; });
  nodes.forEach(function (n, i) { n.i = i; byId.set(n.id, n); });
  edges.forEach(function (e) { adj[e[0]].push(e); adj[e[1]].push(e); });
  nodes.slice().sort(function (a, b) { return a.lane - b.lane || a.px - b.px; }).forEach(function (n, k, all) {
    if (k + 1 < all.length && all[k + 1].lane === n.lane) next[n.i] = all[k + 1].i;
  });
  var pathNodes = (M.path || []).map(function (id) { return byId.get(id); }).filter(Boolean);
  var linked = new Set();
  edges.forEach(function (e) { linked.add(e[0] + ">" + e[1]); });
  var view = { zx: 1, zy: 1, tx: GUTTER, ty: TOP }, W = 0, H = 0, selected = null, hover = null;

  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  function sx(n) { return n.px * view.zx + view.tx; }
  function sy(n) { return n.py * view.zy + view.ty; }
  function radius(n) {
    return Math.max(1.2, Math.min(n.r, L.column * view.zx / 2 - 1, L.lane_height * view.zy / 4));
  }
  function bottom() { return (document.getElementById("legend").offsetHeight || 0) + 16; }
  function shown(n) {
    if (view.zy < 0.8) return "";
    var k = next[n.i], end = k >= 0 ? sx(nodes[k]) - radius(nodes[k]) : (L.width - L.margin) * view.zx + view.tx;
    var fits = Math.floor((end - sx(n) - radius(n) - 2 * L.gap) / CW);
    if (fits >= n.label.length) return n.label;
    return fits >= 4 ? n.label.slice(0, fits - 1) + "\u2026" : "";
  }

  function header() {
    document.getElementById("title").textContent = M.title;
    var bits = [M.pipeline && "pipeline " + M.pipeline, M.conversation && "conversation " + M.conversation,
      M.lm && "LM " + M.lm + (M.simulated ? " (simulated)" : ""), M.note];
    document.getElementById("sub").textContent = bits.filter(Boolean).join(" · ");
    if (M.case) {
      var c = M.case, parts = ["Q: " + (c.question || c.key)];
      if (c.gold !== undefined && c.gold !== null) parts.push("gold: " + c.gold);
      parts.push("answer: " + (typeof c.answer === "string" ? c.answer : JSON.stringify(c.answer)));
      if (c.evidence && c.evidence.length) parts.push("evidence: " + c.evidence.join(", "));
      document.getElementById("case").textContent = parts.join("  ·  ");
    }
    if (M.blamed) {
      var b = byId.get(M.blamed), banner = document.getElementById("banner");
      banner.hidden = false;
      banner.textContent = "Blamed operation: " + M.blamed +
        (b && b.info && b.info.operation ? " (" + b.info.operation + ")" : "");
    }
    if (pathNodes.length) {
      var pl = document.getElementById("pathline");
      pl.hidden = false;
      pl.textContent = "Evidence path (" + pathNodes.length + "): " + M.path.join(" → ");
    }
  }

  function legend() {
    var box = document.getElementById("legend");
    lanes.forEach(function (lane, i) {
      var shape = "circle";
      for (var k = 0; k < nodes.length; k++) if (nodes[k].lane === i) { shape = nodes[k].shape; break; }
      var key = el("span", null, "key"), sw = el("span", null, "sw " + shape);
      sw.style.background = lane.color;
      key.appendChild(sw); key.appendChild(el("span", lane.label));
      box.appendChild(key);
    });
    [["ring", "#ff8c00", "evidence path"], ["ring", "#d62728", "blamed op"], ["hollow", "", "deleted unit"]]
      .forEach(function (k) {
        var key = el("span", null, "key"), sw = el("span", null, "sw " + k[0]);
        if (k[1]) sw.style.borderColor = k[1];
        key.appendChild(sw); key.appendChild(el("span", k[2]));
        box.appendChild(key);
      });
  }

  function resize() {
    var dpr = window.devicePixelRatio || 1;
    W = stage.clientWidth; H = stage.clientHeight;
    canvas.width = Math.max(1, Math.round(W * dpr)); canvas.height = Math.max(1, Math.round(H * dpr));
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    draw();
  }

  function shapePath(n, x, y, r) {
    ctx.beginPath();
    if (n.shape === "square") ctx.rect(x - r, y - r, 2 * r, 2 * r);
    else if (n.shape === "diamond") {
      ctx.moveTo(x, y - r); ctx.lineTo(x + r, y); ctx.lineTo(x, y + r); ctx.lineTo(x - r, y);
      ctx.closePath();
    } else ctx.arc(x, y, r, 0, 2 * Math.PI);
  }

  function visible(x1, x2) { return Math.max(x1, x2) >= GUTTER && Math.min(x1, x2) <= W; }

  function tagged(n) { return (n.path !== undefined ? (n.path + 1) + ". " : "") + n.label; }

  function text(str, x, y, strong) {
    if (strong) {
      ctx.fillStyle = "rgba(255,255,255,0.9)";
      ctx.fillRect(x - 2, y - L.label_height, str.length * CW + 4, L.label_height);
    }
    ctx.fillStyle = strong === "blamed" ? "#a40e26" : "#24292f";
    ctx.fillText(str, x, y);
  }

  function draw() {
    ctx.clearRect(0, 0, W, H);
    lanes.forEach(function (lane, i) {
      ctx.fillStyle = i % 2 ? "#f7f9fb" : "#ffffff";
      ctx.fillRect(0, i * L.lane_height * view.zy + view.ty, W, L.lane_height * view.zy);
    });
    [[0, "rgba(120,132,145,0.35)"], [1, "rgba(49,130,189,0.35)"]].forEach(function (style) {
      ctx.beginPath();
      edges.forEach(function (e) {
        if (e[2] !== style[0]) return;
        var a = nodes[e[0]], b = nodes[e[1]], x1 = sx(a), x2 = sx(b);
        if (!visible(x1, x2)) return;
        ctx.moveTo(x1, sy(a)); ctx.lineTo(x2, sy(b));
      });
      ctx.strokeStyle = style[1]; ctx.lineWidth = 1; ctx.stroke();
    });
    if (selected) {
      ctx.beginPath();
      adj[selected.i].forEach(function (e) {
        ctx.moveTo(sx(nodes[e[0]]), sy(nodes[e[0]])); ctx.lineTo(sx(nodes[e[1]]), sy(nodes[e[1]]));
      });
      ctx.strokeStyle = "#24292f"; ctx.lineWidth = 1.8; ctx.stroke();
    }
    for (var k = 1; k < pathNodes.length; k++) {
      var a = pathNodes[k - 1], b = pathNodes[k];
      var direct = linked.has(a.i + ">" + b.i) || linked.has(b.i + ">" + a.i);
      ctx.beginPath(); ctx.setLineDash(direct ? [] : [7, 5]);
      ctx.moveTo(sx(a), sy(a)); ctx.lineTo(sx(b), sy(b));
      ctx.strokeStyle = "#ff8c00"; ctx.lineWidth = 4; ctx.stroke();
    }
    ctx.setLineDash([]);
    ctx.font = "11px ui-monospace, Menlo, Consolas, monospace"; ctx.textBaseline = "bottom";
    var marked = nodes.filter(function (n) { return n.path !== undefined || n.blamed || n === selected; });
    var boxes = marked.map(function (n) {  // whole labels of the marked nodes; other labels keep clear of them
      return [sx(n) + radius(n), sy(n) - radius(n) - L.gap - L.label_height, tagged(n).length * CW + 2 * L.gap,
              L.label_height];
    });
    function clear(x, y, w) {
      return boxes.every(function (b) {
        return x + w < b[0] || b[0] + b[2] < x || y < b[1] || b[1] + b[3] < y - L.label_height;
      });
    }
    nodes.forEach(function (n) {
      var x = sx(n), y = sy(n), r = radius(n);
      if (x < GUTTER - 20 || x > W + 20 || y < -20 || y > H + 20) return;
      var color = lanes[n.lane].color;
      shapePath(n, x, y, r);
      ctx.fillStyle = n.deleted ? "#ffffff" : color; ctx.fill();
      ctx.lineWidth = n.deleted ? 2 : 1; ctx.strokeStyle = n.deleted ? color : "#ffffff"; ctx.stroke();
      if (n.path !== undefined) {
        shapePath(n, x, y, r + 3); ctx.lineWidth = 3; ctx.strokeStyle = "#ff8c00"; ctx.stroke();
      }
      if (n.blamed) {
        shapePath(n, x, y, r + 7); ctx.lineWidth = 3.5; ctx.strokeStyle = "#d62728"; ctx.stroke();
      }
      if (n === selected) {
        shapePath(n, x, y, r + 11); ctx.lineWidth = 1.5; ctx.strokeStyle = "#24292f"; ctx.stroke();
      }
      if (marked.indexOf(n) >= 0) return;
      var str = shown(n), lx = x + r + L.gap, ly = y - r - L.gap;
      if (str && clear(lx, ly, str.length * CW)) text(str, lx, ly, false);
    });
    marked.forEach(function (n) {  // labels of the path, the blamed op and the selection: whole, on top
      text(tagged(n), sx(n) + radius(n) + L.gap, sy(n) - radius(n) - L.gap, n.blamed ? "blamed" : true);
    });
    ctx.fillStyle = "rgba(246,248,250,0.94)"; ctx.fillRect(0, 0, GUTTER - 14, H);
    ctx.textBaseline = "middle"; ctx.font = "12px system-ui, sans-serif";
    lanes.forEach(function (lane, i) {
      var y = (i + 0.5) * L.lane_height * view.zy + view.ty;
      if (y < -10 || y > H + 10) return;
      ctx.fillStyle = lane.color; ctx.fillRect(6, y - 5, 10, 10);
      ctx.fillStyle = "#24292f"; ctx.fillText(lane.label, 22, y);
    });
  }

  function fitTo(list) {
    if (!list.length) return;
    var x0 = Infinity, x1 = -Infinity;
    list.forEach(function (n) { x0 = Math.min(x0, n.px - n.r); x1 = Math.max(x1, n.px + n.r); });
    if (list.length === nodes.length) { x0 = 0; x1 = L.width; }
    var aw = Math.max(50, W - GUTTER - 16), ah = Math.max(50, H - TOP - bottom());
    view.zx = Math.min(aw / Math.max(L.column, x1 - x0), 2);
    view.zy = Math.min(1.4, Math.max(0.5, ah / L.height));
    view.tx = GUTTER + (aw - (x1 - x0) * view.zx) / 2 - x0 * view.zx;
    view.ty = TOP + Math.max(0, (ah - L.height * view.zy) / 2);
    draw();
  }

  function centerOn(n) {
    view.zx = Math.max(view.zx, 1); view.zy = Math.max(view.zy, 1);
    view.tx = (W + GUTTER) / 2 - n.px * view.zx; view.ty = H / 2 - n.py * view.zy;
  }

  // objects as indented JSON whose strings keep their line breaks (no literal \\n)
  function fmt(v) { return typeof v === "string" ? v : JSON.stringify(v, null, 2).replace(/\\n/g, "\n"); }

  // a field for people: wall-clock times (``*_at``, epoch seconds) as UTC dates, durations in seconds
  function display(k, v) {
    if (typeof v === "number" && /_at$/.test(k)) {
      return new Date(v * 1000).toISOString().replace("T", " ").slice(0, 23) + " UTC";
    }
    if (typeof v === "number" && k === "seconds") return v.toFixed(3) + " s";
    return fmt(v);
  }

  var ORDER = ["operation", "kind", "name", "version", "op_kind", "predictor", "prompt_version", "lm_calls",
    "input_tokens", "output_tokens", "seconds", "created", "start", "end", "action", "deleted", "session_date",
    "speaker", "sources", "derived_from", "hash", "overridden", "members", "first", "last", "actions"];
  var BLOCKS = ["error", "errors", "value", "inputs", "output", "sample"];
  var SKIP = { type: 1 };

  function links(title, ref) {
    if (!ref || !ref.ids.length) return;
    panel.appendChild(el("h3", title + " (" + (ref.ids.length + ref.more) + ")"));
    var box = el("div", null, "links");
    ref.ids.forEach(function (id) {
      var target = byId.get(id);
      if (target) {
        var b = el("button", id);
        b.type = "button";
        b.addEventListener("click", function () { select(target, true); });
        box.appendChild(b);
      } else box.appendChild(el("span", id + "  (not shown)"));
    });
    if (ref.more) box.appendChild(el("span", "… " + ref.more + " more"));
    panel.appendChild(box);
  }

  function select(n, center) {
    selected = n;
    window.dispatchEvent(new CustomEvent("memopt:select", { detail: n ? n.id : null }));  // a page embedding the view
    panel.textContent = "";
    if (!n) { draw(); return; }
    if (center) centerOn(n);
    var info = n.info || {};
    panel.appendChild(el("h2", n.id));
    if (n.blamed) panel.appendChild(el("p", "Blamed operation", "err"));
    if (n.path !== undefined) {
      panel.appendChild(el("p", "Evidence path step " + (n.path + 1) + " of " + pathNodes.length));
    }
    var table = el("table");
    function row(k, v) {
      var tr = el("tr"); tr.appendChild(el("td", k)); tr.appendChild(el("td", display(k, v))); table.appendChild(tr);
    }
    row("lane", lanes[n.lane].label);
    if (n.count) row("nodes in group", n.count);
    var keys = ORDER.filter(function (k) { return k in info; });
    Object.keys(info).forEach(function (k) {
      if (keys.indexOf(k) < 0 && BLOCKS.indexOf(k) < 0 && !SKIP[k]) keys.push(k);
    });
    keys.forEach(function (k) {
      var v = info[k];
      if (v === null || v === undefined || v === "") return;
      if (k === "input_tokens" || k === "output_tokens") return;
      row(k, v);
    });
    if ("input_tokens" in info) row("tokens (in / out)", info.input_tokens + " / " + info.output_tokens);
    panel.appendChild(table);
    BLOCKS.forEach(function (k) {
      var v = info[k];
      if (v === null || v === undefined || v === 0) return;
      panel.appendChild(el("h3", k));
      panel.appendChild(el("pre", fmt(v), k.indexOf("error") === 0 ? "err" : ""));
    });
    var isOp = info.type === "op" || n.shape !== "circle";
    links(isOp ? "Reads" : "Written by", n.preds);
    links(isOp ? "Writes" : "Read by", n.succs);
    draw();
  }

  function hit(px, py) {
    var best = null, bestD = Infinity;
    nodes.forEach(function (n) {
      var dx = sx(n) - px, dy = sy(n) - py, d = Math.sqrt(dx * dx + dy * dy);
      if (d <= radius(n) + 4 && d < bestD) { best = n; bestD = d; }
    });
    return best;
  }

  function showTip(n, px, py) {
    if (hover === n) return;
    hover = n;
    tip.hidden = !n;
    if (!n) return;
    tip.textContent = n.label === n.id ? n.id : n.label + "  \u00b7  " + n.id;
    tip.style.left = Math.min(px + 12, Math.max(0, W - 320)) + "px";
    tip.style.top = Math.max(0, py - 28) + "px";
  }

  var drag = null;
  stage.addEventListener("mousedown", function (ev) {
    if (ev.target !== canvas) return;
    drag = { x: ev.clientX, y: ev.clientY, tx: view.tx, ty: view.ty, moved: false };
  });
  window.addEventListener("mousemove", function (ev) {
    var rect = canvas.getBoundingClientRect();
    if (!drag) { showTip(hit(ev.clientX - rect.left, ev.clientY - rect.top), ev.clientX - rect.left,
                         ev.clientY - rect.top); return; }
    var dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
    if (Math.abs(dx) + Math.abs(dy) > 3) { drag.moved = true; stage.classList.add("dragging"); showTip(null); }
    view.tx = drag.tx + dx; view.ty = drag.ty + dy; draw();
  });
  window.addEventListener("mouseup", function (ev) {
    if (!drag) return;
    var rect = canvas.getBoundingClientRect();
    if (!drag.moved) select(hit(ev.clientX - rect.left, ev.clientY - rect.top), false);
    drag = null; stage.classList.remove("dragging");
  });
  canvas.addEventListener("wheel", function (ev) {
    ev.preventDefault();
    var rect = canvas.getBoundingClientRect(), px = ev.clientX - rect.left, py = ev.clientY - rect.top;
    var f = Math.exp(-(ev.deltaY || ev.deltaX || 0) * 0.0015);
    if (ev.shiftKey) {
      var zy = Math.min(3, Math.max(0.3, view.zy * f));
      view.ty = py - (py - view.ty) * zy / view.zy; view.zy = zy;
    } else {
      var zx = Math.min(8, Math.max(0.005, view.zx * f));
      view.tx = px - (px - view.tx) * zx / view.zx; view.zx = zx;
    }
    showTip(null);
    draw();
  }, { passive: false });
  document.getElementById("fit").addEventListener("click", function () { fitTo(nodes); });
  document.getElementById("gopath").addEventListener("click", function () {
    var focus = pathNodes.concat(M.blamed && byId.get(M.blamed) ? [byId.get(M.blamed)] : []);
    fitTo(focus.length ? focus : nodes);
  });
  document.getElementById("find").addEventListener("keydown", function (ev) {
    if (ev.key !== "Enter") return;
    var q = ev.target.value.trim();
    if (!q) return;
    var n = byId.get(q) || nodes.find(function (m) { return m.id.indexOf(q) >= 0; });
    if (n) { select(n, true); ev.target.style.borderColor = ""; } else ev.target.style.borderColor = "#cf222e";
  });
  window.addEventListener("resize", resize);

  header();
  legend();
  resize();
  fitTo(nodes);  // the whole case first; "Evidence path" zooms onto the path
  if (M.case && byId.get(M.case.answer_node)) select(byId.get(M.case.answer_node), false);
  var link = typeof location !== "undefined" && /^#node=(.+)$/.exec(location.hash || "");
  if (link && byId.get(decodeURIComponent(link[1]))) select(byId.get(decodeURIComponent(link[1])), true);
})();
</script>
</body>
</html>
"""

"""The labelling page: one HTML document with inline CSS and vanilla JS, served by `memopt.label.app`.

Keys (also listed on the page, ``?``): ``→`` / ``j`` next case, ``←`` / ``k`` previous, ``u`` next case not
reviewed yet; ``a`` accept the attribution; ``c`` correct it — pick the op (click it in the graph, or ``↑`` /
``↓`` in the list) and the type (``1``–``5``), ``Enter`` saves; ``f`` flag the case — ``1`` wrong expected answer,
``2`` wrong judge verdict, ``3`` not a memory error, ``n`` writes a note, ``Enter`` saves; ``x`` clears a label;
``Esc`` cancels. Every decision is saved at once and the page moves to the next case. The graph is the viewer of
`memopt show`, in a frame; selecting an op there picks it while correcting (its ``memopt:select`` event), and
keys pressed in the frame work as on the page. Data reaches the DOM as text nodes only.
"""

from __future__ import annotations

from memopt.attribution.labels import FLAG_TEXT, FLAGS
from memopt.taxonomy import ERROR_TYPES

__all__ = ["page_html"]

_PAGE = r"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>memopt label · {{ name }}</title>
<style>
*{box-sizing:border-box} html,body{margin:0;height:100%;font:14px/1.45 system-ui,sans-serif;color:#1f2328}
body{display:flex;flex-direction:column}
header{padding:8px 16px;border-bottom:1px solid #d0d7de;background:#f6f8fa;display:flex;gap:16px;align-items:baseline}
header b{font-size:16px} #progress{font-weight:600} .muted{color:#59636e}
#errors{background:#ffebe9;color:#82071e;border-bottom:1px solid #ff8182;padding:6px 16px;font-weight:600}
main{flex:1;display:flex;min-height:0}
#list{width:230px;overflow:auto;border-right:1px solid #d0d7de;font:12px ui-monospace,monospace}
#list div{padding:3px 8px;cursor:pointer;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
#list div.on{background:#ddf4ff} #list .d{display:inline-block;width:14px;font-weight:700}
#case{width:470px;overflow:auto;padding:12px 16px;border-right:1px solid #d0d7de}
#case h2{font-size:16px;margin:0 0 6px;word-break:break-all}
dl{display:grid;grid-template-columns:92px 1fr;gap:4px 10px;margin:8px 0} dt{color:#59636e} dd{margin:0}
.box{border:1px solid #d0d7de;border-radius:6px;padding:8px 10px;margin:10px 0}
#status{font-weight:600} .accepted{color:#1a7f37} .corrected{color:#9a6700} .flagged{color:#8250df}
#actions button,.pick button{font:inherit;margin:2px 4px 2px 0;padding:3px 9px;border:1px solid #c9d1d9;
border-radius:5px;background:#fff;cursor:pointer} kbd{font:11px ui-monospace,monospace;background:#eef1f4;
border:1px solid #d0d7de;border-radius:3px;padding:0 4px}
.pick button.on{background:#0969da;color:#fff;border-color:#0969da}
#ops{width:100%;font:12px ui-monospace,monospace} #note{width:100%;font:inherit;padding:4px}
#message{min-height:20px;margin-top:8px} .err{color:#cf222e} .ok{color:#1a7f37}
#graph{flex:1;min-width:0} #graph iframe{border:0;width:100%;height:100%}
#help{font-size:12px}
</style></head>
<body>
<header><b>memopt label</b><span class="muted">{{ name }}</span><span id="progress"></span>
<span class="muted">keys: <kbd>→</kbd> next <kbd>a</kbd> accept <kbd>c</kbd> correct <kbd>f</kbd> flag
<kbd>?</kbd> help</span>
</header>
<div id="errors" hidden></div>
<main>
<nav id="list"></nav>
<section id="case">
<h2 id="case-id"></h2><div id="status"></div>
<dl><dt>question</dt><dd id="question"></dd><dt>expected</dt><dd id="expected"></dd>
<dt>answered</dt><dd id="prediction"></dd><dt>date</dt><dd id="date"></dd><dt>evidence</dt><dd id="evidence"></dd></dl>
<div class="box"><div><b>Blamed:</b> <code id="blamed"></code> · <span id="etype"></span></div>
<div id="reason" class="muted"></div></div>
<div id="actions">
<button data-key="a"><kbd>a</kbd> accept</button><button data-key="c"><kbd>c</kbd> correct</button>
<button data-key="f"><kbd>f</kbd> flag</button><button data-key="x"><kbd>x</kbd> clear</button>
<button data-key="k"><kbd>←</kbd> previous</button><button data-key="j"><kbd>→</kbd> next</button>
<button data-key="u"><kbd>u</kbd> next to review</button>
</div>
<div id="correct" class="box" hidden><div><b>Correct:</b> pick the op (click it in the graph, or <kbd>↑</kbd>
<kbd>↓</kbd>), then the type; <kbd>Enter</kbd> saves, <kbd>Esc</kbd> cancels.</div>
<select id="ops" size="7"></select><div class="pick" id="types"></div></div>
<div id="flag" class="box" hidden><div><b>Flag:</b> not a memory failure to blame; <kbd>Enter</kbd> saves.</div>
<div class="pick" id="flags"></div><input id="note" placeholder="note (n)" maxlength="2000"></div>
<div id="message"></div>
<div id="help" class="muted" hidden><p><kbd>→</kbd>/<kbd>j</kbd> next, <kbd>←</kbd>/<kbd>k</kbd> previous,
<kbd>u</kbd> next not reviewed; <kbd>a</kbd> accept; <kbd>c</kbd> correct (<kbd>↑</kbd>/<kbd>↓</kbd> op,
<kbd>1</kbd>–<kbd>5</kbd> type, <kbd>Enter</kbd>); <kbd>f</kbd> flag (<kbd>1</kbd>–<kbd>3</kbd>, <kbd>n</kbd> note,
<kbd>Enter</kbd>); <kbd>x</kbd> clear; <kbd>Esc</kbd> cancel.</p></div>
</section>
<section id="graph"><iframe id="view" title="evolution graph of the case"></iframe></section>
</main>
<script type="application/json" id="config">{{ config|tojson }}</script>
<script>
(function () {
  "use strict";
  var C = JSON.parse(document.getElementById("config").textContent);
  var $ = function (id) { return document.getElementById(id); };
  var cases = [], current = -1, detail = null, mode = null, pickedType = null, pickedFlags = new Set();
  var readonly = false;

  function text(id, value) { $(id).textContent = value == null ? "" : String(value); }
  function say(message, cls) { var m = $("message"); m.textContent = message || ""; m.className = cls || ""; }

  function api(path, body) {
    var init = body === undefined ? {} : {method: "POST", headers: {"Content-Type": "application/json",
      "X-Memopt-Token": C.token}, body: JSON.stringify(body)};
    return fetch(path, init).then(function (r) {
      return r.json().then(function (data) { if (!r.ok) throw new Error(data.error || r.statusText); return data; });
    });
  }

  function flagText(f) { return C.flag_text[f]; }
  function mark(decision) { return {accepted: "✓", corrected: "✎", flagged: "⚑"}[decision] || "·"; }

  function drawList() {
    var list = $("list"); list.textContent = "";
    cases.forEach(function (c) {
      var row = document.createElement("div"), d = document.createElement("span");
      d.className = "d " + (c.decision || ""); d.textContent = mark(c.decision);
      row.appendChild(d); row.appendChild(document.createTextNode(" " + c.case_id));
      row.title = (c.error_type || "") + " · " + (c.operation || "");
      if (c.index === current) row.className = "on";
      row.addEventListener("click", function () { show(c.index); });
      list.appendChild(row);
    });
  }

  function refresh() {
    return api("/api/cases").then(function (data) {
      cases = data.cases; readonly = data.readonly;
      text("progress", data.progress.reviewed + " / " + data.progress.total + " reviewed");
      var errors = $("errors"); errors.textContent = ""; errors.hidden = !data.errors.length;
      data.errors.forEach(function (e) {
        var p = document.createElement("div"); p.textContent = e; errors.appendChild(p);
      });
      drawList();
    });
  }

  function status(label) {
    var s = $("status"); s.className = label ? label.decision : "";
    if (!label) { s.textContent = "not reviewed"; return; }
    var what = label.decision;
    if (label.decision === "corrected") what += " → " + label.final_error_type + " at " + label.op_node;
    if (label.decision === "flagged") what += ": " + label.flags.map(flagText).join(", ");
    if (label.note) what += " — " + label.note;
    s.textContent = what;
  }

  function show(index) {
    if (index < 0 || index >= cases.length) return;
    current = index; setMode(null); say("");
    return api("/api/case/" + index).then(function (d) {
      detail = d;
      text("case-id", d.case_id); text("question", d.question); text("expected", d.expected);
      text("prediction", d.prediction); text("date", d.date); text("evidence", (d.evidence || []).join(", "));
      text("blamed", d.attributed.op_id || ""); text("etype", d.attributed.error_type || "");
      text("reason", d.error ? "" : d.reason);
      if (d.error) say("This case cannot be labelled: " + d.error, "err");
      status(d.label);
      var ops = $("ops"); ops.textContent = "";
      d.ops.forEach(function (o) {
        var opt = document.createElement("option"); opt.value = o.id; opt.textContent = o.id; ops.appendChild(opt);
      });
      $("view").src = d.error ? "about:blank" : "/view/" + index;
      drawList();
    }).catch(function (e) { say(e.message, "err"); });
  }

  function pick(container, values, labels, chosen) {
    var box = $(container); box.textContent = "";
    values.forEach(function (v, i) {
      var b = document.createElement("button"); b.type = "button"; b.dataset.value = v;
      b.textContent = (i + 1) + " " + labels[i]; if (chosen(v)) b.className = "on"; box.appendChild(b);
    });
  }

  function drawPicks() {
    pick("types", C.types, C.types, function (t) { return t === pickedType; });
    pick("flags", C.flags, C.flags.map(flagText), function (f) { return pickedFlags.has(f); });
  }

  function setMode(next) {
    mode = next; $("correct").hidden = mode !== "correct"; $("flag").hidden = mode !== "flag";
    if (mode === "correct") {
      var label = detail && detail.label, blamed = label && label.op_node || detail.attributed.op_id;
      $("ops").value = blamed; if ($("ops").selectedIndex < 0) $("ops").selectedIndex = $("ops").options.length - 1;
      pickedType = label && label.final_error_type || detail.attributed.error_type;
    }
    if (mode === "flag") {
      var had = detail && detail.label;
      pickedFlags = new Set(had ? had.flags : []); $("note").value = had ? had.note : "";
    }
    drawPicks();
  }

  function save(body) {
    if (readonly) { say("Labels are not saved: the labels file is damaged (see above).", "err"); return; }
    return api("/api/label/" + current, body).then(function (r) {
      say(r.label ? "saved: " + r.label.decision : "label cleared", "ok");
      return refresh().then(function () { show(r.label ? Math.min(current + 1, cases.length - 1) : current); });
    }).catch(function (e) { say(e.message, "err"); });
  }

  function move(step) { show(Math.max(0, Math.min(cases.length - 1, current + step))); }
  function nextToReview() {
    for (var k = 1; k <= cases.length; k++) {
      var i = (current + k) % cases.length; if (!cases[i].decision) return show(i);
    }
    say("every case is reviewed", "ok");
  }

  function onKey(ev) {
    var k = ev.key, inNote = ev.target && ev.target.id === "note";
    if (inNote && k !== "Enter" && k !== "Escape") return;
    if (ev.target && ev.target.tagName === "INPUT" && !inNote) return;  // the viewer's search box
    var done = true;
    if (k === "Escape") { if (inNote) ev.target.blur(); setMode(null); }
    else if (mode === "correct" && (k === "ArrowDown" || k === "ArrowUp")) {
      var ops = $("ops"), step = k === "ArrowDown" ? 1 : -1;
      ops.selectedIndex = Math.max(0, Math.min(ops.options.length - 1, ops.selectedIndex + step));
    }
    else if (mode === "correct" && k >= "1" && k <= String(C.types.length)) {
      pickedType = C.types[+k - 1]; drawPicks();
    }
    else if (mode === "flag" && k >= "1" && k <= String(C.flags.length)) {
      var f = C.flags[+k - 1]; if (pickedFlags.has(f)) pickedFlags.delete(f); else pickedFlags.add(f); drawPicks();
    }
    else if (mode === "flag" && k === "n") { $("note").focus(); }
    else if (k === "Enter" && mode === "correct") {
      save({decision: "corrected", op_id: $("ops").value, error_type: pickedType});
    }
    else if (k === "Enter" && mode === "flag") {
      save({decision: "flagged", flags: Array.from(pickedFlags), note: $("note").value});
    }
    else if (k === "ArrowRight" || k === "j") move(1);
    else if (k === "ArrowLeft" || k === "k") move(-1);
    else if (k === "u") nextToReview();
    else if (k === "a") save({decision: "accepted"});
    else if (k === "c" && detail && !detail.error) setMode("correct");
    else if (k === "f" && detail && !detail.error) setMode("flag");
    else if (k === "x") save({decision: null});
    else if (k === "?") $("help").hidden = !$("help").hidden;
    else done = false;
    if (done) ev.preventDefault();
  }

  document.addEventListener("keydown", onKey);
  $("actions").addEventListener("click", function (ev) {
    var b = ev.target.closest("button");
    if (b) onKey({key: b.dataset.key, target: null, preventDefault: function () {}});
  });
  $("types").addEventListener("click", function (ev) {
    var b = ev.target.closest("button"); if (b) { pickedType = b.dataset.value; drawPicks(); }
  });
  $("flags").addEventListener("click", function (ev) {
    var b = ev.target.closest("button"); if (!b) return; var f = b.dataset.value;
    if (pickedFlags.has(f)) pickedFlags.delete(f); else pickedFlags.add(f); drawPicks();
  });
  $("view").addEventListener("load", function () {
    var w = $("view").contentWindow; if (!w || w.location.href === "about:blank") return;
    w.addEventListener("keydown", onKey);
    w.addEventListener("memopt:select", function (ev) {
      if (mode !== "correct") return;
      var ops = $("ops"), before = ops.value; ops.value = ev.detail; if (ops.selectedIndex < 0) ops.value = before;
    });
  });
  refresh().then(function () {
    var first = cases.findIndex(function (c) { return !c.decision; });
    show(first < 0 ? 0 : first);
  }).catch(function (e) { say(e.message, "err"); });
})();
</script>
</body></html>
"""


def page_html(name: str, token: str) -> str:
    """The page (a Jinja2 template, autoescaped), for a directory called ``name``, carrying the token its decisions
    send."""
    import jinja2

    config = {"token": token, "types": list(ERROR_TYPES), "flags": list(FLAGS), "flag_text": FLAG_TEXT}
    return jinja2.Environment(autoescape=True).from_string(_PAGE).render(name=name, config=config)

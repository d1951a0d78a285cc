"""The graph viewer: offline HTML with embedded, escaped data; case, full and summary modes; PNG; `memopt show`."""

from __future__ import annotations

import copy
import json
import re
import shutil
import subprocess
import sys

import dspy
import networkx as nx
import pytest

from memopt.core.errors import ConfigError
from memopt.data.synth import SynthSpec, synthetic_conversations
from memopt.lm.build import make_lm
from memopt.systems import make_system
from memopt.trace import answer_of, save_graph, trace
from memopt.trace.render import (
    CASE_LIMIT,
    LAYOUT,
    SUMMARY_THRESHOLD,
    graph_view,
    render_html,
    render_png,
    shown_label,
)

DATA_BLOCK = re.compile(r'<script type="application/json" id="graph-data">(.*?)</script>', re.S)
INJECTION = '</script><script>alert("x")</script><!-- & \u2028 </SCRIPT>'


def _traced(pipeline: str, sessions: int) -> nx.DiGraph:
    conv = synthetic_conversations(SynthSpec(conversations=1, sessions=sessions, seed=2))[0]
    system = make_system(pipeline)
    with dspy.context(lm=make_lm("sim")), trace(system) as tracer:
        system.ingest(conv)
        for case in conv.cases:
            system.answer_case(case)
        tracer.record_cases(conv.cases)
    return tracer.graph


@pytest.fixture(scope="module")
def G() -> nx.DiGraph:
    return _traced("mem0", 6)


@pytest.fixture(scope="module")
def big() -> nx.DiGraph:
    return _traced("mem0", 200)


def _data(page: str) -> dict:
    blocks = DATA_BLOCK.findall(page)
    assert len(blocks) == 1
    return json.loads(blocks[0])


def _evidence_path(G: nx.DiGraph, key: str) -> list[str]:
    answer = answer_of(G, key)
    turn = min((n for n in nx.ancestors(G, answer) if G.nodes[n].get("kind") == "turn"),
               key=lambda n: G.nodes[n]["created"])
    return nx.shortest_path(G, turn, answer)


def test_page_is_offline_and_embeds_every_node(G):
    page = render_html(G)
    assert len(G) <= SUMMARY_THRESHOLD
    assert not re.search(r"https?://", page)
    assert not re.search(r"<script[^>]*\ssrc=|<link\b|@import|url\(", page, re.I)
    data = _data(page)
    assert data["meta"]["mode"] == "full"
    assert {n["id"] for n in data["nodes"]} == set(G)
    by_index = [n["id"] for n in data["nodes"]]
    assert {(by_index[s], by_index[t]) for s, t, _, _ in data["edges"]} == set(G.edges)
    ops = [n for n in data["nodes"] if n["id"] in G and G.nodes[n["id"]]["type"] == "op"]
    assert ops and all(n["info"]["operation"] == G.nodes[n["id"]]["operation"] for n in ops)
    lanes = {data["lanes"][n["lane"]]["name"] for n in data["nodes"]}
    assert {"turn", "fact", "memory", "question", "context", "answer", "extract", "update", "retrieve"} <= lanes
    for lane in range(len(data["lanes"])):
        xs = [n["x"] for n in data["nodes"] if n["lane"] == lane]
        assert len(xs) == len(set(xs)), "nodes of one lane overlap"
    ordered = sorted(data["nodes"], key=lambda n: n["t"])
    assert [n["x"] for n in ordered] == sorted(n["x"] for n in ordered), "x is not time-ordered"


def test_evidence_path_and_blamed_op_are_marked_in_the_data(G):
    path = _evidence_path(G, "q3")
    blamed = next(n for n in path if G.nodes[n]["type"] == "op")
    page = render_html(G, case="q3", highlight=path, blamed=blamed)
    data = _data(page)
    nodes = {n["id"]: n for n in data["nodes"]}
    assert [n["id"] for n in sorted((n for n in data["nodes"] if "path" in n), key=lambda n: n["path"])] == path
    assert [nodes[n]["path"] for n in path] == list(range(len(path)))
    assert [n["id"] for n in data["nodes"] if n.get("blamed")] == [blamed]
    assert data["meta"]["blamed"] == blamed and data["meta"]["path"] == path
    index = {n["id"]: i for i, n in enumerate(data["nodes"])}
    edges = {(s, t) for s, t, _, _ in data["edges"]}
    assert all((index[a], index[b]) in edges for a, b in zip(path, path[1:], strict=False))


def test_values_cannot_break_out_of_the_script_element(G):
    H = copy.deepcopy(G)
    turn = next(n for n in H if H.nodes[n].get("kind") == "turn")
    H.nodes[turn]["value"]["text"] = INJECTION
    page = render_html(H, title="<b>memo</b></title>")
    assert page.count("<script") == page.count("</script>") == 2
    assert len(re.findall(r"</script>", page, re.I)) == 2
    assert "<b>memo</b>" not in page and "&lt;b&gt;memo&lt;/b&gt;&lt;/title&gt;" in page
    data = _data(page)
    node = next(n for n in data["nodes"] if n["id"] == turn)
    assert node["info"]["value"]["text"] == INJECTION
    assert data["meta"]["title"] == "<b>memo</b></title>"


def test_case_view_keeps_the_answer_lineage_and_nothing_of_other_cases(G):
    data = graph_view(G, case="q3")
    ids = {n["id"] for n in data["nodes"]}
    answer = answer_of(G, "q3")
    assert nx.ancestors(G, answer) | {answer} <= ids
    assert answer_of(G, "q4") not in ids and answer_of(G, "q0") not in ids
    assert not any(n.endswith((":q4", ":q4@1", ":q0", ":q0@1")) for n in ids)
    assert all(G.nodes[n]["created" if "created" in G.nodes[n] else "start"] <= G.nodes[answer]["created"]
               for n in ids)
    assert data["meta"]["mode"] == "case" and data["meta"]["shown"] == len(ids) < len(G)
    full = graph_view(G, case=f"{G.graph['conversation']}:q3")
    assert {n["id"] for n in full["nodes"]} == ids


def test_unknown_case_and_nodes_are_config_errors_naming_them(G):
    with pytest.raises(ConfigError, match=r"'q999'.*q0, q1"):
        graph_view(G, case="q999")
    with pytest.raises(ConfigError, match=r"belongs to conversation conv-77"):
        graph_view(G, case="conv-77:q1")
    with pytest.raises(ConfigError, match=r"'memory:m999@1'.*did you mean memory:m"):
        graph_view(G, highlight=["memory:m999@1"])
    with pytest.raises(ConfigError, match=r"is a variable, not an operation"):
        graph_view(G, blamed=answer_of(G, "q1"))


def test_large_graph_renders_as_a_bounded_summary(big):
    assert len(big) > 3000
    path = _evidence_path(big, "q2")
    page = render_html(big, highlight=path, blamed=path[1])
    assert len(page.encode()) < 5_000_000
    data = _data(page)
    assert data["meta"]["mode"] == "summary" and "Summary view" in data["meta"]["note"]
    assert len(data["nodes"]) < 1000
    assert sum(n.get("count", 1) for n in data["nodes"]) == len(big)
    ids = {n["id"] for n in data["nodes"]}
    assert set(path) <= ids and any(n.get("blamed") for n in data["nodes"])
    assert all(0 <= s < len(data["nodes"]) and 0 <= t < len(data["nodes"]) for s, t, _, _ in data["edges"])
    case = graph_view(big, case="q2")
    assert len(case["nodes"]) <= CASE_LIMIT and answer_of(big, "q2") in {n["id"] for n in case["nodes"]}


def _screen(view: dict, zx: float, zy: float) -> list[tuple[int, float, float, float, float, str]]:
    """Boxes (lane, x0, x1, y0, y1, what) of nodes and drawn labels at a zoom, as the viewer's script draws them:
    radius shrinks with the column (never below 1 px), a label is cut to the room before the next node of its
    lane and drawn only on lanes zoomed to 0.8 or more."""
    L = view["meta"]["layout"]

    def radius(n: dict) -> float:
        return max(1.0, min(n["r"], L["column"] * zx / 2 - 1, L["lane_height"] * zy / 4))

    boxes = []
    lanes: dict[int, list[dict]] = {}
    for n in view["nodes"]:
        lanes.setdefault(n["lane"], []).append(n)
    for members in lanes.values():
        members.sort(key=lambda n: n["px"])
        for i, n in enumerate(members):
            x, y, r = n["px"] * zx, n["py"] * zy, radius(n)
            boxes.append((n["lane"], x - r, x + r, y - r, y + r, n["id"]))
            if zy < 0.8:
                continue
            end = members[i + 1]["px"] * zx - radius(members[i + 1]) if i + 1 < len(members) else \
                (L["width"] - L["margin"]) * zx
            text = shown_label(n["label"], end - x - r - 2 * L["gap"])
            if text:
                x0, y1 = x + r + L["gap"], y - r - L["gap"]
                boxes.append((n["lane"], x0, x0 + len(text) * L["char_width"], y1 - L["label_height"], y1,
                              f"label {text!r}"))
    return boxes


@pytest.mark.parametrize("which", ["full", "case", "summary"])
def test_layout_keeps_nodes_and_labels_apart_and_inside_the_view(which, G, big):
    view = {"full": lambda: graph_view(G), "case": lambda: graph_view(big, case="q2"),
            "summary": lambda: graph_view(big)}[which]()
    assert view["meta"]["mode"] == which
    L = view["meta"]["layout"]
    labelled = 0
    for zx in (3 / L["column"], 0.3, 1.0, 2.5, 6.0):  # from the smallest readable column (3 px) to close up
        for zy in (0.6, 0.8, 1.0, 1.4):
            boxes = _screen(view, zx, zy)
            labelled += sum(b[5].startswith("label") for b in boxes)
            for lane, x0, x1, y0, y1, what in boxes:
                assert 0 <= x0 and x1 <= L["width"] * zx, (what, zx)
                assert lane * L["lane_height"] * zy <= y0 and y1 <= (lane + 1) * L["lane_height"] * zy, (what, zy)
            by_lane: dict[int, list] = {}
            for box in boxes:
                by_lane.setdefault(box[0], []).append(box)
            for row in by_lane.values():
                row.sort(key=lambda b: (b[1], b[2]))
                for a, b in zip(row, row[1:], strict=False):
                    assert a[2] < b[1], (a[5], b[5], zx, zy)  # boxes of one lane never touch
    assert labelled >= len(view["nodes"])  # zoomed in, labels are drawn


def test_labels_are_cut_to_their_room():
    cw = LAYOUT["char_width"]
    assert shown_label("extract S3", 10 * cw) == "extract S3"
    assert shown_label("extract S3", 6 * cw + 0.1) == "extra…"
    assert shown_label("extract S3", 3.9 * cw) == ""


def test_png_preview_is_written(G, tmp_path):
    path = _evidence_path(G, "q1")
    out = render_png(G, tmp_path / "sub" / "graph.png", case="q1", highlight=path, blamed=path[1])
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 5000


def _memopt(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memopt", *args], capture_output=True, text=True, timeout=120)


def test_show_command_writes_html_and_png(G, tmp_path):
    graph = save_graph(G, tmp_path / "graph.json")
    path = _evidence_path(G, "q2")
    out, png = tmp_path / "view.html", tmp_path / "view.png"
    done = _memopt("show", str(graph), "--case", "q2", "--path", ",".join(path), "--blamed", path[1],
                   "--out", str(out), "--png", str(png))
    assert done.returncode == 0, done.stderr
    assert str(out) in done.stdout and "case view" in done.stdout
    data = _data(out.read_text(encoding="utf-8"))
    assert f"{len(data['nodes'])} of {len(G)} nodes" in done.stdout
    assert data["meta"]["blamed"] == path[1] and png.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.slow  # over 4 s (CI runs it with -m slow)
def test_show_command_errors_exit_2_with_one_message(G, tmp_path):
    graph = save_graph(G, tmp_path / "graph.json")
    out = tmp_path / "view.html"
    for args, expected in [
        (("--case", "q999"), "no answer for case 'q999'"),
        (("--path", "turn:D1:1@1,nope:x@1"), "'nope:x@1' is not a node"),
        (("--blamed", "extract:nope"), "blamed operation 'extract:nope' is not a node"),
        (("--blamed", "memory:m1@1"), "is a variable, not an operation"),
    ]:
        done = _memopt("show", str(graph), *args, "--out", str(out))
        assert done.returncode == 2, (args, done.stderr)
        assert expected in done.stderr and str(graph) in done.stderr and "Traceback" not in done.stderr
    missing = _memopt("show", str(tmp_path / "missing.json"), "--out", str(out))
    assert missing.returncode == 2 and "no such graph file" in missing.stderr
    assert not out.exists()


_DOM_STUB = r"""
const html = require("fs").readFileSync(process.argv[1], "utf8");
const data = html.match(/id="graph-data">([\s\S]*?)<\/script>/)[1];
const code = html.match(/<script>([\s\S]*?)<\/script>/)[1];
const on = {}, els = {};
function make(id, tag) {
  const e = { id, tagName: tag, children: [], style: {}, text: "", clientWidth: 1000, clientHeight: 600,
    classList: { add() {}, remove() {} }, getBoundingClientRect: () => ({ left: 0, top: 0 }),
    appendChild(c) { this.children.push(c); return c; },
    addEventListener(t, f) { (on[id + ":" + t] = on[id + ":" + t] || []).push(f); },
    get textContent() { return id === "graph-data" ? data : this.text; },
    set textContent(v) { this.text = String(v); if (v === "") this.children = []; },
    getContext: () => new Proxy({}, { get: (t, k) => (k in t ? t[k] : () => {}) }) };
  return e;
}
global.document = { getElementById: id => els[id] || (els[id] = make(id, id)), createElement: t => make("", t) };
global.window = { devicePixelRatio: 1,
  addEventListener(t, f) { (on["window:" + t] = on["window:" + t] || []).push(f); },
  dispatchEvent(e) { if (e.type === "memopt:select" && e.detail) global.told = (global.told || 0) + 1; return true; } };
global.CustomEvent = class { constructor(type, init) { this.type = type; this.detail = init && init.detail; } };
const fire = (k, ev) => (on[k] || []).forEach(f => f(ev));
eval(code);
const canvas = document.getElementById("canvas"), seen = new Set();
for (let x = 0; x < 1000; x += 7) for (let y = 0; y < 600; y += 7) {
  fire("stage:mousedown", { target: canvas, clientX: x, clientY: y });
  fire("window:mouseup", { clientX: x, clientY: y });
  const head = document.getElementById("panel").children[0];
  if (head && head.tagName === "h2") seen.add(head.text);
}
fire("canvas:wheel", { deltaY: -200, clientX: 300, clientY: 200, preventDefault() {} });
fire("fit:click", {}); fire("gopath:click", {}); fire("window:resize", {});
fire("find:keydown", { key: "Enter", target: { value: "answer", style: {} } });
console.log(JSON.stringify({ title: document.getElementById("title").text,
  banner: document.getElementById("banner").text, clicked: seen.size, told: global.told || 0 }));
"""


@pytest.mark.slow  # over 4 s (CI runs it with -m slow)
def test_viewer_script_runs_under_node_with_a_stub_dom(G, tmp_path):
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed; the viewer's JavaScript is not executed in this run")
    path = _evidence_path(G, "q2")
    page = tmp_path / "view.html"
    page.write_text(render_html(G, case="q2", highlight=path, blamed=path[1], title="viewer test"), encoding="utf-8")
    done = subprocess.run([node, "-e", _DOM_STUB, str(page)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["title"] == "viewer test" and path[1] in result["banner"] and result["clicked"] > 10
    assert result["told"] >= result["clicked"]  # every selection is told to a page that embeds the view


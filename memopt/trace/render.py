"""Draw an evolution graph: a self-contained offline HTML viewer, and a PNG preview for MLflow.

`graph_view` turns a graph into the data both drawings use: lanes (one per variable kind and one
per operation, in data-flow order), nodes placed by logical time (``created`` / ``start``) in
columns that never overlap within a lane, edges, and the evidence path and blamed op. The layout
is computed here, in world pixels (`LAYOUT`): every node has a position (``px``, ``py``), a radius
``r`` and the ``room`` its label may take before the next node of its lane; node boxes never
overlap and all lie inside ``meta.layout`` width × height. The viewer only zooms and pans that
layout: the time axis and the lanes zoom apart, node sizes shrink with the columns, and a label is
drawn (cut with "…" by `shown_label`, the same rule the page applies) only where it fits, in full
on hover, for the selected node and along the evidence path. Three modes:

- ``case``: one question's subgraph — the answer's lineage, the case's evidence turns and what
  they fed before the answer, later versions of the store units involved (with the ops that wrote
  them) and the ops that read them — at most `CASE_LIMIT` nodes, nearest first;
- ``full``: every node, for graphs of up to `SUMMARY_THRESHOLD` nodes;
- ``summary``: larger graphs, with nodes grouped per lane and range of sessions or questions.

`view_html` embeds the view as JSON in one HTML page (inline CSS and JS, no network);
`render_html` does both steps. `render_png` draws a smaller view (`PNG_LIMIT` nodes) with matplotlib.

    >>> page = render_html(G, case="q12", highlight=["turn:D1:3@1", "extract:conv-30:S1"])
"""

from __future__ import annotations

import difflib
import html
import json
import math
import re
from collections import Counter, deque
from pathlib import Path
from typing import Any

import networkx as nx

from memopt.core.errors import ConfigError
from memopt.trace._viewer_template import DATA_MARK, PAGE, TITLE_MARK
from memopt.trace.graph import answer_of

__all__ = ["CASE_LIMIT", "SUMMARY_THRESHOLD", "PNG_LIMIT", "LAYOUT", "graph_view", "shown_label", "view_html",
           "render_html", "render_png"]

CASE_LIMIT = 600
SUMMARY_THRESHOLD = 1500
PNG_LIMIT = 250
_SESSION_GROUPS, _QUESTION_GROUPS, _EVIDENCE_HOPS, _READERS, _NEIGHBOURS, _CLIP = 40, 10, 4, 3, 30, 3000
_VAR_ORDER = ("prompt", "turn", "fact", "memory", "chunk", "episode", "profile", "question", "query", "context",
              "answer")
_VAR_COLORS = {"prompt": "#8e6cc0", "turn": "#95a5a6", "fact": "#2ca25f", "memory": "#3182bd", "chunk": "#17becf",
               "episode": "#e6842a", "profile": "#bcbd22", "question": "#756bb1", "query": "#9e9ac8",
               "context": "#1b9e9e", "answer": "#d6569b"}
_OP_COLORS = ("#1f4e79", "#6b4226", "#2f5d3a", "#5a2d6e", "#7a5c00", "#204f4f", "#555555")
# World geometry of the viewer (pixels at zoom 1); the page reads it from meta.layout.
LAYOUT = {"column": 26, "lane_height": 46, "radius": 6, "max_radius": 12, "char_width": 6.6, "label_height": 13,
          "gap": 3, "margin": 16, "tail": 180}
_KEY = re.compile(r"^(?:S(?P<session>\d+)|q(?P<question>\d+))(?:$|\.)")
_TURN = re.compile(r"^turn:D(\d+):")


def _time(d: dict[str, Any]) -> float:
    t = d.get("created", d.get("start"))
    return t if isinstance(t, (int, float)) else 0


def _lane_of(d: dict[str, Any]) -> tuple[str, str]:
    return ("op", str(d.get("operation"))) if d.get("type") == "op" else ("variable", str(d.get("kind")))


def _ident(G: nx.DiGraph, n: str) -> str:
    """The part of an id after its kind and conversation: ``memory:m17@3`` → ``m17@3``."""
    rest = n.split(":", 1)[-1]
    conversation = G.graph.get("conversation")
    return rest.removeprefix(f"{conversation}:") if conversation else rest


def _label(G: nx.DiGraph, n: str) -> str:
    d = G.nodes[n]
    return f"{d.get('operation')} {_ident(G, n)}" if d.get("type") == "op" else _ident(G, n)


def _case_key_of(G: nx.DiGraph, n: str) -> str:
    return _ident(G, n).split("@")[0].rsplit(":", 1)[-1]


def _choices(items: list[str], limit: int = 8) -> str:
    shown = ", ".join(items[:limit])
    return f"{shown}, … ({len(items)} in all)" if len(items) > limit else shown


def _check_node(G: nx.DiGraph, node: str, role: str, pool: list[str]) -> None:
    if node in G:
        return
    close = difflib.get_close_matches(node, pool, n=4, cutoff=0.6)
    examples = list({n.split(":")[0]: n for n in reversed(pool)}.values())[::-1][:8]
    hint = f"did you mean {', '.join(close)}?" if close else f"ids look like {', '.join(examples)}"
    raise ConfigError(f"{role} {node!r} is not a node of the graph of {G.graph.get('conversation')} "
                      f"({len(G)} nodes); {hint}")


def _resolve_case(G: nx.DiGraph, case: str) -> tuple[str, dict[str, Any]]:
    conversation = G.graph.get("conversation")
    prefix, _, key = case.rpartition(":")
    cases = {c["key"]: c for c in G.graph.get("cases") or []}
    keys = sorted(cases, key=lambda k: (len(k), k)) or sorted(
        _case_key_of(G, n) for n, d in G.nodes(data=True) if d.get("kind") == "answer")
    if prefix and prefix != conversation:
        raise ConfigError(f"case {case!r} belongs to conversation {prefix}, but this graph is of {conversation}; "
                          f"cases here: {_choices(keys)}")
    answer = answer_of(G, key)
    if answer is None:
        raise ConfigError(f"no answer for case {case!r} in the graph of {conversation}; cases: {_choices(keys)}")
    return answer, cases.get(key, {"case_id": f"{conversation}:{key}", "key": key, "evidence": []})


def _case_nodes(G: nx.DiGraph, answer: str, case: dict[str, Any], forced: list[str],
                limit: int) -> tuple[list[str], int]:
    """The nodes of a case's subgraph, nearest first (at most ``limit``), and how many there were.

    Distance is hops back from the answer (its lineage) or forward from the case's evidence turns;
    later versions of the store units found (and the ops that wrote them) come one hop beyond the
    unit, the last few ops that read a found variable before the answer two hops beyond it.
    """
    t_answer = _time(G.nodes[answer])
    others = {c["key"] for c in G.graph.get("cases") or []} - {case["key"]}
    rank: dict[str, tuple[float, int, float]] = {}

    def add(n: str, depth: float, tier: int, when: float) -> None:
        if (depth, tier, when) < rank.get(n, (math.inf, 0, 0)):
            rank[n] = (depth, tier, when)

    def usable(n: str) -> bool:
        return _time(G.nodes[n]) < t_answer and _case_key_of(G, n) not in others

    for n in [answer, *forced]:
        add(n, -1, 0, 0)
    for n, depth in nx.single_source_shortest_path_length(G.reverse(copy=False), answer).items():
        add(n, depth, 0, -_time(G.nodes[n]))
    names: dict[str, list[str]] = {}
    for n, d in G.nodes(data=True):
        if d.get("type") == "variable":
            names.setdefault(d.get("name", n), []).append(n)
    frontier = deque((t, 0) for dia in case.get("evidence") or [] for t in names.get(f"turn:{dia}", []))
    while frontier:
        n, depth = frontier.popleft()
        add(n, depth, 1, _time(G.nodes[n]))
        if depth < _EVIDENCE_HOPS:
            frontier.extend((m, depth + 1) for m in G.successors(n) if m not in rank and usable(m))
    for unit in [n for n in rank if "action" in G.nodes[n]]:
        depth = rank[unit][0] + 1
        for version in (v for v in names[G.nodes[unit]["name"]] if usable(v)):
            add(version, depth, 2, _time(G.nodes[version]))
            for writer in G.predecessors(version):
                add(writer, depth, 2, _time(G.nodes[writer]))
    for n in [n for n in rank if G.nodes[n].get("type") == "variable"]:
        readers = sorted((r for r in G.successors(n) if usable(r)), key=lambda r: -_time(G.nodes[r]))
        for reader in readers[:_READERS]:
            add(reader, rank[n][0] + 2, 3, -_time(G.nodes[reader]))
    return sorted(rank, key=rank.__getitem__)[:limit], len(rank)


def _phase(G: nx.DiGraph, n: str) -> tuple[str, int]:
    """("S", session) or ("q", question number) of a node, or ("", 0) when it has neither."""
    d = G.nodes[n]
    if d.get("type") == "variable":
        writer = next(iter(G.predecessors(n)), None)
        if writer is not None:
            return _phase(G, writer)
        turn = _TURN.match(d.get("name", ""))
        if turn:
            return "S", int(turn.group(1))
    m = _KEY.match(_ident(G, n).split("@")[0].rsplit(":", 1)[-1])
    if m is None:
        return "", 0
    return ("S", int(m.group("session"))) if m.group("session") else ("q", int(m.group("question")))


def _ranges(values: set[int], groups: int, tag: str) -> dict[int, str]:
    ordered = sorted(values)
    size = max(1, math.ceil(len(ordered) / groups))
    out: dict[int, str] = {}
    for i in range(0, len(ordered), size):
        chunk = ordered[i:i + size]
        label = f"{tag}{chunk[0]}" if len(chunk) == 1 else f"{tag}{chunk[0]}–{tag}{chunk[-1]}"
        out.update(dict.fromkeys(chunk, label))
    return out


def _summary_groups(G: nx.DiGraph, keep: set[str]) -> dict[str, list[str]]:
    """Nodes grouped by lane and range of sessions / questions (small groups and ``keep`` stay single)."""
    phases = {n: _phase(G, n) for n in G if n not in keep}
    labels = {"S": _ranges({v for t, v in phases.values() if t == "S"}, _SESSION_GROUPS, "S"),
              "q": _ranges({v for t, v in phases.values() if t == "q"}, _QUESTION_GROUPS, "q"), "": {0: "other"}}
    groups: dict[str, list[str]] = {}
    for n, (tag, value) in phases.items():
        kind, name = _lane_of(G.nodes[n])
        groups.setdefault(f"group:{kind}:{name}:{labels[tag][value]}", []).append(n)
    out = {n: [n] for n in keep}
    for gid, members in groups.items():
        out.update({m: [m] for m in members} if len(members) <= 3 else {gid: members})
    return out


def _clip(value: Any) -> Any:
    if isinstance(value, str):
        return value if len(value) <= _CLIP else f"{value[:_CLIP]}… ({len(value) - _CLIP} more characters)"
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        items = list(value.items())
        out = {str(k): _clip(v) for k, v in items[:_NEIGHBOURS]}
        return out | ({"…": f"{len(items) - _NEIGHBOURS} more"} if len(items) > _NEIGHBOURS else {})
    if isinstance(value, (list, tuple)):
        more = [f"… {len(value) - _NEIGHBOURS} more"] if len(value) > _NEIGHBOURS else []
        return [_clip(v) for v in value[:_NEIGHBOURS]] + more
    return value


def _neighbours(nodes: list[str]) -> dict[str, Any]:
    return {"ids": nodes[:_NEIGHBOURS], "more": max(0, len(nodes) - _NEIGHBOURS)}


def _group_info(G: nx.DiGraph, members: list[str]) -> dict[str, Any]:
    data = [G.nodes[m] for m in members]
    info: dict[str, Any] = {"members": len(members), "first": members[0], "last": members[-1]}
    if data[0].get("type") == "op":
        for key in ("lm_calls", "input_tokens", "output_tokens", "seconds"):
            info[key] = round(sum(d.get(key) or 0 for d in data), 4)
        errors = [m for m, d in zip(members, data, strict=True) if d.get("error")]
        info["errors"] = _neighbours(errors) if errors else 0
    elif any("action" in d for d in data):
        info["actions"] = dict(Counter(str(d.get("action")) for d in data))
    info["sample"] = members[:10]
    return info


def _lanes(G: nx.DiGraph, items: dict[str, list[str]], first: dict[str, float]) -> list[tuple[str, str]]:
    """Lanes in data-flow order: variable kinds in a fixed order, each op lane next to what it writes or reads."""
    def var_rank(kind: str) -> float:
        return _VAR_ORDER.index(kind) if kind in _VAR_ORDER else len(_VAR_ORDER)

    wrote: dict[tuple[str, str], Counter[str]] = {}
    read: dict[tuple[str, str], set[str]] = {}
    start: dict[tuple[str, str], float] = {}
    for item, members in items.items():
        lane = _lane_of(G.nodes[members[0]])
        start[lane] = min(start.get(lane, math.inf), first[item])
        if lane[0] == "op":
            for m in members:
                wrote.setdefault(lane, Counter()).update(G.nodes[s].get("kind") for s in G.successors(m))
                read.setdefault(lane, set()).update(
                    k for p in G.predecessors(m) if (k := G.nodes[p].get("kind")) != "prompt")

    def rank(lane: tuple[str, str]) -> tuple[float, float, str]:
        if lane[0] == "variable":
            return var_rank(lane[1]), start[lane], lane[1]
        if wrote.get(lane):
            return var_rank(wrote[lane].most_common(1)[0][0]) - 0.5, start[lane], lane[1]
        if read.get(lane):
            return max(map(var_rank, read[lane])) + 0.5, start[lane], lane[1]
        return len(_VAR_ORDER) + 1, start[lane], lane[1]

    return sorted(start, key=rank)


def _entry(G: nx.DiGraph, item: str, members: list[str]) -> dict[str, Any]:
    """What the viewer shows of one node, or of a group of nodes (``item`` not in ``G``)."""
    d = G.nodes[members[0]]
    shape = ("square" if d.get("op_kind") == "llm" else "diamond") if d.get("type") == "op" else "circle"
    if item in G:
        return {"shape": shape, "label": _label(G, item), "info": {k: _clip(v) for k, v in d.items()},
                "preds": _neighbours(list(G.predecessors(item))), "succs": _neighbours(list(G.successors(item))),
                "deleted": bool(d.get("deleted"))}
    return {"shape": shape, "label": f"{_lane_of(d)[1]} ×{len(members)} {item.rsplit(':', 1)[-1]}",
            "count": len(members), "info": _group_info(G, members)}


def graph_view(G: nx.DiGraph, *, case: str | None = None, highlight: list[str] | None = None,
               blamed: str | None = None, limit: int | None = None) -> dict[str, Any]:
    """The laid-out data of a drawing: a case keeps its ``limit`` nearest nodes, a graph above ``limit`` is summarised.

    ``limit`` defaults to `CASE_LIMIT` for a case and `SUMMARY_THRESHOLD` for a whole graph; an
    unknown case, path node or blamed op raises `ConfigError` naming it and listing valid ones.
    """
    path = list(highlight or [])
    for n in path:
        _check_node(G, n, "evidence path node", sorted(map(str, G)))
    if blamed is not None:
        _check_node(G, blamed, "blamed operation", sorted(n for n, d in G.nodes(data=True) if d.get("type") == "op"))
        if G.nodes[blamed].get("type") != "op":
            writers = _choices(list(G.predecessors(blamed))) or "none"
            raise ConfigError(f"blamed node {blamed!r} is a variable, not an operation (written by: {writers})")
    forced = [*path, *([blamed] if blamed else [])]
    meta: dict[str, Any] = {k: G.graph.get(k) for k in ("pipeline", "conversation", "lm", "simulated")}
    meta |= {"total": len(G), "path": path, "blamed": blamed, "case": None}
    if case is not None:
        answer, info = _resolve_case(G, case)
        kept, related = _case_nodes(G, answer, info, forced, limit or CASE_LIMIT)
        items = {n: [n] for n in kept}
        meta |= {"mode": "case", "related": related,
                 "case": {**info, "answer": G.nodes[answer].get("value"), "answer_node": answer}}
    elif len(G) > (limit or SUMMARY_THRESHOLD):
        items = _summary_groups(G, set(forced))
        meta["mode"] = "summary"
    else:
        items = {n: [n] for n in G}
        meta["mode"] = "full"
    for members in items.values():
        members.sort(key=lambda m: (_time(G.nodes[m]), m))
    first = {item: _time(G.nodes[members[0]]) for item, members in items.items()}
    lanes = _lanes(G, items, first)
    lane_index = {lane: i for i, lane in enumerate(lanes)}
    rep = {m: item for item, members in items.items() for m in members}
    order = sorted(items, key=lambda item: (first[item], item))
    index = {item: i for i, item in enumerate(order)}
    nodes: list[dict[str, Any]] = []
    column, last = 0, [-1] * len(lanes)
    for item in order:
        lane = lane_index[_lane_of(G.nodes[items[item][0]])]
        column = max(column, last[lane] + 1)
        last[lane] = column
        node = {"id": item, "lane": lane, "x": column, "t": first[item], **_entry(G, item, items[item])}
        if item in path:
            node["path"] = path.index(item)
        if item == blamed:
            node["blamed"] = True
        nodes.append(node)
    edges: Counter[tuple[int, int, int]] = Counter()
    for u, v, rel in G.edges(data="rel"):
        if u in rep and v in rep and rep[u] != rep[v]:
            edges[(index[rep[u]], index[rep[v]], int(rel == "write"))] += 1
    meta["shown"] = len(rep)
    meta["note"] = _note(meta, len(nodes))
    meta["layout"] = _place(nodes, len(lanes))
    return {"meta": meta, "nodes": nodes, "edges": [[*e, n] for e, n in edges.items()],
            "lanes": [{"type": kind, "name": name, "label": name if kind == "variable" else f"{name} (op)",
                       "color": _VAR_COLORS.get(name, "#7f7f7f") if kind == "variable"
                       else _OP_COLORS[i % len(_OP_COLORS)]} for i, (kind, name) in enumerate(lanes)]}


def shown_label(label: str, room: float, char_width: float = LAYOUT["char_width"]) -> str:
    """The part of a label drawn in ``room`` pixels of monospace text: whole, cut with "…", or "" under 4 characters."""
    fits = int(room // char_width)
    if fits >= len(label):
        return label
    return label[: fits - 1] + "…" if fits >= 4 else ""


def _place(nodes: list[dict[str, Any]], lanes: int) -> dict[str, Any]:
    """World positions, radii and label room of laid-out nodes (see the module docstring); returns meta.layout."""
    L = LAYOUT
    last: dict[int, dict[str, Any]] = {}
    width = L["margin"] * 2 + (max((n["x"] for n in nodes), default=0) + 1) * L["column"] + L["tail"]
    for n in sorted(nodes, key=lambda n: (n["lane"], n["x"])):
        n["px"] = L["margin"] + n["x"] * L["column"] + L["column"] / 2
        n["py"] = n["lane"] * L["lane_height"] + L["lane_height"] - L["radius"] - L["gap"] * 2
        n["r"] = round(min(L["max_radius"], L["radius"] + 2 * math.log2(n.get("count", 1))), 2)
        previous = last.get(n["lane"])
        if previous is not None:
            previous["room"] = n["px"] - n["r"] - previous["px"] - previous["r"] - 2 * L["gap"]
        last[n["lane"]] = n
    for n in last.values():
        n["room"] = width - L["margin"] - n["px"] - n["r"] - L["gap"]
    return {**L, "width": width, "height": lanes * L["lane_height"]}


def _note(meta: dict[str, Any], drawn: int) -> str:
    total, shown = meta["total"], meta["shown"]
    if meta["mode"] == "summary":
        return (f"Summary view: {total:,} nodes drawn as {drawn:,} groups per lane and range of sessions or "
                f"questions; choose a case (memopt show --case q12) to see one question's nodes.")
    if meta["mode"] == "case":
        cut = meta["related"] - shown
        more = f"; the {cut:,} farthest of {meta['related']:,} related nodes are left out" if cut > 0 else ""
        return (f"Case {meta['case']['case_id']}: {shown:,} of {total:,} nodes — the answer's lineage, the "
                f"case's evidence turns and what they fed, later versions of the units involved{more}.")
    return f"All {total:,} nodes."


def view_html(view: dict[str, Any], *, title: str | None = None) -> str:
    """One self-contained HTML page (inline CSS and JS, no network) showing a `graph_view`; the value of an LM
    credential variable of the environment is shown as ``***`` (`memopt.lm.redaction.redact_tree`)."""
    from memopt.lm.redaction import redact_tree

    meta = view["meta"]
    if title is None:
        case = meta.get("case") or {}
        title = " · ".join(str(p) for p in (meta.get("pipeline"), meta.get("conversation"), case.get("key")) if p)
    view = redact_tree({**view, "meta": {**meta, "title": title or "evolution graph"}})  # no credential values
    title = view["meta"]["title"]
    data = json.dumps(view, ensure_ascii=False, separators=(",", ":"), default=str)
    for raw, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"),
                         ("\u2029", "\\u2029")):
        data = data.replace(raw, escaped)
    head, tail = PAGE.split(DATA_MARK)
    return head.replace(TITLE_MARK, html.escape(title or "evolution graph")) + data + tail


def render_html(G: nx.DiGraph, *, case: str | None = None, highlight: list[str] | None = None,
                blamed: str | None = None, title: str | None = None) -> str:
    """The offline HTML viewer of a graph (see `graph_view` for the modes and `view_html` for the page)."""
    return view_html(graph_view(G, case=case, highlight=highlight, blamed=blamed), title=title)


def _png(view: dict[str, Any], path: Path) -> Path:
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.collections import LineCollection
        from matplotlib.figure import Figure
    except ImportError:
        raise ConfigError("PNG previews need matplotlib: pip install matplotlib") from None
    nodes, lanes, meta = view["nodes"], view["lanes"], view["meta"]
    width = max((n["x"] for n in nodes), default=0) + 1
    fig = Figure(figsize=(min(40.0, max(8.0, 3 + width * 0.12)), max(3.0, 1.5 + 0.55 * len(lanes))), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    xy = [(n["x"], -n["lane"]) for n in nodes]
    ax.add_collection(LineCollection([(xy[s], xy[t]) for s, t, _, _ in view["edges"]], colors="#9aa5b1",
                                     linewidths=0.5, alpha=0.5, zorder=1))
    on_path = sorted((n for n in nodes if "path" in n), key=lambda n: n["path"])
    if len(on_path) > 1:
        ax.plot([n["x"] for n in on_path], [-n["lane"] for n in on_path], color="#ff8c00", lw=2.5, zorder=2)
    markers = {"circle": "o", "square": "s", "diamond": "D"}
    for shape, marker in markers.items():
        group = [n for n in nodes if n["shape"] == shape]
        if group:
            ax.scatter([n["x"] for n in group], [-n["lane"] for n in group], marker=marker, zorder=3,
                       s=[30 + 12 * math.log2(n.get("count", 1)) for n in group],
                       c=[lanes[n["lane"]]["color"] for n in group], edgecolors="white", linewidths=0.5)
    for n in nodes:
        if "path" in n or n.get("blamed"):
            ring = "#d62728" if n.get("blamed") else "#ff8c00"
            ax.scatter([n["x"]], [-n["lane"]], s=160, facecolors="none", edgecolors=ring, linewidths=2, zorder=4,
                       marker=markers[n["shape"]])
        if "path" in n or n.get("blamed") or len(nodes) <= 80:
            ax.annotate(n["label"], (n["x"], -n["lane"]), xytext=(4, 5), textcoords="offset points", fontsize=6,
                        zorder=5)
    ax.set_yticks([-i for i in range(len(lanes))], [lane["label"] for lane in lanes], fontsize=8)
    ax.set_xticks([])
    ax.set_xlim(-1, width)
    ax.set_ylim(-len(lanes) + 0.4, 0.8)
    ax.set_xlabel("logical time →", fontsize=8)
    banner = f" — blamed: {meta['blamed']}" if meta.get("blamed") else ""
    title = " · ".join(str(p) for p in (meta.get("pipeline"), meta.get("conversation")) if p)
    ax.set_title(f"{title}{banner}\n{meta['note']}", fontsize=9, loc="left")
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png", bbox_inches="tight")
    return path


def render_png(G: nx.DiGraph, path: str | Path, *, case: str | None = None, highlight: list[str] | None = None,
               blamed: str | None = None) -> Path:
    """A static PNG preview (matplotlib, Agg) of at most `PNG_LIMIT` nodes or groups, e.g. for MLflow."""
    return _png(graph_view(G, case=case, highlight=highlight, blamed=blamed, limit=PNG_LIMIT), Path(path))

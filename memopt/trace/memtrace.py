"""MemTrace-compatible JSON: export memopt evolution graphs for MemTraceBench-style tools, and import theirs.

The MemTrace paper describes each graph of its benchmark (MemTraceBench) as variables
``{full_node_id: "name@version", class_name, value, category, created_at, metadata}``, operations
``{op_id, name, category}`` and annotations ``{query_id, query, golden_answers, prediction,
source_evidence_ids, final_error_type, final_op_id}`` under ``graph_data["data"]["annotations"]``.
We have no copy of the benchmark; this is our reading of that description, one JSON object per graph::

    {"graph_data": {
        "data": {
            "variables":   [{"full_node_id": "memory:m17@3", "class_name": "MemoryUnit", "value": ...,
                             "category": "memory", "created_at": 42, "metadata": {...}}],
            "operations":  [{"op_id": "update:conv-30:S3", "name": "update", "category": "update",
                             "metadata": {...}}],
            "edges":       [{"source": "<full_node_id or op_id>", "target": "...", "type": "read" | "write"}],
            "annotations": [{"query_id": "conv-30:q12", "query": "...", "golden_answers": ["..."],
                             "prediction": "..." | null, "source_evidence_ids": ["D4:12"],
                             "final_error_type": "UpdateError" | ... | null, "final_op_id": "..." | null}]},
        "meta": {...}}}

A read edge runs variable → operation, a write edge operation → variable. ``final_error_type`` is
one of `ERROR_TYPES`. Operation categories are ``extraction``, ``update``, ``deletion``,
``retrieval``, ``response``: the first stage the op's system declared (``other`` when it declared
none); an imported op keeps its own category, and an op without one is ``other``.

**Export** (`to_memtrace`): ``full_node_id`` is the memopt node id, ``category`` the variable kind,
``created_at`` its logical time, ``metadata`` every other node attribute; an operation's
``metadata`` holds every node attribute but ``operation``. ``meta`` holds the graph attributes
(pipeline, operations, conversation, speakers, sessions, knobs, instructions, lm, simulated, …); each
recorded case becomes an annotation (``prediction`` is the value of its newest answer node; an
extra ``category`` field holds the LoCoMo category).

**Import** (`from_memtrace`) tolerates what the description leaves open: ``graph_data`` as an
object or as a JSON string; edges under ``edges`` or ``links``, their ``type`` inferred from the
direction when absent; ``golden_answers`` as a string or a list; ``metadata``, ``created_at``,
``class_name``, ``category``, ``value``, ``meta`` and ``annotations`` missing. A variable id of
memopt form (``kind:ident@N``) is kept; any other id becomes ``kind:id@N`` with the kind taken
from ``category`` (or ``class_name``; ``dialogue`` → ``turn``, ``MemoryUnit`` → ``memory``, …),
and keeps its original id in ``memtrace_id`` (a missing ``@N`` means version 1). When every
variable has an integer ``created_at`` and every operation an integer ``metadata.start`` (as
memopt exports do), those are the logical times; otherwise one logical clock is derived from the
edges (a topological order, variables first and in list order, versions of a name in order), and
a non-integer ``created_at`` is kept as an attribute. Operations missing memopt attributes get
defaults (``op_kind`` ``tool`` for retrieval, else ``llm``; no LM calls; no inputs). A
``category`` or ``class_name`` that memopt would not derive itself is kept as a node attribute,
so a re-export writes it back. The annotations also become the graph's ``cases``. Malformed input
raises `DataError` naming the file and the JSON path, e.g.
``bench.json: graph_data.data.variables[3].full_node_id: missing``.

``from_memtrace(to_memtrace(G))`` gives back ``G``: the same nodes, edges and attributes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import networkx as nx

from memopt.errors import DataError
from memopt.files import read_json, write_json
from memopt.taxonomy import ERROR_TYPES
from memopt.trace.graph import SCHEMA_VERSION, answer_of, op_stages, ops_in_order, variables
from memopt.trace.tracer import inputs_hash

__all__ = ["ERROR_TYPES", "Annotation", "to_memtrace", "from_memtrace", "save_memtrace", "load_memtrace"]


_CLASS_OF_KIND = {
    "turn": "DialogueTurn", "fact": "Fact", "memory": "MemoryUnit", "chunk": "Chunk", "episode": "Episode",
    "profile": "Profile", "context": "Context", "question": "Question", "query": "Query", "answer": "Answer",
    "prompt": "Prompt",
}
_KIND_ALIASES = {"dialogue": "turn", "dialogue_turn": "turn", "message": "turn", "utterance": "turn",
                 "memory_unit": "memory", "memory_item": "memory"}
_VARIABLE_FIELDS = frozenset({"full_node_id", "class_name", "value", "category", "created_at", "metadata"})
_OP_FIELDS = frozenset({"op_id", "name", "category", "metadata"})
_MEMTRACE_ATTRS = ("memtrace_id", "class_name", "category")
_TYPE_NAMES = {dict: "an object", list: "a list", str: "a string", int: "a number", float: "a number"}
_MEMOPT_ID = re.compile(r"[a-z_]+:.+")
_VERSIONED = re.compile(r"(?P<base>.+)@(?P<version>\d+)")


@dataclass(frozen=True)
class Annotation:
    """One MemTrace annotation: a question, its gold and predicted answers, and the blamed operation."""

    query_id: str
    query: str
    golden_answers: tuple[str, ...]
    prediction: str | None
    source_evidence_ids: tuple[str, ...]
    final_error_type: str | None
    final_op_id: str | None


def _class_of(kind: str) -> str:
    return _CLASS_OF_KIND.get(kind, "".join(part.capitalize() for part in kind.split("_")))


def _op_category(G: nx.DiGraph, op: str) -> str:
    """An op's MemTrace category: the first stage its system declared (``other`` with none)."""
    stages = op_stages(G, op)
    return stages[0] if stages else "other"


def to_memtrace(G: nx.DiGraph, attributions: Mapping[str, tuple[str, str]] | None = None) -> dict[str, Any]:
    """The MemTrace JSON document of a graph; ``attributions`` maps case_id → (error_type, op_id)."""
    strays = [n for n, d in G.nodes(data=True) if d.get("type") not in ("variable", "op")]
    if strays:
        raise ValueError(f"nodes {strays[:3]} are neither variables nor ops; not a memopt evolution graph")
    ids = {n: d.get("memtrace_id", n) for n, d in G.nodes(data=True)}
    out_variables = []
    for n in variables(G):
        d = G.nodes[n]
        out_variables.append({
            "full_node_id": ids[n], "class_name": d.get("class_name") or _class_of(d["kind"]), "value": d["value"],
            "category": d.get("category") or d["kind"], "created_at": d["created"],
            "metadata": {k: v for k, v in d.items()
                         if k not in ("type", "kind", "value", "created", *_MEMTRACE_ATTRS)},
        })
    out_ops = []
    for n in ops_in_order(G):
        d = G.nodes[n]
        out_ops.append({
            "op_id": n, "name": d["operation"], "category": d.get("category") or _op_category(G, n),
            "metadata": {k: v for k, v in d.items() if k not in ("type", "operation", "category")},
        })
    edges = [{"source": ids[u], "target": ids[v], "type": d["rel"]} for u, v, d in G.edges(data=True)]
    annotations = _export_annotations(G, attributions or {})
    meta = {k: v for k, v in G.graph.items() if k != "cases"}
    return {"graph_data": {"data": {"variables": out_variables, "operations": out_ops, "edges": edges,
                                    "annotations": annotations}, "meta": meta}}


def _export_annotations(G: nx.DiGraph, attributions: Mapping[str, tuple[str, str]]) -> list[dict[str, Any]]:
    cases = G.graph.get("cases", [])
    unknown = set(attributions) - {c["case_id"] for c in cases}
    if unknown:
        raise ValueError(f"attributions for cases not in the graph: {sorted(unknown)}")
    out = []
    for case in cases:
        error_type, op_id = attributions.get(case["case_id"], (None, None))
        if error_type is not None and error_type not in ERROR_TYPES:
            raise ValueError(f"{case['case_id']}: error type {error_type!r} is not one of {', '.join(ERROR_TYPES)}")
        if op_id is not None and G.nodes.get(op_id, {}).get("type") != "op":
            raise ValueError(f"{case['case_id']}: no operation {op_id!r} in the graph")
        answer = answer_of(G, case["key"])
        out.append({"query_id": case["case_id"], "query": case["question"], "golden_answers": [case["gold"]],
                    "prediction": G.nodes[answer]["value"] if answer else None,
                    "source_evidence_ids": list(case["evidence"]), "final_error_type": error_type,
                    "final_op_id": op_id, "category": case.get("category")})
    return out


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return _TYPE_NAMES.get(type(value), type(value).__name__)


class _Reader:
    """Field access on a MemTrace document that fails with the file name and the JSON path."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, path: str, problem: str) -> NoReturn:
        raise DataError(f"{self.source}: {path}: {problem}")

    def get(self, obj: dict[str, Any], key: str, path: str, kinds: tuple[type, ...], *, required: bool = True) -> Any:
        where = f"{path}.{key}" if path else key
        value = obj.get(key)
        if value is None:
            if required:
                self.fail(where, "missing")
            return None
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            names = " or ".join(dict.fromkeys(_TYPE_NAMES[t] for t in kinds))
            self.fail(where, f"expected {names}, got {_json_type(value)}")
        return value

    def objects(self, items: list[Any], path: str) -> list[tuple[str, dict[str, Any]]]:
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                self.fail(f"{path}[{i}]", f"expected an object, got {_json_type(item)}")
        return [(f"{path}[{i}]", item) for i, item in enumerate(items)]


def _parse_variable(reader: _Reader, path: str, item: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
    original = reader.get(item, "full_node_id", path, (str,))
    m = _VERSIONED.fullmatch(original)
    base, version = (m.group("base"), int(m.group("version"))) if m else (original, 1)
    category = reader.get(item, "category", path, (str,), required=False)
    class_name = reader.get(item, "class_name", path, (str,), required=False)
    if _MEMOPT_ID.fullmatch(base):
        kind, name = base.split(":", 1)[0], base
    else:
        label = category or class_name or "variable"
        snake = re.sub(r"[^a-z]+", "_", re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", label).lower()).strip("_")
        kind = _KIND_ALIASES.get(snake, snake or "variable")
        name = f"{kind}:{base}"
    node = f"{name}@{version}"
    created_at = item.get("created_at")
    attrs = {k: v for k, v in item.items() if k not in _VARIABLE_FIELDS}
    attrs.update(reader.get(item, "metadata", path, (dict,), required=False) or {})
    attrs.update(type="variable", kind=kind, name=name, version=version, value=item.get("value"))
    if isinstance(created_at, int) and not isinstance(created_at, bool):
        attrs["created"] = created_at
    elif created_at is not None:
        attrs["created_at"] = created_at
    if node != original:
        attrs["memtrace_id"] = original
    if class_name is not None and class_name != _class_of(kind):
        attrs["class_name"] = class_name
    if category is not None and category != kind:
        attrs["category"] = category
    return original, node, attrs


def _parse_op(reader: _Reader, path: str, item: dict[str, Any], meta: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    op_id = reader.get(item, "op_id", path, (str,))
    name = reader.get(item, "name", path, (str,))
    declared = (meta.get("operations") or {}).get(name) if isinstance(meta.get("operations"), dict) else None
    derived = (declared.get("stages") or ["other"])[0] if isinstance(declared, dict) else "other"
    category = reader.get(item, "category", path, (str,), required=False) or derived
    attrs: dict[str, Any] = {
        "pipeline": meta.get("pipeline"), "op_kind": "tool" if category == "retrieval" else "llm", "predictor": None,
        "prompt_version": None, "inputs": {}, "output": None, "start": None, "end": None, "started_at": None,
        "seconds": None, "lm_calls": 0, "input_tokens": 0, "output_tokens": 0, "error": None, "overridden": False,
        "parent": None,
    }
    attrs.update({k: v for k, v in item.items() if k not in _OP_FIELDS})
    attrs.update(reader.get(item, "metadata", path, (dict,), required=False) or {})
    attrs.update(type="op", operation=name)
    attrs.setdefault("inputs_hash", inputs_hash(attrs["inputs"]))
    if category != derived:
        attrs["category"] = category
    return op_id, attrs


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _assign_clock(reader: _Reader, G: nx.DiGraph, edges_path: str) -> None:
    """Give every node a logical time from the edges (variables first, in list order) unless all have one."""
    var_nodes = [n for n, d in G.nodes(data=True) if d["type"] == "variable"]
    op_nodes = [n for n, d in G.nodes(data=True) if d["type"] == "op"]
    if all(_is_int(G.nodes[n].get("created")) for n in var_nodes) and all(_is_int(G.nodes[n]["start"])
                                                                          for n in op_nodes):
        for n in op_nodes:
            if G.nodes[n]["end"] is None:
                G.nodes[n]["end"] = G.nodes[n]["start"]
        return
    H = nx.DiGraph(G.edges)
    H.add_nodes_from(G)
    by_name: dict[str, list[str]] = {}
    for n in var_nodes:
        by_name.setdefault(G.nodes[n]["name"], []).append(n)
    for versions in by_name.values():
        nx.add_path(H, sorted(versions, key=lambda v: G.nodes[v]["version"]))
    rank = {n: (0, i) for i, n in enumerate(var_nodes)} | {n: (1, i) for i, n in enumerate(op_nodes)}
    try:
        order = list(nx.lexicographical_topological_sort(H, key=rank.__getitem__))
    except nx.NetworkXUnfeasible:
        cycle = " -> ".join(u for u, _ in nx.find_cycle(H))
        reader.fail(edges_path, f"the edges (and version order) form a cycle ({cycle}); an evolution graph is acyclic")
    for clock, n in enumerate(order, start=1):
        G.nodes[n]["created" if G.nodes[n]["type"] == "variable" else "start"] = clock
    for n in op_nodes:
        G.nodes[n]["end"] = max([G.nodes[n]["start"], *(G.nodes[v]["created"] for v in G.successors(n))])


def _parse_annotation(reader: _Reader, path: str, item: dict[str, Any], G: nx.DiGraph) -> Annotation:
    query_id = str(reader.get(item, "query_id", path, (str, int)))
    query = reader.get(item, "query", path, (str,))
    golden = reader.get(item, "golden_answers", path, (str, list, int, float))
    golden_list = golden if isinstance(golden, list) else [golden]
    for i, answer in enumerate(golden_list):
        if not isinstance(answer, (str, int, float)) or isinstance(answer, bool):
            reader.fail(f"{path}.golden_answers[{i}]", f"expected a string, got {_json_type(answer)}")
    prediction = reader.get(item, "prediction", path, (str, int, float), required=False)
    evidence = reader.get(item, "source_evidence_ids", path, (list,), required=False) or []
    for i, ref in enumerate(evidence):
        if not isinstance(ref, str):
            reader.fail(f"{path}.source_evidence_ids[{i}]", f"expected a string, got {_json_type(ref)}")
    error_type = reader.get(item, "final_error_type", path, (str,), required=False)
    if error_type is not None and error_type not in ERROR_TYPES:
        reader.fail(f"{path}.final_error_type", f"{error_type!r} is not one of {', '.join(ERROR_TYPES)} (or null)")
    op_id = reader.get(item, "final_op_id", path, (str,), required=False)
    if op_id is not None and G.nodes.get(op_id, {}).get("type") != "op":
        reader.fail(f"{path}.final_op_id", f"no operation {op_id!r} in graph_data.data.operations")
    return Annotation(query_id=query_id, query=query, golden_answers=tuple(str(a) for a in golden_list),
                      prediction=None if prediction is None else str(prediction),
                      source_evidence_ids=tuple(evidence), final_error_type=error_type, final_op_id=op_id)


def _case(annotation: Annotation, category: Any) -> dict[str, Any]:
    return {"case_id": annotation.query_id, "key": annotation.query_id.split(":")[-1], "question": annotation.query,
            "gold": annotation.golden_answers[0] if annotation.golden_answers else "",
            "evidence": list(annotation.source_evidence_ids), "category": category}


def from_memtrace(data: Any, *, source: str = "<memtrace>") -> tuple[nx.DiGraph, list[Annotation]]:
    """A memopt evolution graph and its annotations from a MemTrace JSON document (errors name ``source``)."""
    reader = _Reader(source)
    if not isinstance(data, dict):
        reader.fail("(top level)", f"expected an object with \"graph_data\", got {_json_type(data)}")
    graph_data = reader.get(data, "graph_data", "", (dict, str))
    if isinstance(graph_data, str):
        try:
            graph_data = json.loads(graph_data)
        except json.JSONDecodeError as e:
            reader.fail("graph_data", f"a string that is not valid JSON (line {e.lineno}: {e.msg})")
        if not isinstance(graph_data, dict):
            reader.fail("graph_data", f"expected an object (or a JSON string of one), got {_json_type(graph_data)}")
    body = reader.get(graph_data, "data", "graph_data", (dict,))
    meta = reader.get(graph_data, "meta", "graph_data", (dict,), required=False) or {}
    if "edges" in body and "links" in body:
        reader.fail("graph_data.data", "has both \"edges\" and \"links\"; give the edges under one of them")
    edges_key = "links" if "links" in body else "edges"
    base = "graph_data.data"

    G = nx.DiGraph()
    ids: dict[str, str] = {}
    for path, item in reader.objects(reader.get(body, "variables", base, (list,)), f"{base}.variables"):
        original, node, attrs = _parse_variable(reader, path, item)
        if original in ids or node in G:
            reader.fail(f"{path}.full_node_id", f"duplicate variable {original!r}")
        ids[original] = node
        G.add_node(node, **attrs)
    for path, item in reader.objects(reader.get(body, "operations", base, (list,)), f"{base}.operations"):
        op_id, attrs = _parse_op(reader, path, item, meta)
        if op_id in ids or op_id in G:
            reader.fail(f"{path}.op_id", f"{op_id!r} is already the id of another node")
        ids[op_id] = op_id
        G.add_node(op_id, **attrs)

    edges_path = f"{base}.{edges_key}"
    for path, item in reader.objects(reader.get(body, edges_key, base, (list,)), edges_path):
        ends = []
        for end in ("source", "target"):
            ref = reader.get(item, end, path, (str,))
            if ref not in ids:
                reader.fail(f"{path}.{end}", f"unknown node {ref!r} (not a full_node_id or op_id)")
            ends.append(ids[ref])
        u, v = ends
        kinds = (G.nodes[u]["type"], G.nodes[v]["type"])
        if kinds not in (("variable", "op"), ("op", "variable")):
            reader.fail(path, f"joins two {kinds[0]} nodes ({u} -> {v}); edges join a variable and an operation")
        rel = "read" if kinds[0] == "variable" else "write"
        given = reader.get(item, "type", path, (str,), required=False)
        if given not in (None, rel):
            reader.fail(f"{path}.type", f"{given!r} for an edge {kinds[0]} -> {kinds[1]}; expected {rel!r}")
        G.add_edge(u, v, rel=rel)
    _assign_clock(reader, G, edges_path)

    annotations, cases = [], []
    items = reader.get(body, "annotations", base, (list,), required=False) or []
    for path, item in reader.objects(items, f"{base}.annotations"):
        annotations.append(_parse_annotation(reader, path, item, G))
        cases.append(_case(annotations[-1], item.get("category")))
    G.graph.update({"pipeline": None, "conversation": None, "speakers": {}, "sessions": [], "knobs": {},
                    "instructions": {}, "prompt_versions": {}, "lm": None, "simulated": False})
    G.graph.update({k: v for k, v in meta.items() if k != "cases"})
    G.graph.update(schema_version=SCHEMA_VERSION, cases=cases)
    return G, annotations


def save_memtrace(G: nx.DiGraph, path: str | Path, attributions: Mapping[str, tuple[str, str]] | None = None) -> Path:
    """Write a graph as MemTrace JSON (atomically)."""
    return write_json(path, to_memtrace(G, attributions), indent=None)


def load_memtrace(path: str | Path) -> tuple[nx.DiGraph, list[Annotation]]:
    """Read a MemTrace JSON file into a memopt graph and its annotations."""
    return from_memtrace(read_json(path, missing="no such MemTrace file."), source=str(path))

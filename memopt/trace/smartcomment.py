"""smartcomment execution graphs (MemTraceBench's file format): validation with the library, and export.

A MemTraceBench file is the ``ExecNetwork.export_graph()`` dump of smartcomment 0.1.2 (a pydantic
``model_dump``) with the benchmark's annotations under ``data.annotations``::

    {"graph_id", "user_id", "project_id", "storage_path", "strict", "driver_type", "created_at", "metadata",
     "data": {"nodes": [Variable], "edges": [OpEdge], "operations": [OpRecord], "sessions": [Session],
              "annotations": [...]}}

A variable is one version ``class_name:name@version`` with ``value`` (always a string), ``category``,
``created_at`` (``YYYY-MM-DD HH:MM:SS.sss``), ``session_id`` and ``metadata``; an edge joins two
variables and names the operation (``op_id``) that made it. `validate_document` checks every item with
smartcomment's own models and the whole graph with ``ExecNetwork.import_graph``.

**Export** (`to_memtrace`): every memopt op becomes one smartcomment op (``op_id`` = the memopt op id,
``op_name`` = ``<pipeline>.<operation>``, ``category`` its stage, ``evaluation`` for the answer op as
MemBase records question answering) and its reads × writes become edges (the NONE sentinel stands in
for a side with no variable, as ``comment_op`` does). A memopt variable ``kind:ident@N`` becomes
``class_name`` = kind, ``name`` = ident, with MemTrace's categories: turns ``message`` (no class: their
full id is the dia_id, ``D4:12@1``), questions class ``query`` / ``message & query`` (evidence names in
their metadata), store units ``memory_entry``, contexts ``memory_context``, answers class ``prediction``. A deleted unit
version becomes, as MemBase writes it, an edge from the previous version to a ``DELETED`` marker node.
``created_at`` carries memopt's logical clock (milliseconds after the epoch), since smartcomment demands
a timestamp; values that are not strings are JSON. Each item's ``metadata["memopt"]`` keeps the memopt
attributes (and the deleted version a marker stands for), so `memopt.trace.memtracebench.from_memtrace`
gives the graph back; the graph's cases become annotations (error type and op from ``attributions``).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import networkx as nx

from memopt.core.errors import ConfigError, DataError
from memopt.core.files import write_json
from memopt.taxonomy import ERROR_TYPES
from memopt.trace.graph import answer_of, latest, op_stages, ops_in_order, variables

__all__ = ["SMARTCOMMENT_VERSION", "INSTALL", "require_smartcomment", "validate_document", "to_memtrace",
           "save_memtrace", "clock_time"]

SMARTCOMMENT_VERSION = "0.1.2"
INSTALL = ('pip install -e ".[memtracebench]" && '
           f"pip install --no-deps --ignore-requires-python smartcomment=={SMARTCOMMENT_VERSION}")
_EPOCH = dt.datetime(1970, 1, 1)
_SENTINEL = "COMMENT:NONE@1"
_SECTIONS = {"nodes": "Variable", "edges": "OpEdge", "operations": "OpRecord", "sessions": "Session"}
_CATEGORY = {"turn": "message", "question": "message & query", "context": "memory_context", "answer": "llm_response",
             "prompt": "prompt"}
_CLASS = {"turn": None, "question": "query", "answer": "prediction", "context": "context", "query": "rewritten_query"}


def require_smartcomment() -> Any:
    """The ``smartcomment`` module, or a `ConfigError` saying how to install it (it declares Python ≥ 3.12)."""
    try:
        import smartcomment
    except ImportError:
        raise ConfigError(f"MemTraceBench files need smartcomment {SMARTCOMMENT_VERSION}, which is not installed. "
                          f"Install it with: {INSTALL}  (smartcomment declares Python >= 3.12 but runs on 3.11; "
                          "see docs/datasets.md, MemTraceBench).") from None
    return smartcomment


def _type(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string"}.get(type(value), type(value).__name__)


def validate_document(doc: Any, *, source: str) -> dict[str, Any]:
    """Check a smartcomment graph with smartcomment's own models; return its canonical dump (errors name ``source``)."""
    require_smartcomment()
    from pydantic import ValidationError
    from smartcomment.runtime.network import ExecNetwork
    from smartcomment.schema.operation import OpEdge, OpRecord
    from smartcomment.schema.session import Session
    from smartcomment.schema.variable import Variable

    if not isinstance(doc, dict) or not isinstance(doc.get("data"), dict):
        hint = " (a memopt evolution graph: open it with `memopt show` or `load_graph`)" if isinstance(
            doc, dict) and doc.get("schema") == "memopt.evolution_graph" else ""
        raise DataError(f"{source}: not a smartcomment execution graph{hint}; expected an object with \"graph_id\" "
                        "and \"data\": {\"nodes\", \"edges\", \"operations\", \"sessions\"} "
                        "(ExecNetwork.export_graph(), the MemTraceBench format).")
    models = {"Variable": Variable, "OpEdge": OpEdge, "OpRecord": OpRecord, "Session": Session}
    if not isinstance(doc.get("metadata", {}), dict):
        raise DataError(f"{source}: metadata: expected an object, got {_type(doc['metadata'])}.")
    for section, model in _SECTIONS.items():
        items = doc["data"].get(section, [])
        if not isinstance(items, list):
            raise DataError(f"{source}: data.{section}: expected a list, got {_type(items)}.")
        for i, item in enumerate(items):
            if isinstance(item, dict) and not isinstance(item.get("metadata", {}), dict):
                raise DataError(f"{source}: data.{section}[{i}].metadata: expected an object, got "
                                f"{_type(item['metadata'])}.")
            try:
                models[model].model_validate(item)
            except ValidationError as e:
                first = e.errors()[0]
                where = ".".join(str(p) for p in first["loc"])
                raise DataError(f"{source}: data.{section}[{i}]{'.' + where if where else ''}: {first['msg']} "
                                f"(smartcomment {model}).") from None
    try:
        network = ExecNetwork.import_graph(doc)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise DataError(f"{source}: {where}: {first['msg']}.") from None
    except (ValueError, TypeError, AssertionError) as e:
        raise DataError(f"{source}: data: {e} (smartcomment ExecNetwork.import_graph).") from None
    return network.export_graph()


def clock_time(tick: int) -> str:
    """A logical clock tick as the timestamp smartcomment demands (``tick`` milliseconds after the epoch)."""
    return (_EPOCH + dt.timedelta(milliseconds=tick)).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def _split(node: str) -> tuple[str, str, int]:
    base, _, version = node.rpartition("@")
    kind, _, ident = base.partition(":")
    return kind, ident, int(version)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _variable(G: nx.DiGraph, node: str, common: dict[str, Any]) -> dict[str, Any]:
    d = G.nodes[node]
    kind, ident, version = _split(node)
    memopt = {k: v for k, v in d.items() if k not in ("type", "value")}
    memopt["value_is_text"] = isinstance(d.get("value"), str)
    meta: dict[str, Any] = {"memopt": memopt}
    if kind == "turn" and isinstance(d.get("value"), dict):
        meta["speaker"] = d["value"].get("speaker")
        dates = {s.get("index"): s.get("date_time") for s in G.graph.get("sessions") or [] if isinstance(s, dict)}
        if dates.get(d["value"].get("session")):
            meta["timestamp"] = dates[d["value"]["session"]]
    elif d.get("session_date"):
        meta["timestamp"] = d["session_date"]
    category = "memory_entry" if "action" in d else _CATEGORY.get(kind, kind)
    return {**common, "name": ident, "version": version, "value": _text(d.get("value")), "category": category,
            "class_name": _CLASS.get(kind, kind), "created_at": clock_time(d["created"]), "metadata": meta}


def _full_id(item: dict[str, Any]) -> str:
    return f"{item['class_name'] + ':' if item['class_name'] else ''}{item['name']}@{item['version']}"


def to_memtrace(G: nx.DiGraph, attributions: Mapping[str, tuple[str, str]] | None = None) -> dict[str, Any]:
    """The smartcomment document (``ExecNetwork.export_graph()`` shape, validated by smartcomment) of a graph."""
    require_smartcomment()
    from smartcomment.runtime.network import ExecNetwork

    if isinstance(G.graph.get("memtrace_document"), dict):
        return _foreign(G, G.graph["memtrace_document"], attributions or {})
    strays = [n for n, d in G.nodes(data=True) if d.get("type") not in ("variable", "op")]
    if strays:
        raise ValueError(f"nodes {strays[:3]} are neither variables nor ops; not a memopt evolution graph")
    conversation = str(G.graph.get("conversation") or "graph")
    session = f"session-{conversation}"
    common = {"graph_id": conversation, "user_id": None, "project_id": None, "session_id": session,
              "filename": "<memopt>", "lineno": 0}
    nodes, markers, fid = [], {}, {}
    for node in variables(G):
        d = G.nodes[node]
        if d.get("deleted"):
            kind, ident, version = _split(node)
            markers[node] = f"delete_marker:{kind}:{ident}.v{version}@1"
            memopt = {k: v for k, v in d.items() if k not in ("type", "value")}
            memopt.update(id=node, value=d.get("value"))
            nodes.append({**common, "name": f"{kind}:{ident}.v{version}", "version": 1, "value": "DELETED",
                          "category": "marker",
                          "class_name": "delete_marker", "created_at": clock_time(d["created"]),
                          "metadata": {"memopt": memopt}})
        else:
            nodes.append(_variable(G, node, common))
            fid[node] = _full_id(nodes[-1])
    evidence = {c["key"]: list(c.get("evidence") or ()) for c in G.graph.get("cases", [])}
    for item in nodes:
        if item["class_name"] == "query":
            key = item["name"].rsplit(":", 1)[-1]
            item["metadata"]["evidence"] = evidence.get(key, [])
    operations, edges, sentinel = [], [], False
    for op in ops_in_order(G):
        d = G.nodes[op]
        stages = op_stages(G, op)
        stage = stages[0] if stages else "other"
        category = "evaluation" if stage == "response" else stage
        memopt = {k: v for k, v in d.items() if k != "type"}
        operations.append({**common, "op_id": op, "op_name": f"{d.get('pipeline')}.{d['operation']}",
                           "category": category, "created_at": clock_time(d["start"]), "metadata": {"memopt": memopt}})
        reads = [v for v in G.predecessors(op)]
        writes = [v for v in G.successors(op) if v not in markers]
        pairs = [(u, v) for u in reads or [_SENTINEL] for v in writes or [_SENTINEL]] if reads or writes else []
        for v in G.successors(op):
            if v in markers:
                previous = f"{G.nodes[v]['name']}@{G.nodes[v]['version'] - 1}"
                pairs.append((previous if previous in G else _SENTINEL, markers[v]))
        sentinel = sentinel or any(_SENTINEL in pair for pair in pairs)
        time = clock_time(d["start"])
        edges += [{**common, "edge_id": f"edge-{op}-{n}", "op_id": op, "category": category,
                   "source_full_node_id": fid.get(u, u), "target_full_node_id": fid.get(v, v), "created_at": time}
                  for n, (u, v) in enumerate(pairs)]
    sessions = [{**common, "session_name": conversation, "category": "memopt", "created_at": clock_time(0)}]
    if sentinel:
        sessions.append({**common, "session_id": "__none__", "session_name": "NONE sentinel", "category": "sentinel",
                         "filename": "<sentinel>", "created_at": clock_time(0)})
        nodes.append({**common, "session_id": "__none__", "name": "COMMENT:NONE", "version": 1, "value": "NONE",
                      "category": "sentinel", "class_name": None, "filename": "<sentinel>",
                      "created_at": clock_time(0)})
    doc = {"graph_id": conversation, "created_at": clock_time(0),
           "metadata": {"memtracebench_graph_filename": f"{conversation}.json",
                        "memory_system": G.graph.get("pipeline"), "operations": G.graph.get("operations") or {},
                        "memopt": dict(G.graph)},
           "data": {"nodes": nodes, "edges": edges, "operations": operations, "sessions": sessions}}
    out = ExecNetwork.import_graph(doc).export_graph()
    out["data"]["annotations"] = _annotations(G, attributions or {})
    return out


def _foreign(G: nx.DiGraph, source: dict[str, Any], attributions: Mapping[str, tuple[str, str]]) -> dict[str, Any]:
    """A file memopt read, written back as it was (op_ids, node ids, op names, annotations kept); memopt's own
    attributions ride in ``metadata["memopt"]`` (by case, with smartcomment ``op_id``s)."""
    from smartcomment.runtime.network import ExecNetwork

    found = {}
    for case_id, (error_type, op) in attributions.items():
        if op is not None and G.nodes.get(op, {}).get("type") != "op":
            raise ValueError(f"{case_id}: no operation {op!r} in the graph")
        found[case_id] = {"final_error_type": error_type,
                          "final_op_id": G.nodes[op].get("sc_op_id", op) if op is not None else None}
    doc = json.loads(json.dumps(source))
    annotations = doc["data"].pop("annotations", [])
    doc["metadata"] = {**(doc.get("metadata") or {}), "memopt": {"foreign": True, "attributions": found}}
    out = ExecNetwork.import_graph(doc).export_graph()
    out["data"]["annotations"] = annotations
    return out


def _annotations(G: nx.DiGraph, attributions: Mapping[str, tuple[str, str]]) -> list[dict[str, Any]]:
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
        question = latest(G, f"question:{G.graph.get('conversation')}:{case['key']}")
        out.append({"query_id": question.replace("question:", "query:", 1) if question else "",
                    "query": case["question"],
                    "golden_answers": [case["gold"]],
                    "prediction": _text(G.nodes[answer]["value"]) if answer else None,
                    "source_evidence_ids": [f"{e}@1" for e in case.get("evidence") or ()],
                    "final_error_type": error_type, "final_op_id": op_id, "category": case.get("category")})
    return out


def save_memtrace(G: nx.DiGraph, path: str | Path, attributions: Mapping[str, tuple[str, str]] | None = None) -> Path:
    """Write a graph as a smartcomment (MemTraceBench-format) JSON file, atomically."""
    return write_json(path, to_memtrace(G, attributions), indent=None)

"""MemTraceBench files (smartcomment execution graphs) as memopt evolution graphs, with their annotations.

A file is validated with smartcomment's own models (`memopt.trace.smartcomment.validate_document`), then
converted. smartcomment's edges join two variables and name the operation that made them; memopt's graph
is bipartite (variable → op → variable), so each smartcomment op becomes one memopt op per group of the
variables it wrote with the same inputs inside it (a multi-hop op — Mem0's update decision: prompt → raw
decision → actions → unit; question answering: units → context → prediction — becomes a chain of memopt
ops that all keep the smartcomment ``op_id`` as ``sc_op_id``). The first op whose edge reaches a variable
writes it; an edge of a later op into an existing version (a retrieval from the query to the units it
found) is a read, not a new version. Kinds, by smartcomment category and class:

==============================================  =========================================================
``message``                                     ``turn`` (value ``{speaker, text, session}``; dia_id = full name)
class ``query`` (``message & query``)           ``question`` (the case key is its name)
``memory_entry``                                ``memory`` (``action`` ADD / UPDATE, ``sources``, ``session_date``
                                                from ``metadata.timestamp``); of class ``chunk``: kind ``chunk``
a variable in a unit's role, any category       the same: deleted into a marker, overwritten by another op, or
                                                read by a question's op (`memopt.trace.store_units`)
edge from a unit to a DELETE ``marker``         a new ``memory`` version with ``deleted`` (a DELETE)
a DELETE marker named after a unit              the same, when no edge comes from the unit (`memopt.trace.tombstones`)
a unit version saying DELETE                    the same (``{"event": "DELETE"}``, ``"deleted": true``, a soft
                                                delete's ``deleted_at``, a version with nothing in it)
a message into a DELETE marker (messages only)  the message's ``evicted``: the op that deleted it from a store
                                                of raw messages (or a marker named after the message)
other ``marker`` nodes (no-split, failed)       kind = their class (``no_split_marker``): a signal, not a delete
``memory_context`` / class ``prediction``       ``context`` / ``answer``, one per op that wrote it (a question's
                                                hit list and the context a rerank cut from it: two versions)
``prompt``, class ``golden_answers``, judge      ``prompt``, ``gold``, ``judgement``
other outputs of an ``extraction`` op           ``fact``; anything else: its category as the kind
==============================================  =========================================================

The same roles written under other words, in the node's metadata, or told by a judge's inputs (what a judge op
reads besides the question and the gold is the answer): `memopt.trace.roles`.

Operations: an ``op_name`` ``<memory_system>.<op>`` (``mem0.extract``, when ``metadata["memory_system"]`` is
``mem0``) keeps its op name; otherwise by category:
extraction → ``extract``, update → ``update``, retrieval → ``retrieve`` at question time
(``search_similar`` while ingesting), the part of an op that writes a context → ``fuse``, the part
that writes a prediction → ``answer``, other evaluation ops (``llm-judge``) → ``judge``. Question-time
op ids end in ``:<graph>:<key>`` as memopt's own do (an op is a question's when it reads the
question, reads what another op of that question wrote, or its own ``op_id`` ends so; or, run after the
question was asked, writes only what that question's ops read: a truncation, a rerank of the units a search
found, `memopt.trace.question_ops`). Each op's
stage (`memopt.trace.graph.op_stages`) comes from ``metadata["operations"]`` (the declarations of the
system that wrote the file, as memopt exports them) when it names the op, else from its category
(answers respond; fusing and searching retrieve). Order comes from ``created_at`` (ties: file
order) within the order the edges impose. ``sources`` (the turns a variable derives from) follow
the edges through ops. The conversion lives in `memopt.trace.smartcomment_read`. A file written by
`memopt.trace.smartcomment.to_memtrace` carries ``metadata["memopt"]`` and comes back as the graph it
was written from.

Annotations (``data.annotations``) are read as the official loader reads them (with the ``question_date`` an
annotation may carry); labels outside the five memory error types (annotation or judge errors) are kept, and
skipped by scoring.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import networkx as nx

from memopt.core.errors import DataError
from memopt.core.files import read_json
from memopt.taxonomy import ERROR_TYPES
from memopt.trace.roles import gold_text, question_text
from memopt.trace.smartcomment import validate_document
from memopt.trace.smartcomment_read import convert

__all__ = ["Annotation", "from_memtrace", "load_memtrace", "open_graph"]


@dataclass(frozen=True)
class Annotation:
    """One MemTraceBench annotation: a failed question and the operation its failure is blamed on."""

    query_id: str
    query: str
    golden_answers: tuple[str, ...]
    prediction: str | None
    source_evidence_ids: tuple[str, ...]
    final_error_type: str | None
    final_op_id: str | None
    case_key: str | None
    question_date: str | None = None

    @property
    def memory_error(self) -> bool:
        """Whether the label is a memory error (the official loader drops the others; None: not labelled)."""
        return self.final_error_type in ERROR_TYPES

    @property
    def gold(self) -> str:
        """The gold the answer needed: one answer, or the items of several (a JSON list, each item needed)."""
        return gold_text(list(self.golden_answers))



def _restore(data: dict[str, Any]) -> tuple[nx.DiGraph, dict[str, str]]:
    """The memopt graph a `to_memtrace` file was written from (its ``metadata["memopt"]``), and sc id → memopt id."""
    G, ids = nx.DiGraph(), {}
    for n in data["data"]["nodes"]:
        stash = dict((n.get("metadata") or {}).get("memopt") or {})
        if not stash:
            continue
        if "id" in stash:  # a DELETE marker standing for a deleted version
            node, value = stash.pop("id"), stash.pop("value", None)
        else:
            node = f"{stash['name']}@{stash['version']}"
            value = n["value"] if stash.pop("value_is_text", True) else json.loads(n["value"])
        ids[n["full_node_id"]] = node
        G.add_node(node, type="variable", value=value, **stash)
    for o in data["data"]["operations"]:
        G.add_node(o["op_id"], type="op", **(o.get("metadata") or {}).get("memopt", {}))
    marker_sources: dict[str, set[str]] = defaultdict(set)
    for e in data["data"]["edges"]:
        if e["target_full_node_id"] not in ids or G.nodes[ids[e["target_full_node_id"]]].get("deleted") is not True:
            marker_sources[e["op_id"]].add(e["source_full_node_id"])
    for e in data["data"]["edges"]:
        s, t, op = e["source_full_node_id"], e["target_full_node_id"], e["op_id"]
        if s in ids and (s in marker_sources[op]):
            G.add_edge(ids[s], op, rel="read")
        if t in ids:
            G.add_edge(op, ids[t], rel="write")
    G.graph.update(data["metadata"]["memopt"])
    return G, ids


def _annotation(item: Any, path: str, source: str, question_key: dict[str, str], ops: set[str]) -> Annotation:
    def field(key: str, kinds: tuple[type, ...], required: bool = True) -> Any:
        value = item.get(key)
        if value is None and not required:
            return None
        if not isinstance(value, kinds) or isinstance(value, bool):
            got = "missing" if value is None else f"got {type(value).__name__}"
            raise DataError(f"{source}: {path}.{key}: {got}; expected {' or '.join(k.__name__ for k in kinds)}.")
        return value

    if not isinstance(item, dict):
        raise DataError(f"{source}: {path}: expected an object, got {type(item).__name__}.")
    query_id = str(field("query_id", (str, int)))
    golden = field("golden_answers", (str, int, float, list))
    golden = golden if isinstance(golden, list) else [golden]
    evidence = field("source_evidence_ids", (list,), required=False) or []
    error_type = field("final_error_type", (str,), required=False)
    op_id = field("final_op_id", (str,), required=False)
    if error_type in ERROR_TYPES and op_id not in ops:
        raise DataError(f"{source}: {path}.final_op_id: {op_id!r} is not an op_id of data.operations.")
    prediction = item.get("prediction")
    asked = field("question_date", (str,), required=False)
    return Annotation(query_id, str(field("query", (str,))), tuple(str(g) for g in golden),
                      None if prediction is None else str(prediction), tuple(str(e) for e in evidence), error_type,
                      op_id, question_key.get(query_id) or question_key.get(query_id.rpartition("@")[0])
                      or question_key.get(question_text(item.get("query") or "")), asked)


def from_memtrace(doc: Any, *, source: str = "<memtrace>", split: str | None = None
                  ) -> tuple[nx.DiGraph, list[Annotation]]:
    """A memopt evolution graph and the annotations of one MemTraceBench (smartcomment) document."""
    data = validate_document(doc, source=source)
    raw = doc["data"].get("annotations", [])
    if not isinstance(raw, list):
        raise DataError(f"{source}: data.annotations: expected a list, got {type(raw).__name__}.")
    meta = data.get("metadata") or {}
    if isinstance(meta.get("memopt"), dict) and not meta["memopt"].get("foreign"):
        G, ids = _restore(data)
    else:
        G = convert(data, source=source, split=split)
        ids = {d["sc_id"]: n for n, d in G.nodes(data=True) if d["type"] == "variable"}
        G.graph["memtrace_document"] = {**data, "data": {**data["data"], "annotations": raw}}
    question_key = {}
    for fid, node in ids.items():
        if G.nodes[node].get("kind") == "question":
            key = G.nodes[node]["name"].rsplit(":", 1)[-1]
            question_key[fid] = question_key[fid.rpartition("@")[0]] = key
            question_key.setdefault(fid.rpartition("@")[0].rpartition(":")[2], key)  # its name alone
            question_key.setdefault(question_text(G.nodes[node]["value"]), key)  # its text, as read
    ops = {o["op_id"] for o in data["data"]["operations"]}
    annotations = [_annotation(item, f"data.annotations[{i}]", source, question_key, ops) for i, item in enumerate(raw)]
    return G, annotations


def load_memtrace(path: str | Path, *, split: str | None = None) -> tuple[nx.DiGraph, list[Annotation]]:
    """Read one MemTraceBench (smartcomment) JSON file into a memopt graph and its annotations."""
    doc = read_json(path, missing="no such MemTraceBench file (one smartcomment graph per JSON file).")
    return from_memtrace(doc, source=str(path), split=split)


def open_graph(path: str | Path) -> nx.DiGraph:
    """A graph file of either format, told by its content: memopt's JSON, or a smartcomment (MemTraceBench) graph."""
    from memopt.trace.io import SCHEMA, graph_from_json

    doc = read_json(path, missing="no such graph file (write graphs with `memopt run --trace DIR`).")
    if isinstance(doc, dict) and doc.get("schema") == SCHEMA:
        return graph_from_json(doc, source=str(path))
    if isinstance(doc, dict) and "graph_id" in doc and isinstance(doc.get("data"), dict):
        return from_memtrace(doc, source=str(path))[0]
    raise DataError(f"{path}: neither a memopt evolution graph (\"schema\": \"{SCHEMA}\", written by "
                    "`memopt run --trace`) nor a smartcomment / MemTraceBench graph (\"graph_id\" and \"data\": "
                    "{nodes, edges, operations, sessions}).")

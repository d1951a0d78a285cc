"""Save and load evolution graphs: node-link JSON with a schema version, and GraphML export.

JSON layout::

    {"schema": "memopt.evolution_graph", "schema_version": 2, "directed": true, "multigraph": false,
     "graph": {...graph attributes...}, "nodes": [{"id": ..., ...attributes}], "edges": [{"source", "target", "rel"}]}

`load_graph(save_graph(G))` is equal to ``G`` (same nodes, edges and attributes); a ``.gz`` name
writes gzip-compressed JSON (read back transparently). Version 2 added the ``operations`` graph
attribute (each op's declared stages and steering); version 1 files are refused. GraphML keeps
only scalar attributes, so lists and dicts are written as JSON strings there.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import networkx as nx

from memopt.core.errors import DataError
from memopt.core.files import read_json, write_atomic
from memopt.trace.graph import SCHEMA_VERSION

__all__ = ["graph_to_json", "graph_from_json", "save_graph", "load_graph", "export_graphml", "SCHEMA"]

SCHEMA = "memopt.evolution_graph"


def graph_to_json(G: nx.DiGraph) -> dict[str, Any]:
    """The JSON document of a graph."""
    data = nx.node_link_data(G, edges="edges")
    return {"schema": SCHEMA, "schema_version": SCHEMA_VERSION, **data}


def graph_from_json(data: dict[str, Any], *, source: str = "<graph>") -> nx.DiGraph:
    """A graph from its JSON document (errors name ``source``)."""
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise DataError(f"{source}: not a memopt evolution graph (expected \"schema\": \"{SCHEMA}\"); "
                        "a smartcomment / MemTraceBench graph is read with `memopt.trace.load_memtrace`.")
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        older = isinstance(version, int) and version < SCHEMA_VERSION
        hint = " (older graphs lack their system's op declarations: trace the run again with `memopt run --trace`)"
        raise DataError(f"{source}: graph schema_version {version!r}; this memopt reads version {SCHEMA_VERSION}"
                        f"{hint if older else ''}.")
    _check_shape(data, source)
    payload = {k: v for k, v in data.items() if k not in ("schema", "schema_version")}
    try:
        return nx.node_link_graph(payload, directed=True, multigraph=False, edges="edges")
    except (KeyError, TypeError, ValueError, nx.NetworkXError) as e:
        raise DataError(f"{source}: a damaged evolution graph ({type(e).__name__}: {e}).") from None


def _check_shape(data: dict[str, Any], source: str) -> None:
    """The parts of the document every reader relies on: typed nodes, edges between them, a case list."""
    nodes, edges, graph = data.get("nodes"), data.get("edges"), data.get("graph", {})

    def damaged(where: str, what: str) -> DataError:
        return DataError(f"{source}: {where}: {what}; the graph file is damaged (write it again with "
                         "`memopt run --trace DIR`).")

    if not isinstance(nodes, list) or not isinstance(edges, list) or not isinstance(graph, dict):
        raise damaged("nodes / edges / graph", "expected two lists and an object")
    if data.get("directed", True) is not True or data.get("multigraph", False) is not False:
        raise damaged("directed / multigraph", "expected true and false (an evolution graph is a directed graph "
                      "with one edge between two nodes)")
    ids = set()
    for i, node in enumerate(nodes):
        if not isinstance(node, dict) or not isinstance(node.get("id"), str):
            raise damaged(f"nodes[{i}]", "expected an object with a string 'id'")
        kind = node.get("type")
        if not isinstance(kind, str) or kind not in _NODE_FIELDS:
            raise damaged(f"nodes[{i}].type", f"expected 'op' or 'variable', found {kind!r}")
        for key, (types, required) in _NODE_FIELDS[kind].items():
            _check_field(node, key, types, required, f"nodes[{i}] ({node['id']}).{key}", damaged)
        if node.get("kind") == "turn":  # a dialogue turn's value: {speaker, text, session}
            value = node.get("value")
            if not isinstance(value, dict) or not all(isinstance(value.get(k), str) for k in ("speaker", "text")):
                raise damaged(f"nodes[{i}] ({node['id']}).value", f"expected {{speaker, text, ...}} strings, "
                              f"found {value!r:.60}")
        ids.add(node["id"])
    for i, edge in enumerate(edges):
        ends = (edge.get("source"), edge.get("target")) if isinstance(edge, dict) else (None, None)
        if not all(isinstance(end, str) and end in ids for end in ends):
            raise damaged(f"edges[{i}]", "expected an object whose 'source' and 'target' are node ids")
    cases = graph.get("cases", [])
    if not isinstance(cases, list) or not all(isinstance(c, dict) and isinstance(c.get("case_id"), str)
                                              and isinstance(c.get("key"), str) for c in cases):
        raise damaged("graph.cases", "expected a list of {case_id, key, question, ...} objects")
    for i, case in enumerate(cases):
        for key, (types, required) in _CASE_FIELDS.items():
            _check_field(case, key, types, required, f"graph.cases[{i}] ({case['case_id']}).{key}", damaged)
    specs = graph.get("operations") or {}
    if not isinstance(specs, dict):
        raise damaged("graph.operations", "expected an object (op name → its declaration)")
    for name, spec in specs.items():
        if not isinstance(spec, dict):
            raise damaged(f"graph.operations.{name}", "expected an object {kind, phase, stages, steered_by, ...}")
        for key in ("stages", "steered_by"):
            _check_field(spec, key, _STRINGS, False, f"graph.operations.{name}.{key}", damaged)
    for key, types in (("instructions", dict), ("prompt_versions", dict), ("knobs", dict)):
        _check_field(graph, key, types, False, f"graph.{key}", damaged)


_NUMBER = (int, float)
_STRINGS = "list of strings"
# What the graph queries and attribution read from each kind of node, and of each case: (types, required).
_NODE_FIELDS: dict[str, dict[str, tuple[Any, bool]]] = {
    "variable": {"kind": (str, True), "name": (str, True), "version": (int, True), "created": (_NUMBER, True),
                 "derived_from": (_STRINGS, False), "sources": (_STRINGS, False), "action": (str, False)},
    "op": {"operation": (str, True), "start": (_NUMBER, True), "end": (_NUMBER, False)},
}
_CASE_FIELDS: dict[str, tuple[Any, bool]] = {"question": (str, True), "gold": (str, True),
                                             "evidence": (_STRINGS, False),
                                             "category": ((int, str), False)}  # str: an imported MemTraceBench graph


def _check_field(owner: dict[str, Any], key: str, types: Any, required: bool, where: str, damaged: Any) -> None:
    """Raise ``damaged(where, ...)`` when ``owner[key]`` is missing (and required) or not of ``types``."""
    if key not in owner or owner[key] is None:
        if required:
            raise damaged(where, "missing")
        return
    value = owner[key]
    if types == _STRINGS:
        ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
    else:
        ok = isinstance(value, types) and not isinstance(value, bool)
    if not ok:
        what = types if isinstance(types, str) else " or ".join(
            t.__name__ for t in (types if isinstance(types, tuple) else (types,)))
        raise damaged(where, f"expected {what}, found {value!r:.60}")


def save_graph(G: nx.DiGraph, path: str | Path) -> Path:
    """Write a graph as JSON (atomically; gzip-compressed when the name ends in ``.gz``).

    The value of an LM credential variable of the environment (`memopt.lm.redaction.redact_tree`),
    wherever it sits (a prompt, data, an LM's reply), is written as ``***``.
    """
    from memopt.lm.redaction import redact_tree

    data = json.dumps(redact_tree(graph_to_json(G)), ensure_ascii=False).encode("utf-8")
    return write_atomic(path, gzip.compress(data, mtime=0) if Path(path).suffix == ".gz" else data)


def load_graph(path: str | Path) -> nx.DiGraph:
    """Read a graph written by `save_graph`."""
    data = read_json(path, missing="no such graph file (write graphs with `memopt run --trace DIR`).")
    return graph_from_json(data, source=str(path))


def _scalar(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, (str, int, float, bool)):
        return value
    return json.dumps(value, ensure_ascii=False)


def export_graphml(G: nx.DiGraph, path: str | Path) -> Path:
    """Write a GraphML copy (non-scalar attributes as JSON strings)."""
    H = nx.DiGraph()
    H.graph.update({k: _scalar(v) for k, v in G.graph.items()})
    for n, d in G.nodes(data=True):
        H.add_node(n, **{k: _scalar(v) for k, v in d.items()})
    for u, v, d in G.edges(data=True):
        H.add_edge(u, v, **{k: _scalar(x) for k, x in d.items()})
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    nx.write_graphml(H, path)
    return path

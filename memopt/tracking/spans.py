"""One case of an evolution graph as the spans of an MLflow trace (plain dicts in MLflow's span schema).

Built after the run from the graph, never by live instrumentation, so there is exactly one span per
recorded op and nothing is timed twice. `case_spans` returns, for one answered question:

- the **root** span (type CHAIN), named by the case id: the question in, the prediction out; gold,
  F1, judge verdict and category as ``memopt.*`` attributes; status ERROR when the case errored;
- one **session** span (CHAIN, ``ingest S3``) per ingested session, holding the ingest ops the case
  depends on (`case_ops`): the ops that read its evidence turns, the ops that read what those
  wrote before it reached the store (facts, MemCells), every op that wrote a version of the store
  units they wrote (a later update or delete that lost the information), plus any ``forced`` op (the
  blamed op and the evidence path) — at most `MAX_OP_SPANS`; with no evidence, the ingest ops the
  answer derives from;
- the case's **query ops** in order (rewrite_query, retrieve, fuse, truncate, answer).

An op span keeps the op's recorded inputs and output (strings cut at `MAX_TEXT` characters), start
time and duration, its error, ``memopt.op_id`` and ``memopt.blamed``. LLM ops are LLM spans with
token usage (``mlflow.chat.tokenUsage``), the LM, the prompt hash, and the registered prompt
version when the caller knows it (``mlflow.linkedPrompts``); a tool op whose output is a list of
texts is a RETRIEVER span with MLflow documents; other tool ops are TOOL spans. Span ids count
from 1 within a trace; the trace id is ``tr-`` and 32 hex digits, as MLflow names them.
"""

from __future__ import annotations

import base64
import json
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from memopt.trace.graph import answer_of, latest, versions_of

__all__ = ["MAX_OP_SPANS", "MAX_TEXT", "GraphIndex", "CaseSpans", "case_ops", "case_spans"]

MAX_OP_SPANS = 30
MAX_TEXT = 4000


@dataclass
class GraphIndex:
    """The ops of one conversation's graph: per question key, and the ingest ops (both oldest first)."""

    query: dict[str, list[str]]
    ingest: list[str]

    @classmethod
    def of(cls, G: nx.DiGraph) -> GraphIndex:
        """Index a graph (an op is a query op when its key is a question key of ``G.graph['cases']``)."""
        keys = {c["key"] for c in G.graph.get("cases", [])}
        found = sorted((n for n, d in G.nodes(data=True) if d.get("type") == "op"), key=lambda n: G.nodes[n]["start"])
        query: dict[str, list[str]] = {}
        ingest = []
        for op in found:
            key = op.rsplit(":", 1)[-1]
            if key in keys:
                query.setdefault(key, []).append(op)
            else:
                ingest.append(op)
        return cls(query, ingest)


def case_ops(G: nx.DiGraph, key: str, evidence: Iterable[str], forced: Iterable[str] = (),
             index: GraphIndex | None = None) -> tuple[list[str], list[str]]:
    """(ingest ops, query ops) a question ``key`` depends on, oldest first (see the module docstring)."""
    index = index or GraphIndex.of(G)
    ingest = set(index.ingest)
    turns = [n for d in evidence if (n := latest(G, f"turn:{d}")) is not None]
    readers = {o for t in turns for o in G.successors(t) if o in ingest}
    written = {v for o in readers for v in G.successors(o)}
    readers |= {o for v in written if "action" not in G.nodes[v] for o in G.successors(v) if o in ingest}
    written |= {v for o in readers for v in G.successors(o)}
    units = {G.nodes[v]["name"] for v in written if "action" in G.nodes[v]}
    chosen = readers | {w for name in units for v in versions_of(G, name) for w in G.predecessors(v) if w in ingest}
    pinned = [n for n in forced if n in ingest]
    if not chosen and not pinned and (answer := answer_of(G, key)) is not None:
        chosen = nx.ancestors(G, answer) & ingest
    order = {op: i for i, op in enumerate(index.ingest)}
    keep = list(dict.fromkeys([*pinned, *sorted(chosen, key=order.__getitem__)]))[:MAX_OP_SPANS]
    return sorted(keep, key=order.__getitem__), list(index.query.get(key, []))


def _clip(value: Any) -> Any:
    if isinstance(value, str):
        return value if len(value) <= MAX_TEXT else value[:MAX_TEXT] + "…"
    if isinstance(value, dict):
        return {k: _clip(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clip(v) for v in value[:100]]
    return value


def _b64(number: int, size: int) -> str:
    return base64.b64encode(number.to_bytes(size, "big")).decode()


@dataclass
class CaseSpans:
    """The spans of one case's trace, in MLflow's span dict schema (attribute values JSON-encoded)."""

    trace_id: str = field(default_factory=lambda: f"tr-{uuid.uuid4().hex}")
    spans: list[dict[str, Any]] = field(default_factory=list)
    blamed_span: str | None = None  # the MLflow span id (16 hex digits) of the blamed op, when it has a span

    def add(self, name: str, kind: str, *, parent: int | None, start: float, end: float, inputs: Any = None,
            outputs: Any = None, attributes: dict[str, Any] | None = None, error: str | None = None) -> int:
        """Add a finished span (times in epoch seconds, ``kind`` an MLflow span type); returns its id."""
        span_id = len(self.spans) + 1
        attrs = {"mlflow.traceRequestId": json.dumps(self.trace_id), "mlflow.spanType": json.dumps(kind)}
        values = {"mlflow.spanInputs": inputs, "mlflow.spanOutputs": outputs, **(attributes or {})}
        attrs |= {k: json.dumps(_clip(v), ensure_ascii=False, default=str) for k, v in values.items() if v is not None}
        otel_trace = int(self.trace_id.removeprefix("tr-"), 16)
        self.spans.append({
            "trace_id": _b64(otel_trace, 16), "span_id": _b64(span_id, 8),
            "parent_span_id": _b64(parent, 8) if parent else None, "name": name,
            "start_time_unix_nano": int(start * 1e9), "end_time_unix_nano": int(max(end, start) * 1e9), "events": [],
            "status": {"code": "STATUS_CODE_ERROR" if error else "STATUS_CODE_OK", "message": error or ""},
            "attributes": attrs})
        return span_id

    def prompts(self) -> list[dict[str, str]]:
        """The prompt versions the LLM spans link to (``[{name, version}]``, each once)."""
        found = {a["mlflow.linkedPrompts"] for s in self.spans if "mlflow.linkedPrompts" in (a := s["attributes"])}
        return sorted({json.dumps(p, sort_keys=True): p for raw in found for p in json.loads(raw)}.values(),
                      key=lambda p: (p["name"], p["version"]))


def _span_kind(d: dict[str, Any]) -> str:
    if d.get("op_kind") == "llm":
        return "LLM"
    output = d.get("output")
    if isinstance(output, list) and output and all(isinstance(o, dict) and "text" in o for o in output):
        return "RETRIEVER"
    return "TOOL"


def _times(d: dict[str, Any]) -> tuple[float, float]:
    start = float(d.get("started_at") or time.time())
    return start, start + float(d.get("seconds") or 0.0)


def _op_span(trace: CaseSpans, G: nx.DiGraph, op: str, parent: int, prompts: dict[str, tuple[str, int]],
             blamed: str | None) -> None:
    d = G.nodes[op]
    kind = _span_kind(d)
    output = d.get("output")
    if kind == "RETRIEVER":
        output = [{"page_content": o["text"], "id": o.get("ref"),
                   "metadata": {k: v for k, v in o.items() if k != "text"}} for o in output]
    attrs: dict[str, Any] = {"memopt.op_id": op, "memopt.blamed": True if op == blamed else None}
    if kind == "LLM":
        tokens_in, tokens_out = d.get("input_tokens") or 0, d.get("output_tokens") or 0
        attrs |= {"mlflow.chat.tokenUsage": {"input_tokens": tokens_in, "output_tokens": tokens_out,
                                             "total_tokens": tokens_in + tokens_out},
                  "memopt.lm": G.graph.get("lm"), "memopt.lm_calls": d.get("lm_calls"),
                  "memopt.prompt_hash": d.get("prompt_version")}
        if not G.graph.get("simulated"):
            attrs["mlflow.llm.model"] = G.graph.get("lm")  # MLflow prices a real model's tokens (via LiteLLM)
        if d["operation"] in prompts:
            name, version = prompts[d["operation"]]
            attrs |= {"mlflow.linkedPrompts": [{"name": name, "version": str(version)}],
                      "memopt.prompt": f"prompts:/{name}/{version}"}
    start, end = _times(d)
    span = trace.add(f"{d['operation']}:{op.rsplit(':', 1)[-1]}", kind, parent=parent, start=start, end=end,
                     inputs=d.get("inputs"), outputs=output, attributes=attrs, error=d.get("error"))
    if op == blamed:
        trace.blamed_span = f"{span:016x}"


def case_spans(result: Any, *, G: nx.DiGraph | None, attribution: Any = None, evidence: Iterable[str] = (),
               prompts: dict[str, tuple[str, int]] | None = None, index: GraphIndex | None = None) -> CaseSpans:
    """The trace of one answered case (a `CaseResult`) from its conversation's graph (None: the root span only).

    ``attribution`` (an `Attribution`, optional) forces its blamed op and evidence path in and marks
    the blamed span; ``prompts`` maps an operation to its registered prompt (name, version).
    """
    trace = CaseSpans()
    key = result.case_id.rsplit(":", 1)[-1]
    ingest: list[str] = []
    query: list[str] = []
    blamed = attribution.op_id if attribution is not None else None
    if G is not None:
        forced = [blamed, *attribution.evidence_path] if attribution is not None else []
        ingest, query = case_ops(G, key, evidence, [n for n in forced if n in G], index)
    times = [_times(G.nodes[op]) for op in [*ingest, *query]] if G is not None else []
    start = min((t[0] for t in times), default=time.time())
    end = max((t[1] for t in times), default=start)
    root = trace.add(result.case_id, "CHAIN", parent=None, start=start, end=end, inputs={"question": result.question},
                     outputs={"answer": result.prediction}, error=result.error,
                     attributes={"memopt.case_id": result.case_id, "memopt.gold": result.gold, "memopt.f1": result.f1,
                                 "memopt.correct": result.correct, "memopt.category": result.category})
    sessions: dict[str, list[str]] = {}
    for op in ingest:
        sessions.setdefault(op.rsplit(":", 1)[-1].split(".")[0], []).append(op)
    for session, members in sessions.items():
        spans = [_times(G.nodes[op]) for op in members]
        group = trace.add(f"ingest {session}", "CHAIN", parent=root, start=min(s for s, _ in spans),
                          end=max(e for _, e in spans), inputs={"session": session}, outputs={"ops": members})
        for op in members:
            _op_span(trace, G, op, group, prompts or {}, blamed)
    for op in query:
        _op_span(trace, G, op, root, prompts or {}, blamed)
    return trace

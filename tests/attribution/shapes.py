"""Small execution graphs of one shape each, written the two ways attribution reads graphs: smartcomment's format
(`Smartcomment`, built from smartcomment's own schema objects and exported with ``ExecNetwork.export_graph()``) and
memopt's evolution-graph format (`Native`, with its system's op declarations).

A test builds a conversation, the ops that ingest it, a question and what went wrong, then asks who is blamed
(`blame_smartcomment`, `blame_native`).
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
from typing import Any

import networkx as nx

from memopt.attribution.case import FailedCase
from memopt.attribution.evidence import seed_evidence
from memopt.attribution.memtrace import memtrace
from memopt.judge.judges import LexicalJudge
from memopt.trace.graph import SCHEMA_VERSION

__all__ = ["Smartcomment", "Native", "blame_smartcomment", "blame_native"]


class Smartcomment:
    """One smartcomment graph, built with smartcomment's schema objects (ids and times are counters)."""

    def __init__(self, name: str, meta: dict[str, Any] | None = None) -> None:
        from smartcomment.runtime import ExecNetwork

        self._ids = itertools.count(1)
        self._clock = dt.datetime(2025, 10, 1, 9, 0, 0)
        self.net = ExecNetwork(graph_id=f"graph-{name}", user_id=None, project_id="shapes",
                               created_at=self._tick())
        self.net.update_metadata({"file_name": f"{name}.json", **(meta or {})})
        self.versions: dict[str, int] = {}
        self.session_id: str | None = None
        self.op_id: str | None = None

    def _tick(self) -> str:
        self._clock += dt.timedelta(milliseconds=7)
        return self._clock.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]

    def _common(self) -> dict[str, Any]:
        return {"graph_id": self.net.graph_id, "user_id": None, "project_id": "shapes", "created_at": self._tick(),
                "filename": "app.py", "lineno": next(self._ids)}

    def session(self, name: str, **meta: Any) -> str:
        """Open a session (its metadata: a date under any key, or none)."""
        from smartcomment.schema.session import Session

        s = Session(session_id=f"session-{next(self._ids)}", session_name=name, comment=None, category="session",
                    **self._common())
        if meta:
            s.update_metadata(meta)
        self.net._driver.add_session(s)
        self.session_id = s.session_id
        return s.session_id

    def var(self, name: str, value: Any, *, cls: str | None = None, cat: str = "variable", **meta: Any) -> str:
        """The next version of ``cls:name`` (its full id)."""
        from smartcomment.schema.variable import Variable

        full = f"{cls}:{name}" if cls else name
        self.versions[full] = self.versions.get(full, 0) + 1
        v = Variable(name=name, version=self.versions[full], class_name=cls, category=cat, comment=None,
                     session_id=self.session_id,
                     value=value if isinstance(value, str) else json.dumps(value, ensure_ascii=False),
                     **self._common())
        if meta:
            v.update_metadata(meta)
        self.net._driver.add_node(v)
        return v.full_node_id

    def latest(self, name: str, cls: str | None = None) -> str:
        """The newest version of ``cls:name``."""
        full = f"{cls}:{name}" if cls else name
        return f"{full}@{self.versions[full]}"

    def turn(self, dia_id: str, speaker: str, text: str, **meta: Any) -> str:
        """A message node named by its dia_id (``Speaker: text``)."""
        return self.var(dia_id, f"{speaker}: {text}", cat="message", speaker=speaker, **meta)

    def op(self, name: str, category: str, **meta: Any) -> str:
        """Start an operation (later edges belong to it), with its metadata ``meta``."""
        from smartcomment.schema.operation import OpRecord

        o = OpRecord(op_id=f"op-{next(self._ids):04d}", op_name=name, category=category, comment=None,
                     session_id=self.session_id, **self._common())
        if meta:
            o.update_metadata(meta)
        self.net._driver.add_operation(o)
        self.op_id = o.op_id
        return o.op_id

    def edges(self, sources: str | list[str], targets: str | list[str]) -> None:
        """Edges from every source to every target, made by the current op."""
        from smartcomment.schema.operation import OpEdge

        for s in [sources] if isinstance(sources, str) else sources:
            for t in [targets] if isinstance(targets, str) else targets:
                self.net._driver.add_edge(OpEdge(
                    edge_id=f"edge-{next(self._ids)}", session_id=self.session_id, op_id=self.op_id,
                    category=self.net._driver.get_operation(self.op_id).category, source_full_node_id=s,
                    target_full_node_id=t, comment=None, **self._common()))

    def none(self) -> str:
        """smartcomment's NONE sentinel (an op that wrote nothing points at it)."""
        from smartcomment.schema.session import Session
        from smartcomment.schema.variable import Variable

        if "COMMENT:NONE" not in self.versions:
            here = self.session_id
            self.net._driver.add_session(Session(session_id="__none__", session_name="NONE sentinel",
                                                 comment=None, category="sentinel", **self._common()))
            self.net._driver.add_node(Variable(name="COMMENT:NONE", version=1, value="NONE", category="sentinel",
                                               class_name=None, comment=None, session_id="__none__",
                                               **self._common()))
            self.versions["COMMENT:NONE"] = 1
            self.session_id = here
        return "COMMENT:NONE@1"

    def question(self, key: str, text: str, *, evidence: list[str] | None = None, **meta: Any) -> str:
        """The question node (class ``query``; its dataset evidence names in its metadata when given)."""
        if evidence is not None:
            meta["evidence"] = evidence
        return self.var(key, text, cls="query", cat="message & query", **meta)

    def answer(self, key: str, context: str, text: str, *, name: str = "qa.answer",
               category: str = "generation") -> str:
        """The answer op reading ``context`` and writing the prediction."""
        self.op(name, category)
        prediction = self.var(key, text, cls="prediction", cat="llm_response")
        self.edges(context, prediction)
        return prediction

    def judge(self, question: str, gold: str, prediction: str, *, right: bool = False) -> None:
        """MemBase's ``llm-judge`` op: question, golden answers and prediction → a score 0 or 1."""
        self.op("llm-judge", "evaluation")
        golden = self.var("golden_answers", gold, cls="golden_answers", cat="golden_answers")
        score = self.var("judge_score", "1.0" if right else "0.0", cls="judge_score", cat="evaluation")
        self.edges([question, golden, prediction], score)

    def document(self) -> dict[str, Any]:
        """The exported graph (``ExecNetwork.export_graph()``)."""
        return self.net.export_graph()


def blame_smartcomment(doc: dict[str, Any], question: str, gold: str, evidence: tuple[str, ...] = (),
                       date: str | None = None) -> tuple[str, str]:
    """(error type, the graph's own op_id) memtrace blames for one question of a smartcomment graph (the gold
    evidence dia_ids when given, else retrieved)."""
    from memopt.trace.memtracebench import from_memtrace

    G, _ = from_memtrace(doc, source="shape.json")
    case = next(c for c in G.graph["cases"] if c["question"] == question)
    seeded, pseudo = seed_evidence(G, question, gold, evidence)
    found = memtrace(FailedCase(G, case["case_id"], question, gold, seeded, "", 0, pseudo,
                                date or case.get("date")), LexicalJudge())
    return found.error_type, G.nodes[found.op_id]["sc_op_id"]


class Native:
    """One memopt evolution graph of a plug-in system (``operations``: op name → its declared stages)."""

    def __init__(self, conversation: str, operations: dict[str, list[str]],
                 sessions: list[str] | None = None) -> None:
        self.G = nx.DiGraph()
        self.conv = conversation
        self.clock = itertools.count(1)
        self.G.graph.update(schema_version=SCHEMA_VERSION, conversation=conversation, pipeline="plugin",
                            speakers={}, sessions=[{"index": i, "date_time": d} for i, d in
                                                   enumerate(sessions or [], start=1)], cases=[],
                            operations={name: {"kind": "llm", "stages": stages, "steered_by": []}
                                        for name, stages in operations.items()},
                            knobs={}, instructions={}, prompt_versions={}, lm=None, simulated=True)

    def _sources(self, reads: list[str]) -> list[str]:
        found: set[str] = set()
        for r in reads:
            d = self.G.nodes[r]
            found |= {d["name"].removeprefix("turn:")} if d["kind"] == "turn" else set(d.get("sources") or ())
        return sorted(found)

    def turn(self, dia_id: str, speaker: str, text: str, session: int) -> str:
        """A dialogue turn."""
        node = f"turn:{dia_id}@1"
        self.G.add_node(node, type="variable", kind="turn", name=f"turn:{dia_id}", version=1,
                        value={"speaker": speaker, "text": text, "session": session}, created=next(self.clock))
        return node

    def question(self, key: str, text: str) -> str:
        """The question node of a question key."""
        node = f"question:{self.conv}:{key}@1"
        self.G.add_node(node, type="variable", kind="question", name=f"question:{self.conv}:{key}", version=1,
                        value=text, created=next(self.clock))
        return node

    def op(self, node: str, operation: str, reads: list[str], writes: list[tuple[str, Any, dict[str, Any]]]
           ) -> list[str]:
        """An op reading ``reads`` and writing ``(variable id, value, attributes)`` (store units: ``action``)."""
        self.G.add_node(node, type="op", operation=operation, pipeline="plugin", start=next(self.clock),
                        output=[value for _, value, _ in writes] or None)
        self.G.add_edges_from(((r, node) for r in reads), rel="read")
        out = []
        for ref, value, attrs in writes:
            kind, _, rest = ref.partition(":")
            name, _, version = rest.rpartition("@")
            self.G.add_node(ref, type="variable", kind=kind, name=f"{kind}:{name}", version=int(version),
                            value=value, created=next(self.clock), sources=self._sources(reads),
                            derived_from=list(reads), **attrs)
            self.G.add_edge(node, ref, rel="write")
            out.append(ref)
        self.G.nodes[node]["end"] = next(self.clock)
        return out

    def case(self, key: str, question: str, gold: str, evidence: list[str], date: str | None = None) -> str:
        """Record a question of the graph (its answer op is written by the caller) and return its case id."""
        case_id = f"{self.conv}:{key}"
        self.G.graph["cases"].append({"case_id": case_id, "key": key, "question": question, "gold": gold,
                                      "evidence": evidence, "category": 0, **({"date": date} if date else {})})
        return case_id


def blame_native(G: nx.DiGraph, key: str, gold: str | None = None, evidence: tuple[str, ...] | None = None
                 ) -> tuple[str, str]:
    """(error type, op id) memtrace blames for one question of a memopt graph (its recorded gold and evidence
    unless given)."""
    case = next(c for c in G.graph["cases"] if c["key"] == key)
    gold = case["gold"] if gold is None else gold
    seeded, pseudo = seed_evidence(G, case["question"], gold, tuple(case["evidence"] if evidence is None
                                                                     else evidence))
    found = memtrace(FailedCase(G, case["case_id"], case["question"], gold, seeded, "", 0, pseudo,
                                case.get("date")), LexicalJudge())
    return found.error_type, found.op_id

"""A failed case on its evolution graph: what every attribution method starts from.

`FailedCase` ties one question (gold answer, evidence turns, prediction) to the graph of its
conversation and exposes the nodes methods need: the answer, the answer op, the context it read,
the op that wrote the context, the evidence turns. `Probe` asks the judge whether a variable holds
the needed information, counting judge calls and caching verdicts.

"Holds the information" is `memopt.attribution.probe.Probe`'s rule (re-exported here): every piece the gold
needs, stated by the variable's text as the judge reads it, or the evidence turns verbatim for raw copies of the
conversation (turns, chunks, contexts made of turns), because an answer step given the raw evidence can answer.

What an op is comes from its system's declaration recorded in the graph (`op_stages`,
`steering_ops`), never from its name: the retrieval ops are the case's ops of stage ``retrieval``
that steer no other op (``rewrite_query`` steers ``retrieve``), the extractors are ops of stage
``extraction`` that read an evidence turn and wrote content. Memory content (`is_content`) is any
store-unit version, or a variable an extraction op wrote (a fact).
"""

from __future__ import annotations

import datetime as dt
import json
import re
import weakref
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import networkx as nx

from memopt.attribution.evidence import seed_evidence, turn_day
from memopt.attribution.normalise import item_day, plain
from memopt.attribution.probe import Probe
from memopt.core.text import parse_session_date
from memopt.data.model import NOT_MENTIONED
from memopt.judge.metrics import is_abstention
from memopt.trace.graph import answer_of, latest, op_stages, ops_in_order, steering_ops, variables

__all__ = ["FailedCase", "Probe", "pseudo_discount", "text_of", "failed_cases", "is_failed", "produces_content",
           "is_content", "RAW_KINDS"]

RAW_KINDS = frozenset({"turn", "chunk", "context"})
_NAME = re.compile(r"\b[A-Z][a-z]+(?:'s)?\b")
_NOT_NAMES = frozenset("what when where who whom which why how does did is are was were has have do can would will "
                       "i the a an".split())
_CONTENT_FIELDS = frozenset({"facts", "summary", "updated_profile"})
_NOT_CONTENT = frozenset({"question", "prompt", "query", "gold", "judgement"})


def text_of(value: Any) -> str:
    """A variable's value as text (JSON for structured values)."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


@dataclass
class FailedCase:
    """One failed question on its conversation's graph."""

    G: nx.DiGraph
    case_id: str
    question: str
    gold: str
    evidence: tuple[str, ...]
    prediction: str = ""
    category: int = 0
    pseudo_evidence: bool = False
    date: str | None = None

    @property
    def key(self) -> str:
        """The question key used in op and variable ids (``q12``)."""
        return self.case_id.split(":")[-1]

    @cached_property
    def information(self) -> str:
        """What a variable must state to help: the gold answer, about the people and things the question names."""
        names = [w.removesuffix("'s") for w in _NAME.findall(self.question)[1:] if w.lower() not in _NOT_NAMES]
        return f"{self.gold} — {' '.join(dict.fromkeys(names))}" if names else self.gold

    @property
    def unanswerable(self) -> bool:
        """Whether the gold answer is an abstention (an adversarial question)."""
        return self.gold == NOT_MENTIONED or is_abstention(self.gold)

    @cached_property
    def answer_var(self) -> str:
        """The answer variable of this case."""
        node = answer_of(self.G, self.key)
        if node is None:
            raise KeyError(f"{self.case_id}: no answer variable in the graph of {self.G.graph.get('conversation')}")
        return node

    @cached_property
    def answer_op(self) -> str:
        """The operation that wrote the answer."""
        return next(self.G.predecessors(self.answer_var))

    @cached_property
    def response_ops(self) -> list[str]:
        """The ops that wrote the answer from its context, oldest first: the answer op, and each op of the question
        whose written text (not a selection of what it read: a chain of thought, a draft, a plan) the answer op
        reads, directly or through another such op."""
        G, mine = self.G, set(self.query_ops)
        found, frontier = [self.answer_op], [self.answer_op]
        while frontier:
            for v in G.predecessors(frontier.pop()):
                if G.nodes[v]["kind"] in ("question", "prompt", "context"):
                    continue
                for w in G.predecessors(v):
                    if w in mine and w not in found and _writes_text(G, w):
                        found.append(w)
                        frontier.append(w)
        return sorted(found, key=lambda n: G.nodes[n]["start"])

    @cached_property
    def context_var(self) -> str | None:
        """The context variable the answer's first op (`response_ops`) read."""
        return next((v for v in self.G.predecessors(self.response_ops[0]) if self.G.nodes[v]["kind"] == "context"),
                    None)

    @cached_property
    def context_vars(self) -> list[str]:
        """What the answer's first op read as its context: the context variable, else the content it read directly
        (a long-context buffer, units, a prompt an op of the question filled in), never the question, a query or a
        prompt template."""
        if self.context_var is not None:
            return [self.context_var]
        mine = set(self.query_ops)
        return [v for v in self.G.predecessors(self.response_ops[0]) if self.G.nodes[v]["kind"] not in _NOT_CONTENT
                or (self.G.nodes[v]["kind"] == "prompt" and any(w in mine for w in self.G.predecessors(v)))]

    @cached_property
    def context_op(self) -> str | None:
        """The operation that wrote the context (retrieve, fuse, truncate)."""
        if self.context_var is None:
            return None
        return next(self.G.predecessors(self.context_var), None)

    @cached_property
    def query_ops(self) -> list[str]:
        """This case's query-time operations (rewrite_query, retrieve, fuse, truncate, answer), oldest first."""
        suffix = f":{self.G.graph.get('conversation')}:{self.key}"
        return [n for n in ops_in_order(self.G) if n.endswith(suffix)]

    @cached_property
    def retrieval_ops(self) -> list[str]:
        """Query-time ops between the store and the context (retrieve, fuse, rerank, truncate), oldest first: ops
        of stage ``retrieval`` that steer no other op; whatever its name or declared stage, an op of the question
        before its answer that read stored or retrieved content and wrote what the answer op read (itself or
        through other ops of the question: a rerank, a top-n cut, a window fitting); in a graph memopt did not
        make, any op of the question before its answer that declares no stage."""
        G = self.G
        steering = steering_ops(G)
        declared = G.graph.get("operations") or {}
        start = G.nodes[self.answer_op]["start"]
        feeding = nx.ancestors(G, self.answer_op)

        def narrows(n: str) -> bool:
            return n in feeding and any(G.nodes[v]["kind"] not in _NOT_CONTENT for v in G.predecessors(n))

        answering = set(self.response_ops)
        return [n for n in self.query_ops if G.nodes[n]["operation"] not in steering and n not in answering
                and ("retrieval" in op_stages(G, n) or (G.nodes[n]["start"] < start and (
                    narrows(n) or (G.nodes[n]["operation"] not in declared and not op_stages(G, n)))))]

    @cached_property
    def evidence_turns(self) -> list[str]:
        """The evidence turn variables present in the graph."""
        return [n for d in self.evidence if (n := latest(self.G, f"turn:{d}")) is not None]

    @cached_property
    def evidence_texts(self) -> list[str]:
        """The text of each evidence turn, as prompts write it ('Speaker: text')."""
        out = []
        for node in self.evidence_turns:
            value = self.G.nodes[node]["value"]
            out.append(f"{value['speaker']}: {value['text']}")
        return out

    @cached_property
    def evidence_words(self) -> list[str]:
        """The words of each evidence turn as any copy of it holds them (with 'Speaker: ' when they are short)."""
        out = []
        for node in self.evidence_turns:
            value = self.G.nodes[node]["value"]
            text = str(value["text"]).strip()
            out.append(text if len(text) >= 24 else f"{value['speaker']}: {text}")
        return out

    @cached_property
    def turn_words(self) -> dict[str, str]:
        """Evidence turn variable → its words as a copy of it holds them."""
        return dict(zip(self.evidence_turns, self.evidence_words, strict=True))

    def day_of(self, node: str) -> dt.date | None:
        """The day a variable was said or written: a turn's own date or its session's (`turn_day`); another
        variable's own date (its value's or metadata's timestamp), else the session date it was stored with, else
        the day of the latest turn it derives from (a unit a job wrote with no date of its own)."""
        G = self.G
        d = G.nodes[node]
        if d.get("kind") == "turn":
            return turn_day(G, node)
        value = d.get("value")
        own = item_day(value if isinstance(value, dict) else {}, d.get("metadata"), d.get("session_date"))
        if own is not None:
            return own
        refs = {*(d.get("sources") or ()), *(r.removeprefix("turn:") for r in d.get("derived_from") or ()
                                             if r.startswith("turn:"))}
        days = [turn_day(G, t) for dia in refs if (t := latest(G, f"turn:{dia}")) is not None]
        return max((day for day in days if day is not None), default=None)

    @cached_property
    def asked(self) -> dt.date | None:
        """The day the question was asked, when known."""
        return parse_session_date(self.date) if self.date else None

    @cached_property
    def extractors(self) -> list[str]:
        """Ingest ops that read an evidence turn and wrote content (extract, facts, episode, chunk), oldest first."""
        G = self.G
        found = {op for t in self.evidence_turns for op in G.successors(t)
                 if "extraction" in op_stages(G, op) and produces_content(G.nodes[op])}
        return sorted(found, key=lambda n: G.nodes[n]["start"])

    def stored(self, kinds: frozenset[str] | None = None) -> list[str]:
        """Store-unit versions (they have an ``action``; of the given kinds) derived from the evidence turns,
        oldest first."""
        return [v for v in self.derived(kinds) if "action" in self.G.nodes[v]]

    def derived(self, kinds: frozenset[str] | None = None) -> list[str]:
        """Variables (of the given kinds) whose recorded provenance includes an evidence turn, oldest first."""
        return self.derived_from(self.evidence_turns, kinds)

    def derived_from(self, turns: list[str], kinds: frozenset[str] | None = None) -> list[str]:
        """Variables (of the given kinds) whose recorded provenance includes one of these turn variables, oldest
        first."""
        index = _provenance(self.G)
        found = {v for t in turns for v in index.get(self.G.nodes[t]["name"].removeprefix("turn:"), ())}
        order = _creation(self.G)
        return sorted((v for v in found if kinds is None or self.G.nodes[v]["kind"] in kinds), key=order.__getitem__)

    def ops_before(self, op: str) -> list[str]:
        """Operations that started before ``op``, oldest first."""
        start = self.G.nodes[op]["start"]
        return [n for n in ops_in_order(self.G) if self.G.nodes[n]["start"] < start]


_PROVENANCE: weakref.WeakKeyDictionary[nx.DiGraph, tuple[int, dict[str, set[str]], dict[str, int]]] = \
    weakref.WeakKeyDictionary()


def _index(G: nx.DiGraph) -> tuple[dict[str, set[str]], dict[str, int]]:
    """dia_id → the variables derived from it, and variable → its place in creation order (cached on the graph
    until it changes size)."""
    cached = _PROVENANCE.get(G)
    if cached is None or cached[0] != G.number_of_nodes():
        by_turn: dict[str, set[str]] = {}
        for node in variables(G):
            d = G.nodes[node]
            refs = {r.removeprefix("turn:") for r in d.get("derived_from") or () if r.startswith("turn:")}
            for dia in {*(d.get("sources") or ()), *refs}:
                by_turn.setdefault(dia, set()).add(node)
        cached = (G.number_of_nodes(), by_turn, {n: i for i, n in enumerate(variables(G))})
        _PROVENANCE[G] = cached
    return cached[1], cached[2]


def _provenance(G: nx.DiGraph) -> dict[str, set[str]]:
    return _index(G)[0]


def _creation(G: nx.DiGraph) -> dict[str, int]:
    return _index(G)[1]


def _lines(G: nx.DiGraph, nodes: list[str]) -> list[str]:
    """The lines of three words or more of some variables' values (and of the units a result list names)."""
    found = [" ".join(line.split()) for v in nodes for u in (v, *(G.nodes[v].get("refs") or ()))
             for line in plain(G.nodes[u].get("value")).splitlines()]
    return [line for line in found if len(line.split()) >= 3]


_RETRIEVING = re.compile(r"compress|context|summar|select|filter|rerank|retriev|search|pack|trunc", re.IGNORECASE)


def _writes_text(G: nx.DiGraph, op: str) -> bool:
    """Whether an op wrote text of its own rather than a selection of what it read (a rerank, a cut) or a prompt
    filled in with it: no result list naming units, most of its lines found in none of its inputs, and most of
    its inputs' lines found nowhere in what it wrote; and neither the op nor what it wrote is named for making a
    context (a compression, a summary of the hits, a filter: the retrieval side, however freely it writes)."""
    written = list(G.successors(op))
    if not written or any(G.nodes[w].get("refs") for w in written):
        return False
    d = G.nodes[op]
    names = [d.get("sc_op_name"), d.get("sc_category"), *(G.nodes[w].get(k) for w in written
                                                          for k in ("sc_category", "sc_class"))]
    if any(_RETRIEVING.search(str(n)) for n in names if n):
        return False
    lines, read = _lines(G, written), _lines(G, list(G.predecessors(op)))
    wrote, took = " ".join(lines), " ".join(read)
    return (bool(lines) and sum(line in took for line in lines) < len(lines) / 2
            and sum(line in wrote for line in read) < max(1, len(read)) / 2)


PSEUDO_EVIDENCE_FACTOR = 0.7


def pseudo_discount(case: FailedCase, confidence: float) -> float:
    """The confidence an attribution states (3 decimals): lowered when the case's evidence was found by words."""
    return round(confidence * PSEUDO_EVIDENCE_FACTOR if case.pseudo_evidence else confidence, 3)


def failed_cases(G: nx.DiGraph, results: dict[str, dict[str, Any]]) -> list[FailedCase]:
    """The failed cases of one graph, from ``results`` (case_id → results.json case) that the graph answered.

    Evidence is seeded by `memopt.attribution.evidence.seed_evidence` (gold dia_ids, else bm25 pseudo-evidence).
    """
    out = []
    for case in G.graph.get("cases", []):
        result = results.get(case["case_id"])
        if result is None or not is_failed(result) or answer_of(G, case["key"]) is None:
            continue
        gold = str(case.get("gold") or "")
        evidence, pseudo = seed_evidence(G, case["question"], gold, tuple(case.get("evidence") or ()))
        category = case.get("category")  # a name (not a number) in a graph imported from MemTraceBench
        out.append(FailedCase(G, case["case_id"], case["question"], gold, evidence,
                              result.get("prediction", ""), category if isinstance(category, int) else 0, pseudo,
                              case.get("date") or case.get("question_date")))
    return out


def is_content(G: nx.DiGraph, node: str) -> bool:
    """Whether a variable is memory content: a store-unit version, or a value an extraction op wrote (a fact)."""
    return "action" in G.nodes[node] or any("extraction" in op_stages(G, op) for op in G.predecessors(node))


def produces_content(op: dict[str, Any]) -> bool:
    """Whether an op's output carries content (facts, a summary, a profile, chunks), not only structure."""
    output = op.get("output")
    return isinstance(output, list) or (isinstance(output, dict) and bool(set(output) & _CONTENT_FIELDS))


def is_failed(result: dict[str, Any]) -> bool:
    """Whether a results.json case counts as failed (no error; judged wrong, else F1 below 0.5)."""
    if result.get("error"):
        return False
    if result.get("correct") is not None:
        return not result["correct"]
    return float(result.get("f1", 0.0)) < 0.5

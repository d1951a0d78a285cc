"""Mem0-style memory: extract facts per session, decide ADD / UPDATE / DELETE / NONE against
similar memories, keep them in a versioned store; answer from the top-k retrieved memories.

Ops: ``extract`` (LLM) → ``search_similar`` (up to ``similar_k`` live memories per new fact) →
``update`` (LLM, Mem0's schema ``{"memory": [{"id", "text", "event", "old_memory"}]}``, ids
renumbered 0..n-1 per call as Mem0 does) → store writes attributed to the ``update`` op.
Query: ``retrieve`` (bm25 over live memories, ``top_k``) → ``answer`` (LLM).
"""

from __future__ import annotations

import json
from functools import partial
from typing import Any

import dspy

from memopt.data.model import Conversation, Session
from memopt.lm.signatures import AnswerQuestion, DecideMemoryUpdates, ExtractFacts
from memopt.systems import MemorySystem, OpSpec, memory_system
from memopt.systems.helpers import StoreMemory, best_sources, item_line, session_date, turn_lines
from memopt.systems.ops import produce
from memopt.systems.store import MemoryStore

__all__ = ["Mem0"]



@memory_system("mem0")
class Mem0(MemorySystem):
    """Mem0-style fact memory with LLM update decisions."""

    operations = (
        OpSpec("extract", "llm", "ingest", "extracts the facts worth remembering from one session's turns",
               ExtractFacts, stages="extraction"),
        OpSpec("search_similar", "tool", "ingest", "finds the live memories most similar to each new fact",
               stages="retrieval", steered_by="similar_k"),
        OpSpec("update", "llm", "ingest", "decides ADD, UPDATE, DELETE or NONE for new facts against similar "
               "memories (memory update decision)", DecideMemoryUpdates, stages=("update", "deletion"),
               steered_by="search_similar"),
        OpSpec("retrieve", "tool", "query", "bm25 search of the live memories for the question", stages="retrieval",
               steered_by="top_k"),
        OpSpec("answer", "llm", "query", "answers the question from the retrieved memories", AnswerQuestion,
               stages="response"),
    )
    defaults = {"top_k": 10, "similar_k": 5}
    ingest_knobs = ("similar_k",)

    def build_memory(self, conversation: Conversation) -> StoreMemory:
        """Ingest the sessions in order; a session's extraction reads its turns only, so it may start early."""
        memory = StoreMemory(conversation.sample_id, MemoryStore(name="memory", id_prefix="m"))
        with self.ahead() as start:
            extractions = [start(partial(self._extract, memory.sample_id, s)) for s in conversation.sessions]
            for session, extracted in zip(conversation.sessions, extractions, strict=True):
                self._ingest_session(memory, session, extracted())
                memory.session_seq[session.index] = memory.store.seq
        return memory

    def _extract(self, sample_id: str, session: Session) -> dict[str, Any]:
        return self.llm("extract", f"{sample_id}:S{session.index}", reads=[f"turn:{t.dia_id}" for t in session.turns],
                        session_date=session.date_time, conversation=turn_lines(session.turns))

    def _ingest_session(self, memory: StoreMemory, session: Session, out: dict[str, Any]) -> None:
        key = f"{memory.sample_id}:S{session.index}"
        facts = [f.strip() for f in out.get("facts") or [] if isinstance(f, str) and f.strip()]
        if not facts:
            return
        sources = [best_sources(f, session.turns) for f in facts]
        fact_refs = [produce(f"fact:{key}.{i}", fact, [f"turn:{d}" for d in src], op=self.op_id("extract", key))
                     for i, (fact, src) in enumerate(zip(facts, sources, strict=True))]
        similar = self.tool("search_similar", key, _similar, store=memory.store, facts=facts,
                            k=self.knobs["similar_k"])
        existing = [memory.store.get(unit_id) for unit_id in similar]
        decision = self.llm(
            "update", key, reads=[u.ref for u in existing] + fact_refs,
            existing_memories=json.dumps([{"id": str(i), "text": u.text} for i, u in enumerate(existing)]),
            new_facts=facts,
        )
        self._apply(memory.store, decision.get("memory") or [], existing, facts, sources, session,
                    self.op_id("update", key))

    def _apply(self, store: MemoryStore, events: list[Any], existing: list, facts: list[str],
               sources: list[list[str]], session: Session, op_id: str) -> None:
        by_local_id = {str(i): u.unit_id for i, u in enumerate(existing)}
        date = session_date(session)
        for event in events:
            if not isinstance(event, dict):
                continue
            kind, text = event.get("event"), str(event.get("text") or "").strip()
            source = _source_of(text, facts, sources) or best_sources(text, session.turns)
            target = by_local_id.get(str(event.get("id")))
            if kind == "ADD" and text:
                store.add(text, session_date=date, source=source, op_id=op_id)
            elif kind == "UPDATE" and target and text and not store.get(target).deleted:
                store.update(target, text, source=source, session_date=date, op_id=op_id)
            elif kind == "DELETE" and target and not store.get(target).deleted:
                store.delete(target, op_id=op_id)

    def respond(self, state: StoreMemory, question: str, *, as_of: int | None, key: str) -> dspy.Prediction:
        """Retrieve the top-k memories and answer."""
        okey = f"{state.sample_id}:{key}"
        question_ref = produce(f"question:{okey}", question)
        seq = state.session_seq.get(as_of) if as_of is not None else None
        hits = self.tool("retrieve", okey, _retrieve, store=state.store, query=question, k=self.knobs["top_k"],
                         as_of=seq)
        context = "\n".join(item_line(h["date"], h["text"]) for h in hits)
        refs = [h["ref"] for h in hits]
        return self.answer_from(okey, question, question_ref, context, refs, "retrieve", memory=refs)


def _similar(store: MemoryStore, facts: list[str], k: int) -> list[str]:
    """Unit ids of the live memories most similar to any new fact (union, best first)."""
    ids: list[str] = []
    for fact in facts:
        for unit, _ in store.search(fact, k=k):
            if unit.unit_id not in ids:
                ids.append(unit.unit_id)
    return ids


def _retrieve(store: MemoryStore, query: str, k: int, as_of: int | None) -> list[dict[str, Any]]:
    """The top-k live memories for a query, as plain data."""
    return [{"ref": u.ref, "text": u.text, "date": u.session_date, "score": s}
            for u, s in store.search(query, k=k, as_of=as_of)]


def _source_of(text: str, facts: list[str], sources: list[list[str]]) -> list[str]:
    for fact, source in zip(facts, sources, strict=True):
        if fact == text:
            return source
    return []

"""RAG over the raw conversation: turns grouped into chunks, bm25 retrieval, an answer step.

Ops: ``chunk`` (tool: ``chunk_size`` consecutive turns of one session per chunk, each line with
speaker and session date) → stored as chunk units. Query: ``rewrite_query`` (LLM) → ``retrieve``
(tool: bm25 over chunks, ``top_k``) → ``answer`` (LLM).
"""

from __future__ import annotations

from typing import Any

import dspy

from memopt.data.model import Conversation, Session
from memopt.lm.signatures import AnswerQuestion, RewriteQuery
from memopt.systems import MemorySystem, OpSpec, memory_system
from memopt.systems.helpers import StoreMemory, item_line, session_date
from memopt.systems.ops import produce
from memopt.systems.store import MemoryStore

__all__ = ["RAG"]



@memory_system("rag")
class RAG(MemorySystem):
    """Retrieval-augmented generation over conversation chunks."""

    operations = (
        OpSpec("chunk", "tool", "ingest", "groups consecutive turns of a session into chunks", stages="extraction",
               steered_by="chunk_size"),
        OpSpec("rewrite_query", "llm", "query", "rewrites the question into a search query", RewriteQuery,
               stages="retrieval"),
        OpSpec("retrieve", "tool", "query", "bm25 search of the chunks for the query", stages="retrieval",
               steered_by=("rewrite_query", "top_k")),
        OpSpec("answer", "llm", "query", "answers the question from the retrieved chunks", AnswerQuestion,
               stages="response"),
    )
    defaults = {"top_k": 5, "chunk_size": 2}
    ingest_knobs = ("chunk_size",)

    def build_memory(self, conversation: Conversation) -> StoreMemory:
        """Chunk every session and store the chunks."""
        memory = StoreMemory(conversation.sample_id, MemoryStore(name="chunk", id_prefix="c"))
        for session in conversation.sessions:
            key = f"{conversation.sample_id}:S{session.index}"
            chunks = self.tool("chunk", key, _chunks, session=session, size=self.knobs["chunk_size"],
                               reads=[f"turn:{t.dia_id}" for t in session.turns])
            for chunk in chunks:
                memory.store.add(chunk["text"], session_date=session_date(session), source=chunk["turns"],
                                 op_id=self.op_id("chunk", key))
            memory.session_seq[session.index] = memory.store.seq
        return memory

    def respond(self, state: StoreMemory, question: str, *, as_of: int | None, key: str) -> dspy.Prediction:
        """Rewrite the question, retrieve chunks, answer."""
        okey = f"{state.sample_id}:{key}"
        question_ref = produce(f"question:{okey}", question)
        query = str(self.llm("rewrite_query", okey, reads=[question_ref], question=question).get("query") or question)
        query_ref = produce(f"query:{okey}", query, [question_ref], op=self.op_id("rewrite_query", okey))
        seq = state.session_seq.get(as_of) if as_of is not None else None
        hits = self.tool("retrieve", okey, _retrieve, store=state.store, query=query, k=self.knobs["top_k"],
                         as_of=seq, reads=[query_ref])
        context = "\n".join(line for h in hits for line in h["lines"])
        refs = [h["ref"] for h in hits]
        return self.answer_from(okey, question, question_ref, context, refs, "retrieve", query=query, memory=refs)


def _chunks(session: Session, size: int) -> list[dict[str, Any]]:
    """Consecutive turns of one session, ``size`` per chunk, one 'Speaker: text' line each."""
    turns = list(session.turns)
    out = []
    for start in range(0, len(turns), max(1, size)):
        group = turns[start: start + max(1, size)]
        out.append({"text": "\n".join(f"{t.speaker}: {t.text}" for t in group), "turns": [t.dia_id for t in group]})
    return out


def _retrieve(store: MemoryStore, query: str, k: int, as_of: int | None) -> list[dict[str, Any]]:
    """The top-k chunks for a query, each as dated context lines."""
    return [{"ref": u.ref, "lines": [item_line(u.session_date, line) for line in u.text.splitlines()], "score": s}
            for u, s in store.search(query, k=k, as_of=as_of)]

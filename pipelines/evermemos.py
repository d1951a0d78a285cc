"""EverMemOS-style memory: MemCells with episodes, atomic facts and speaker profiles; hybrid recall.

Per session: ``segment`` (LLM: turns that open a new MemCell) → per MemCell ``episode`` (LLM
summary) and ``facts`` (LLM atomic facts), both stored as versioned units → per speaker
``profile`` (LLM update of that speaker's profile unit). Query: ``retrieve`` (tool: bm25 over
episodes and over facts) → ``fuse`` (tool: reciprocal rank fusion, k = 60, keep ``top_k``) →
``answer`` (LLM) with the fused items and the profiles of the people the question names (added by ``fuse``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Any

import dspy

from memopt.data.model import Conversation, Session, Turn
from memopt.lm.signatures import AnswerQuestion, ExtractFacts, SegmentConversation, SummarizeSegment, UpdateProfile
from memopt.systems import MemorySystem, OpSpec, memory_system
from memopt.systems.helpers import best_sources, item_line, session_date, turn_lines
from memopt.systems.ops import produce
from memopt.systems.store import MemoryStore

__all__ = ["EverMemOS", "RRF_K"]

RRF_K = 60


@dataclass
class EverMemory:
    """Episodes, facts and profiles of one conversation."""

    sample_id: str
    episodes: MemoryStore
    facts: MemoryStore
    profiles: MemoryStore
    profile_of: dict[str, str] = field(default_factory=dict)  # speaker -> profile unit id
    session_seq: dict[int, tuple[int, int, int]] = field(default_factory=dict)


@memory_system("evermemos")
class EverMemOS(MemorySystem):
    """MemCell-based memory with hybrid (bm25 + RRF) recall."""

    operations = (
        OpSpec("segment", "llm", "ingest", "segments a session into MemCells (topic boundaries)", SegmentConversation,
               stages="extraction"),
        OpSpec("episode", "llm", "ingest", "summarizes each MemCell as an episode narrative", SummarizeSegment,
               stages="extraction", steered_by="segment"),
        OpSpec("facts", "llm", "ingest", "extracts atomic facts from each MemCell", ExtractFacts,
               stages="extraction", steered_by="segment"),
        OpSpec("profile", "llm", "ingest", "maintains each speaker's profile from the new facts", UpdateProfile,
               stages="extraction"),
        OpSpec("retrieve", "tool", "query", "bm25 search of the episodes and of the facts", stages="retrieval",
               steered_by="top_k"),
        OpSpec("fuse", "tool", "query", "reciprocal rank fusion of the two result lists", stages="retrieval",
               steered_by="top_k"),
        OpSpec("answer", "llm", "query", "answers the question from the fused memories", AnswerQuestion,
               stages="response"),
    )
    defaults = {"top_k": 8}

    def build_memory(self, conversation: Conversation) -> EverMemory:
        """Ingest the sessions in order; segmenting a session reads its turns only, so it may start early."""
        memory = EverMemory(conversation.sample_id, MemoryStore(name="episode", id_prefix="e"),
                            MemoryStore(name="fact", id_prefix="f"), MemoryStore(name="profile", id_prefix="p"))
        with self.ahead() as start:
            segments = [start(partial(self._segment, memory.sample_id, s)) for s in conversation.sessions]
            for session, segmented in zip(conversation.sessions, segments, strict=True):
                self._ingest_session(memory, session, segmented(), (conversation.speaker_a, conversation.speaker_b))
                memory.session_seq[session.index] = (memory.episodes.seq, memory.facts.seq, memory.profiles.seq)
        return memory

    def _segment(self, sample_id: str, session: Session) -> dict[str, Any]:
        return self.llm("segment", f"{sample_id}:S{session.index}", reads=[f"turn:{t.dia_id}" for t in session.turns],
                        conversation=turn_lines(session.turns, ids=True))

    def _read_cell(self, op: str, ckey: str, session: Session, cell: list[Turn]) -> dict[str, Any]:
        return self.llm(op, ckey, reads=[f"turn:{t.dia_id}" for t in cell], session_date=session.date_time,
                        conversation=turn_lines(cell))

    def _ingest_session(self, memory: EverMemory, session: Session, out: dict[str, Any],
                        speakers: tuple[str, str]) -> None:
        """Store each MemCell's episode and facts (their LLM calls read the cell only, so they may start early),
        then update the speakers' profiles."""
        key = f"{memory.sample_id}:S{session.index}"
        date = session_date(session)
        session_facts: list[str] = []
        cells = _cells(session.turns, out.get("boundaries") or [])
        with self.ahead() as start:
            reads = [(start(partial(self._read_cell, "episode", f"{key}.M{j}", session, cell)),
                      start(partial(self._read_cell, "facts", f"{key}.M{j}", session, cell)))
                     for j, cell in enumerate(cells)]
            for j, (cell, (episode, facts)) in enumerate(zip(cells, reads, strict=True)):
                ckey = f"{key}.M{j}"
                summary = str(episode().get("summary") or "").strip()
                if summary:
                    memory.episodes.add(summary, session_date=date, source=[t.dia_id for t in cell],
                                        op_id=self.op_id("episode", ckey))
                for fact in facts().get("facts") or []:
                    if isinstance(fact, str) and fact.strip():
                        memory.facts.add(fact.strip(), session_date=date, source=best_sources(fact, cell),
                                         op_id=self.op_id("facts", ckey))
                        session_facts.append(fact.strip())
        if session_facts:
            for speaker in speakers:
                self._update_profile(memory, speaker, session_facts, key, date)

    def _update_profile(self, memory: EverMemory, speaker: str, facts: list[str], key: str, date: str) -> None:
        unit_id = memory.profile_of.get(speaker)
        current = memory.profiles.get(unit_id) if unit_id else None
        pkey = f"{key}.{speaker}"
        out = self.llm("profile", pkey, reads=[current.ref] if current else [], speaker=speaker,
                       profile=current.text if current else "", facts=facts)
        text = str(out.get("updated_profile") or "").strip()
        if not text or (current and text == current.text):
            return
        if current is None:
            memory.profile_of[speaker] = memory.profiles.add(text, speaker=speaker, session_date=date,
                                                            op_id=self.op_id("profile", pkey)).unit_id
        else:
            memory.profiles.update(current.unit_id, text, op_id=self.op_id("profile", pkey))

    def respond(self, state: EverMemory, question: str, *, as_of: int | None, key: str) -> dspy.Prediction:
        """Hybrid recall, fusion, answer."""
        okey = f"{state.sample_id}:{key}"
        question_ref = produce(f"question:{okey}", question)
        seqs = state.session_seq.get(as_of) if as_of is not None else None
        k = self.knobs["top_k"]
        ranked = self.tool("retrieve", okey, _retrieve, memory=state, query=question, k=2 * k, seqs=seqs,
                           reads=[question_ref])
        profiles = _profiles(state, question, seqs)
        found = [h["ref"] for h in ranked["episodes"] + ranked["facts"] + profiles]
        fused = self.tool("fuse", okey, _fuse, lists=[ranked["episodes"], ranked["facts"]], k=k, keep=profiles,
                          reads=found)
        context = "\n".join(item_line(h["date"], h["text"]) for h in fused)
        refs = [h["ref"] for h in fused]
        return self.answer_from(okey, question, question_ref, context, refs, "fuse", memory=refs)


def _cells(turns: tuple[Turn, ...], boundaries: list[Any]) -> list[list[Turn]]:
    """Split turns at the boundary dia_ids (the first turn always opens a cell)."""
    starts = {str(b).strip() for b in boundaries}
    cells: list[list[Turn]] = []
    for n, turn in enumerate(turns):
        if n == 0 or turn.dia_id in starts:
            cells.append([])
        cells[-1].append(turn)
    return cells


def _hits(store: MemoryStore, query: str, k: int, as_of: int | None) -> list[dict[str, Any]]:
    return [{"ref": u.ref, "text": u.text, "date": u.session_date} for u, _ in store.search(query, k=k, as_of=as_of)]


def _retrieve(memory: EverMemory, query: str, k: int, seqs: tuple[int, int, int] | None) -> dict[str, list]:
    """bm25 top-k over episodes and over facts."""
    return {"episodes": _hits(memory.episodes, query, k, seqs[0] if seqs else None),
            "facts": _hits(memory.facts, query, k, seqs[1] if seqs else None)}


def _fuse(lists: list[list[dict[str, Any]]], k: int, keep: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Reciprocal rank fusion: score = sum of 1 / (RRF_K + rank); the top ``k`` items, then ``keep`` (profiles)."""
    scores: dict[str, float] = {}
    items: dict[str, dict[str, Any]] = {}
    for ranked in lists:
        for rank, item in enumerate(ranked, start=1):
            scores[item["ref"]] = scores.get(item["ref"], 0.0) + 1.0 / (RRF_K + rank)
            items.setdefault(item["ref"], item)
    order = sorted(scores, key=lambda ref: -scores[ref])
    return [items[ref] for ref in order[:k]] + keep


def _profiles(memory: EverMemory, question: str, seqs: tuple[int, int, int] | None) -> list[dict[str, Any]]:
    """Profile units of the speakers the question names, as of the requested session."""
    out = []
    for unit in memory.profiles.live(as_of=seqs[2] if seqs else None):
        if unit.speaker and unit.speaker in question:
            out.append({"ref": unit.ref, "text": unit.text.replace("\n", "; "), "date": unit.session_date})
    return out

"""A summary-buffer memory: a running summary of the conversation, plus its newest turns verbatim.

Ingest, per session: ``summarize`` (LLM) writes notes on the session's turns → ``compress`` (tool)
appends them, dated, to the conversation's running summary (one unit of a versioned store) and keeps
the summary within ``summary_budget`` tokens (≈ 4 characters each) by dropping its oldest sentences.
Query: ``recall`` (tool) takes the summary as it was after the question's session and the last
``buffer_turns`` turns verbatim → ``answer`` (LLM).

memopt knows nothing about this module: the package's entry point
(``memopt.memory_systems: summary_buffer``) makes ``memopt run -p summary_buffer`` find it, and the
`OpSpec` declarations tell attribution and the optimizer what each op is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dspy

from memopt.data.model import Conversation, Session
from memopt.lm.signatures import AnswerQuestion
from memopt.systems import MemoryStore, MemorySystem, OpSpec, memory_system, produce
from memopt.systems.helpers import item_line, session_date, turn_lines

__all__ = ["SummaryBuffer", "SummarizeSession"]

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_DATED = re.compile(r"^(\[[^\]]*\] )?(.*)$")


class SummarizeSession(dspy.Signature):
    """Summarise one session of a conversation as notes for a running summary."""

    session_date: str = dspy.InputField(desc="date of the session")
    conversation: str = dspy.InputField(desc="one turn per line, 'Speaker: text'")
    summary: str = dspy.OutputField(desc="notes on the session, a few short sentences")


@dataclass
class SummaryMemory:
    """The running summary of one conversation (a store unit), its dated turns, and the store's clock per session."""

    sample_id: str
    store: MemoryStore
    turns: list[tuple[int, str, str]] = field(default_factory=list)  # (session index, dia_id, dated line)
    unit_id: str | None = None
    session_seq: dict[int, int] = field(default_factory=dict)


@memory_system("summary_buffer")
class SummaryBuffer(MemorySystem):
    """A running summary within a token budget, and the newest turns verbatim."""

    operations = (
        OpSpec("summarize", "llm", "ingest", "writes notes on one session's turns for the running summary",
               SummarizeSession, stages="extraction"),
        OpSpec("compress", "tool", "ingest", "appends the notes to the running summary and drops its oldest "
               "sentences beyond the token budget", stages="update", steered_by="summary_budget"),
        OpSpec("recall", "tool", "query", "the running summary as of the question and the newest turns verbatim",
               stages="retrieval", steered_by="buffer_turns"),
        OpSpec("answer", "llm", "query", "answers the question from the summary and the newest turns",
               AnswerQuestion, stages="response"),
    )
    defaults = {"summary_budget": 150, "buffer_turns": 6}
    ingest_knobs = ("summary_budget",)
    seed_prompts = Path(__file__).resolve().parent / "prompts"

    def build_memory(self, conversation: Conversation) -> SummaryMemory:
        """Summarise every session into the running summary, in order."""
        memory = SummaryMemory(conversation.sample_id, MemoryStore(name="summary", id_prefix="s"))
        for session in conversation.sessions:
            self._ingest_session(memory, session)
            memory.session_seq[session.index] = memory.store.seq
        return memory

    def _ingest_session(self, memory: SummaryMemory, session: Session) -> None:
        key = f"{memory.sample_id}:S{session.index}"
        date = session_date(session)
        turn_refs = [f"turn:{t.dia_id}" for t in session.turns]
        memory.turns += [(session.index, t.dia_id, item_line(date, f"{t.speaker}: {t.text}")) for t in session.turns]
        out = self.llm("summarize", key, reads=turn_refs, session_date=session.date_time,
                       conversation=turn_lines(session.turns))
        notes = " ".join(str(out.get("summary") or "").split())
        if not notes:
            return
        note_ref = produce(f"note:{key}", notes, turn_refs, op=self.op_id("summarize", key))
        current = memory.store.get(memory.unit_id) if memory.unit_id else None
        reads = [note_ref] + ([current.ref] if current else [])
        text = self.tool("compress", key, _compress, summary=current.text if current else "",
                         notes=item_line(date, notes), budget=self.knobs["summary_budget"], reads=reads)
        op_id = self.op_id("compress", key)
        source = [t.dia_id for t in session.turns]
        if current is None:
            memory.unit_id = memory.store.add(text, session_date=date, source=source, op_id=op_id).unit_id
        elif text and text != current.text:
            memory.store.update(current.unit_id, text, source=source, session_date=date, op_id=op_id)

    def respond(self, state: SummaryMemory, question: str, *, as_of: int | None, key: str) -> dspy.Prediction:
        """Recall the summary and the newest turns, answer."""
        okey = f"{state.sample_id}:{key}"
        question_ref = produce(f"question:{okey}", question)
        visible = [(dia_id, line) for s, dia_id, line in state.turns if as_of is None or s <= as_of]
        buffer = visible[-self.knobs["buffer_turns"]:] if self.knobs["buffer_turns"] > 0 else []
        seq = state.session_seq.get(as_of) if as_of is not None else None
        items = self.tool("recall", okey, _recall, store=state.store, buffer=buffer, as_of=seq,
                          reads=[f"turn:{d}" for d, _ in buffer])
        context = "\n".join(item_line(h.get("date"), h["text"]) for h in items)
        refs = list(dict.fromkeys(h["ref"] for h in items))
        return self.answer_from(okey, question, question_ref, context, refs, "recall", memory=refs)


def _tokens(lines: list[str]) -> int:
    return sum(len(line) // 4 + 1 for line in lines)


def _compress(summary: str, notes: str, budget: int) -> str:
    """The summary with the dated notes appended as a new line, then its oldest sentences dropped (the newest
    one always kept) until it fits ``budget`` tokens."""
    lines = [line for line in [*summary.splitlines(), notes] if line.strip()]
    while _tokens(lines) > budget and sum(len(_SENTENCE_END.split(line)) for line in lines) > 1:
        date, body = _DATED.match(lines[0]).groups()
        sentences = _SENTENCE_END.split(body)
        if len(sentences) > 1:
            lines[0] = (date or "") + " ".join(sentences[1:])
        else:
            lines.pop(0)
    return "\n".join(lines)


def _recall(store: MemoryStore, buffer: list[tuple[str, str]], as_of: int | None) -> list[dict[str, Any]]:
    """The summary's lines (as of store time ``as_of``), then the buffer's turns, as context items."""
    items = [{"ref": unit.ref, "text": line} for unit in store.live(as_of=as_of) for line in unit.text.splitlines()]
    return items + [{"ref": f"turn:{dia_id}", "text": line} for dia_id, line in buffer]

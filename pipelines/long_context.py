"""Long-context memory: the whole conversation in the prompt, oldest content dropped first.

Ingest keeps the dated turns. Query: ``truncate`` (tool: keep the newest turns that fit in
``token_budget`` tokens, ≈ 4 characters each) → ``answer`` (LLM).
"""

from __future__ import annotations

from dataclasses import dataclass

import dspy

from memopt.data.model import Conversation
from memopt.lm.signatures import AnswerQuestion
from memopt.systems import MemorySystem, OpSpec, memory_system
from memopt.systems.helpers import item_line, session_date
from memopt.systems.ops import produce

__all__ = ["LongContext"]


@dataclass(frozen=True)
class LongContextMemory:
    """The dated turns of one conversation: (session index, dia_id, context line)."""

    sample_id: str
    lines: tuple[tuple[int, str, str], ...]


@memory_system("long_context")
class LongContext(MemorySystem):
    """Answer from the (truncated) full conversation."""

    operations = (
        OpSpec("truncate", "tool", "query", "keeps the newest turns that fit the token budget",
               stages="retrieval", steered_by="token_budget"),
        OpSpec("answer", "llm", "query", "answers the question from the conversation history", AnswerQuestion,
               stages="response"),
    )
    defaults = {"token_budget": 4000}

    def build_memory(self, conversation: Conversation) -> LongContextMemory:
        """Keep every turn as a dated line."""
        lines = tuple((s.index, t.dia_id, item_line(session_date(s), f"{t.speaker}: {t.text}"))
                      for s in conversation.sessions for t in s.turns)
        return LongContextMemory(conversation.sample_id, lines)

    def respond(self, state: LongContextMemory, question: str, *, as_of: int | None,
                key: str) -> dspy.Prediction:
        """Truncate to the budget, answer."""
        okey = f"{state.sample_id}:{key}"
        question_ref = produce(f"question:{okey}", question)
        visible = [(d, line) for s, d, line in state.lines if as_of is None or s <= as_of]
        kept = self.tool("truncate", okey, _truncate, lines=visible, budget=self.knobs["token_budget"],
                         reads=[f"turn:{d}" for d, _ in visible])
        context = "\n".join(line for _, line in kept)
        return self.answer_from(okey, question, question_ref, context, [f"turn:{d}" for d, _ in kept], "truncate",
                                kept=len(kept), dropped=len(visible) - len(kept))


def _truncate(lines: list[tuple[str, str]], budget: int) -> list[tuple[str, str]]:
    """The newest lines whose total size fits ``budget`` tokens (≈ 4 characters per token), in order."""
    kept: list[tuple[str, str]] = []
    used = 0
    for dia_id, line in reversed(lines):
        cost = len(line) // 4 + 1
        if used + cost > budget:
            break
        kept.append((dia_id, line))
        used += cost
    return kept[::-1]

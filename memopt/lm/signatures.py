"""The standard signatures of memory operations, judges and the reflection step.

Pipelines use these (with instructions loaded from ``prompts/``), so every LM, real or simulated,
sees the same typed fields. SimLM recognises an operation by the output field names a signature
declares (`memopt.lm.sim.OPERATIONS`); a real LM just reads the prompt.
"""

from __future__ import annotations

from typing import Literal

import dspy
from pydantic import BaseModel, Field

__all__ = [
    "MemoryEvent",
    "ExtractFacts",
    "DecideMemoryUpdates",
    "RewriteQuery",
    "AnswerQuestion",
    "SummarizeSegment",
    "SegmentConversation",
    "UpdateProfile",
    "JudgeAnswer",
    "JudgeContains",
    "ProposeInstructions",
    "STANDARD_SIGNATURES",
]


class MemoryEvent(BaseModel):
    """One decision of Mem0's update step, in Mem0's own schema."""

    id: str = Field(description="id of the existing memory, or a new id for ADD")
    text: str = Field(description="the memory text after the event")
    event: Literal["ADD", "UPDATE", "DELETE", "NONE"]
    old_memory: str | None = Field(default=None, description="previous text, for UPDATE")


class ExtractFacts(dspy.Signature):
    """Extract the facts worth remembering from a conversation."""

    session_date: str = dspy.InputField(desc="date of the session the conversation happened in")
    conversation: str = dspy.InputField(desc="one turn per line, 'Speaker: text'")
    facts: list[str] = dspy.OutputField(desc="self-contained facts, one per item")


class DecideMemoryUpdates(dspy.Signature):
    """Decide how new facts change the stored memories: ADD, UPDATE, DELETE or NONE."""

    existing_memories: str = dspy.InputField(desc="JSON list of {id, text} memories similar to the new facts")
    new_facts: list[str] = dspy.InputField(desc="facts extracted from the latest conversation")
    memory: list[MemoryEvent] = dspy.OutputField(desc="one event per affected memory")


class RewriteQuery(dspy.Signature):
    """Rewrite a question into a search query for the memory store."""

    question: str = dspy.InputField()
    query: str = dspy.OutputField(desc="the search query")


class AnswerQuestion(dspy.Signature):
    """Answer a question about a long conversation from the retrieved context."""

    question: str = dspy.InputField()
    context: str = dspy.InputField(desc="retrieved memory items, one per line, each with its date")
    answer: str = dspy.OutputField(desc="a short answer")


class SummarizeSegment(dspy.Signature):
    """Summarise one segment of a conversation as an episode."""

    session_date: str = dspy.InputField(desc="date of the session the segment belongs to")
    conversation: str = dspy.InputField(desc="one turn per line, 'Speaker: text'")
    summary: str = dspy.OutputField(desc="the episode summary")


class SegmentConversation(dspy.Signature):
    """Split a session into topical segments (MemCells)."""

    conversation: str = dspy.InputField(desc="one turn per line, '[dia_id] Speaker: text'")
    boundaries: list[str] = dspy.OutputField(desc="dia_ids of the turns that start a new segment")


class UpdateProfile(dspy.Signature):
    """Update the profile of one speaker with newly learned facts."""

    speaker: str = dspy.InputField()
    profile: str = dspy.InputField(desc="the current profile, one trait per line")
    facts: list[str] = dspy.InputField(desc="new facts about the conversation")
    updated_profile: str = dspy.OutputField(desc="the new profile, one trait per line")


class JudgeAnswer(dspy.Signature):
    """Judge whether a predicted answer matches the gold answer to the question."""

    question: str = dspy.InputField()
    gold_answer: str = dspy.InputField()
    prediction: str = dspy.InputField()
    correct: bool = dspy.OutputField()


class JudgeContains(dspy.Signature):
    """Judge whether a text contains a given piece of information."""

    information: str = dspy.InputField(desc="the information to look for")
    text: str = dspy.InputField(desc="the text to search")
    contains: bool = dspy.OutputField()


class ProposeInstructions(dspy.Signature):
    """Propose revised instructions for one operation of a memory system, using the feedback."""

    operation: str = dspy.InputField(desc="which operation the instruction drives and what it does")
    current_instruction: str = dspy.InputField()
    feedback: str = dspy.InputField(desc="what went wrong with the current instruction")
    n_candidates: int = dspy.InputField(desc="how many distinct revised instructions to propose")
    proposals: list[str] = dspy.OutputField(desc="the revised instructions, each complete")


STANDARD_SIGNATURES: dict[str, type[dspy.Signature]] = {
    "extract": ExtractFacts,
    "update": DecideMemoryUpdates,
    "rewrite_query": RewriteQuery,
    "answer": AnswerQuestion,
    "summarize": SummarizeSegment,
    "segment": SegmentConversation,
    "profile": UpdateProfile,
    "judge_answer": JudgeAnswer,
    "judge_contains": JudgeContains,
    "propose": ProposeInstructions,
}

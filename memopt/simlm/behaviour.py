"""What SimLM does for each memory operation, given its inputs and the directives it was given.

Each function takes the operation's input fields (as the prompt wrote them) and the set of active
directive ids, and returns the output fields. See `memopt.simlm.directives` for what each directive
changes.

The judges' rules (`judge_answer`, `judge_contains`, `judge_locate`) are lexical and take no directives;
they live in `memopt.judge.rules`, shared with `memopt.judge.judges.LexicalJudge`, so SimLM as judge LM and the
lexical judge always agree.
"""

from __future__ import annotations

import json
import re
from typing import Any

from memopt.core.text import overlap, parse_session_date, resolve_relative_dates, sentences, stems
from memopt.simlm import answering
from memopt.simlm.reading import (
    conversation_lines,
    fact_from_sentence,
    first_clause,
    has_change_cue,
    is_retraction,
    subject_of,
    topic_stems,
)

__all__ = [
    "extract",
    "decide_updates",
    "rewrite_query",
    "answer",
    "summarize",
    "segment",
    "update_profile",
]



def _facts(conversation: str, session_date: str, active: frozenset[str], everyone: bool) -> list[str]:
    day = parse_session_date(session_date)
    lines = conversation_lines(conversation)
    if not lines:
        return []
    user = lines[0].speaker
    facts: list[str] = []
    for line in lines:
        if not everyone and line.speaker != user:
            continue
        for sentence in sentences(line.text):
            fact = fact_from_sentence(sentence, line.speaker)
            if fact is None:
                continue
            if "keep_details" not in active:
                fact = first_clause(fact)
            if "resolve_dates" in active:
                fact = resolve_relative_dates(fact, day)
            if fact not in facts:
                facts.append(fact)
    return facts


def extract(inputs: dict[str, str], active: frozenset[str]) -> dict[str, Any]:
    """Facts from the conversation; see directives resolve_dates, all_participants, keep_details."""
    facts = _facts(inputs.get("conversation", ""), inputs.get("session_date", ""), active,
                   everyone="all_participants" in active)
    return {"facts": facts}


def summarize(inputs: dict[str, str], active: frozenset[str]) -> dict[str, Any]:
    """An episode summary: the informative sentences of every speaker, in the third person."""
    facts = _facts(inputs.get("conversation", ""), inputs.get("session_date", ""), active, everyone=True)
    return {"summary": ". ".join(facts) + ("." if facts else "")}


def _memories(raw: str) -> list[dict[str, str]]:
    try:
        value = json.loads(raw) if raw.strip() else []
    except json.JSONDecodeError:
        return []
    if not isinstance(value, list):
        return []
    return [{"id": str(m.get("id")), "text": str(m.get("text", ""))} for m in value if isinstance(m, dict)]


def _list(raw: str) -> list[str]:
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        return [line.strip("-* ").strip() for line in raw.splitlines() if line.strip()]
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def _related(fact: str, memory: str) -> bool:
    subject = subject_of(fact)
    if subject is not None and subject != subject_of(memory):
        return False
    shared = topic_stems(fact) & topic_stems(memory)
    return len(shared) >= (1 if subject is not None else 2)


def decide_updates(inputs: dict[str, str], active: frozenset[str]) -> dict[str, Any]:
    """Mem0's update decision; see directives update_on_contradiction and delete_only_explicit."""
    memories = {m["id"]: m["text"] for m in _memories(inputs.get("existing_memories", ""))}
    original = dict(memories)
    events: dict[str, dict[str, Any]] = {}
    next_id = max((int(i) for i in memories if i.isdigit()), default=-1) + 1
    added: list[str] = []
    for fact in _list(inputs.get("new_facts", "[]")):
        fact_stems = stems(fact)
        if fact in added or any(
            overlap(fact_stems, text) >= 0.9 and overlap(text, fact_stems) >= 0.9 for text in memories.values()
        ):
            continue
        related = [i for i, text in memories.items() if _related(fact, text)]
        if is_retraction(fact):
            targets = related
            if "delete_only_explicit" in active:
                named = topic_stems(fact)
                scored = sorted(related, key=lambda i: -len(named & topic_stems(memories[i])))
                targets = scored[:1]
            for i in targets:
                events[i] = {"id": i, "text": memories.pop(i), "event": "DELETE", "old_memory": None}
        elif related and ("update_on_contradiction" not in active or has_change_cue(fact)):
            best = max(related, key=lambda i: len(topic_stems(fact) & topic_stems(memories[i])))
            events[best] = {"id": best, "text": fact, "event": "UPDATE", "old_memory": original[best]}
            memories[best] = fact
            continue
        new = str(next_id)
        next_id += 1
        events[new] = {"id": new, "text": fact, "event": "ADD", "old_memory": None}
        added.append(fact)
    out = [events.get(i, {"id": i, "text": text, "event": "NONE", "old_memory": None})
           for i, text in original.items()]
    out += [e for i, e in events.items() if i not in original]
    return {"memory": out}


def rewrite_query(inputs: dict[str, str], active: frozenset[str]) -> dict[str, Any]:
    """The search query; see directive expand_query."""
    question = inputs.get("question", "")
    if "expand_query" not in active:
        return {"query": question}
    return {"query": " ".join(answering.query_terms(question))}


def answer(inputs: dict[str, str], active: frozenset[str]) -> dict[str, Any]:
    """A short answer from the context; see directives combine_all, abstain, resolve_dates."""
    return {"answer": answering.answer(inputs.get("question", ""), inputs.get("context", ""), active)}


_TOPIC_OPENER = re.compile(
    r"^(by the way|anyway|guess what|oh,? (and|by the way)|speaking of|so,? (um|anyway)|on another note)\b", re.I
)


def segment(inputs: dict[str, str], active: frozenset[str]) -> dict[str, Any]:
    """Turn ids that open a new topic: the first turn, topic openers, and lexical breaks."""
    lines = conversation_lines(inputs.get("conversation", ""))
    boundaries: list[str] = []
    window: set[str] = set()
    since = 0
    for n, line in enumerate(lines):
        current = stems(line.text)
        shift = _TOPIC_OPENER.match(line.text) or (since >= 6 and window and not (current & window))
        if n == 0 or shift:
            boundaries.append(line.dia_id or str(n))
            window, since = set(), 0
        window |= current
        since += 1
    return {"boundaries": boundaries}


def update_profile(inputs: dict[str, str], active: frozenset[str]) -> dict[str, Any]:
    """The speaker's profile: old traits plus the new facts about that speaker, newest last."""
    speaker = inputs.get("speaker", "").strip()
    traits = [t.strip("-* ").strip() for t in inputs.get("profile", "").splitlines() if t.strip()]
    for fact in _list(inputs.get("facts", "[]")):
        if subject_of(fact) == speaker and fact not in traits:
            traits.append(fact)
    return {"updated_profile": "\n".join(traits[-40:])}



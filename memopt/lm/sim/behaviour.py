"""What SimLM does for each memory operation, given its inputs and the directives it was given.

Each function takes the operation's input fields (as the prompt wrote them) and the set of active
directive ids, and returns the output fields. See `memopt.lm.directives` for what each directive
changes.

The two judges are lexical and take no directives (`memopt.judge.LexicalJudge` calls them
directly, so SimLM as judge LM and the lexical judge always agree). Their inputs may be quoted
between ``DATA_OPEN`` and ``DATA_CLOSE`` (as `memopt.judge.LMJudge` sends them); the markers are
stripped before judging. Recall is the share of the reference's content stems (stopwords dropped,
Porter-stemmed) that the other text also holds:

- ``ANSWER_RECALL_THRESHOLD`` (0.5): a prediction is correct when it holds at least half of the
  gold answer's content stems and states each absolute date the gold states ("7 May 2023" is not
  matched by "8 May 2023"). When the gold abstains ("Not mentioned") the prediction must abstain
  too; otherwise an abstaining prediction is incorrect.
- ``CONTAINS_RECALL_THRESHOLD`` (0.6): a text contains a piece of information when one of its
  lines holds at least 60% of the information's content stems and states each absolute date the
  information states (a list-like "Max, Luna": each part in some line).

Dates are read whole (`memopt.text.find_dates`): "19 January, 2023", "January 19, 2023",
"19th January 2023" and "19/01/2023" are the same date; a date is stated when the other text has a
date with the same day, month and year, as far as the reference gives them ("May, 2023" needs
May 2023, "2023" any date in 2023, "13 August" 13 August of any year).

The fault-locating judge (`judge_locate`, behind the ``all_at_once`` attribution baseline) reads a
serialized trace, one block per operation, and applies the ``contains`` rule to each operation's
reads and writes. It simulates the long-context limit of an LM given a whole evolution graph in one
prompt: it reads only the first ``LOCATE_WINDOW`` (32,000) characters of the trace (about 8,000
tokens), so it finds the fault on small graphs and guesses on long ones. The window holds the whole
trace of a 6-session synthetic conversation in every pipeline (about 8,000 characters for Mem0,
24,000 for EverMemOS) but only the first sessions of a 40-session one (about 67,000 for Mem0).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from memopt.lm.sim import answering
from memopt.lm.sim.reading import (
    conversation_lines,
    fact_from_sentence,
    first_clause,
    has_change_cue,
    is_retraction,
    subject_of,
    topic_stems,
)
from memopt.text import find_dates, overlap, parse_session_date, resolve_relative_dates, sentences, stems

__all__ = [
    "extract",
    "decide_updates",
    "rewrite_query",
    "answer",
    "summarize",
    "segment",
    "update_profile",
    "judge_answer",
    "judge_contains",
    "judge_locate",
    "unquote_data",
    "ANSWER_RECALL_THRESHOLD",
    "CONTAINS_RECALL_THRESHOLD",
    "LOCATE_WINDOW",
    "LOCATE_STAGE_ERRORS",
    "DATA_OPEN",
    "DATA_CLOSE",
]

ANSWER_RECALL_THRESHOLD = 0.5
CONTAINS_RECALL_THRESHOLD = 0.6
DATA_OPEN = "<<<DATA"
DATA_CLOSE = "DATA>>>"
LOCATE_WINDOW = 32_000
LOCATE_STAGE_ERRORS: dict[str, str] = {"extraction": "ExtractionError", "update": "UpdateError",
                                       "deletion": "DeletionError", "retrieval": "RetrievalError",
                                       "response": "ResponseError"}
_DATA_MARKERS = re.compile(re.escape(DATA_OPEN) + "|" + re.escape(DATA_CLOSE))


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


def unquote_data(text: str) -> str:
    """A judge input without its ``DATA_OPEN`` / ``DATA_CLOSE`` quote markers."""
    return _DATA_MARKERS.sub("", text).strip()


def _recall(reference: str, text: str) -> float:
    return overlap(stems(reference), stems(text))


def _has_dates_of(information: str, text: str) -> bool:
    """Every absolute date of ``information`` is stated by ``text``, read whole (day, month and year it gives)."""
    stated = find_dates(text)
    return all(any(date.matched_by(other) for other in stated) for date in find_dates(information))


def judge_answer(inputs: dict[str, str], active: frozenset[str]) -> dict[str, Any]:
    """Correct when the prediction holds ≥ ANSWER_RECALL_THRESHOLD of the gold's content stems and its dates."""
    gold, prediction = unquote_data(inputs.get("gold_answer", "")), unquote_data(inputs.get("prediction", ""))
    if answering.is_abstention(gold):
        return {"correct": answering.is_abstention(prediction)}
    if answering.is_abstention(prediction):
        return {"correct": False}
    return {"correct": _recall(gold, prediction) >= ANSWER_RECALL_THRESHOLD and _has_dates_of(gold, prediction)}


def _parts(information: str) -> list[str]:
    if find_dates(information) or "," not in information:
        return [information]
    return [p.strip() for p in information.split(",") if p.strip()]


def judge_contains(inputs: dict[str, str], active: frozenset[str]) -> dict[str, Any]:
    """Contains when one line of the text holds ≥ CONTAINS_RECALL_THRESHOLD of the information's content stems.

    Statements are read line by line (a context is one item per line): words scattered over several
    items do not count. A list-like information ("Max, Luna") is contained when each of its parts is in
    some line. Dates must match whole: each absolute date of the information ("7 May 2023", "May 2023",
    "2023") must be stated by that line with the same parts, so "8 May 2023" does not contain "7 May 2023".
    """
    information, text = unquote_data(inputs.get("information", "")), unquote_data(inputs.get("text", ""))
    lines = [line for line in text.splitlines() if line.strip()] or [text]

    def found(part: str) -> bool:
        return any(_recall(part, line) >= CONTAINS_RECALL_THRESHOLD and _has_dates_of(part, line) for line in lines)

    return {"contains": all(found(part) for part in _parts(information))}


def _contains(information: str, items: str) -> bool:
    """`judge_contains` on one trace line, whose items are separated by `` | ``."""
    text = items.replace(" | ", "\n")
    return bool(judge_contains({"information": information, "text": text}, frozenset())["contains"])


_BLOCK_HEADER = re.compile(r"^\[(?P<op>[^\]\n]+)\] (?P<operation>\S+) \((?P<stage>[a-z]+)\)$")


@dataclass(frozen=True)
class _Block:
    op: str
    operation: str
    stage: str
    lines: dict[str, str]


def _blocks(trace: str) -> list[_Block]:
    out = []
    for chunk in trace.split("\n\n"):
        lines = chunk.strip().splitlines()
        header = _BLOCK_HEADER.match(lines[0]) if lines else None
        if header is not None:
            fields = dict(line.partition(": ")[::2] for line in lines[1:])
            out.append(_Block(header["op"], header["operation"], header["stage"], fields))
    return out


def judge_locate(inputs: dict[str, str], active: frozenset[str]) -> dict[str, Any]:
    """The earliest op whose reads contain the gold and whose writes do not, within ``LOCATE_WINDOW`` characters.

    The trace holds one block per op in time order, blocks separated by a blank line: a header
    ``[op_id] operation (stage)``, then ``reads: …``, ``writes: …`` and, for an op that deleted units,
    ``deletes: …`` (items separated by `` | ``). Contains is `judge_contains`'s rule. The error type
    comes from the stage (`LOCATE_STAGE_ERRORS`; an update whose deletes contain the gold: DeletionError).
    Only the first ``LOCATE_WINDOW`` characters are read (a block cut by the window is dropped when a
    whole one precedes it). With no faulty op among them, or a gold that abstains, it guesses: the last
    ``answer`` op read, else the last op read, with its stage's error type.
    """
    gold, trace = unquote_data(inputs.get("gold_answer", "")), unquote_data(inputs.get("trace", ""))
    read = trace[:LOCATE_WINDOW]
    if len(trace) > LOCATE_WINDOW and read.rfind("\n\n") > 0:
        read = read[:read.rfind("\n\n")]
    blocks = _blocks(read)
    if not blocks:
        return {"error_type": "ResponseError", "op_id": "none"}
    if not answering.is_abstention(gold):
        for block in blocks:
            if _contains(gold, block.lines.get("reads", "")) and not _contains(gold, block.lines.get("writes", "")):
                deleted = block.stage == "update" and _contains(gold, block.lines.get("deletes", ""))
                error = "DeletionError" if deleted else LOCATE_STAGE_ERRORS.get(block.stage, "ResponseError")
                return {"error_type": error, "op_id": block.op}
    guess = next((b for b in reversed(blocks) if b.operation == "answer"), blocks[-1])
    return {"error_type": LOCATE_STAGE_ERRORS.get(guess.stage, "ResponseError"), "op_id": guess.op}

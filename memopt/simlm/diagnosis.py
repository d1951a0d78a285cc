"""What an example shows was lost, and whether the operation being rewritten could have lost it.

`diagnose` compares the parts of one example (`memopt.simlm.examples`): what the source turn
said (its speaker, its relative-date words, its names and numbers), what the memory held (what an
operation produced or stored, what replaced it, what was removed), what was read at question time,
what the question and the gold answer needed, and what the system answered. It returns the
*losses* the comparison shows, each with a confidence (1.0 when the example shows where it
happened, less when several places could explain it, as with a question, a gold answer and a
wrong answer only):

========================  ==============================================================  ===================
loss                      what the example shows                                          could be caused by
========================  ==============================================================  ===================
speaker_dropped           a turn's speaker is in no statement the memory held              extract
memory_date_relative      a held statement keeps the turn's 'yesterday' for a "when"      extract, summarize
detail_cut                a statement about the turn lacks the detail the gold needs      extract, summarize
compatible_overwritten    a statement holding the gold was replaced by one that does not  update
unrelated_deleted         a statement holding the gold was removed                        update
retrieval_missed          a stored statement holds the gold, what was read does not       rewrite_query
answer_date_relative      the answer keeps a relative date where the gold has a date      answer
partial_answer            the answer holds some of the gold's several items               answer
should_abstain            the gold declines to answer, the system answered                answer
========================  ==============================================================  ===================

`LOSSES` maps each loss to the catalogue directive that prevents it and the operation kinds that
can cause it; reflection proposes a fix only for losses the operation being rewritten can cause.
"""

from __future__ import annotations

import re

from memopt.core.text import find_relative_dates, has_absolute_date, overlap, stems, words
from memopt.simlm.answering import analyze, is_abstention
from memopt.simlm.example_parts import Example, holds

__all__ = ["LOSSES", "diagnose", "fixable"]

LOSSES: dict[str, tuple[str, tuple[str, ...]]] = {
    "speaker_dropped": ("all_participants", ("extract",)),
    "memory_date_relative": ("resolve_dates", ("extract", "summarize")),
    "detail_cut": ("keep_details", ("extract", "summarize")),
    "compatible_overwritten": ("update_on_contradiction", ("update",)),
    "unrelated_deleted": ("delete_only_explicit", ("update",)),
    "retrieval_missed": ("expand_query", ("rewrite_query",)),
    "answer_date_relative": ("resolve_dates", ("answer",)),
    "partial_answer": ("combine_all", ("answer",)),
    "should_abstain": ("abstain", ("answer",)),
}
UPSTREAM = ("speaker_dropped", "detail_cut", "compatible_overwritten", "unrelated_deleted", "retrieval_missed")

Finding = tuple[float, str]  # (confidence, a short fragment of the example that shows it)


def fixable(kind: str, losses: dict[str, Finding]) -> dict[str, Finding]:
    """The losses an operation of this kind could have caused."""
    return {loss: found for loss, found in losses.items() if kind in LOSSES[loss][1]}


def _fragment(text: str, key: str | None = None, n: int = 8) -> str:
    """At most ``n`` words of ``text`` around ``key`` (its first words when there is no key)."""
    tokens = re.sub(r"^\s*\[[^\]]*\]\s*", "", text).replace('"', "'").split()
    at = 0
    if key:
        low = [t.lower().strip(",.!?;:'") for t in tokens]
        first = key.lower().split()[0]
        at = next((i for i, t in enumerate(low) if t == first), 0)
    start = max(0, min(at - n // 2, len(tokens) - n))
    return " ".join(tokens[start:start + n]).strip(",.;:!? ")


def _mentions(text: str, name: str) -> bool:
    return re.search(rf"\b{re.escape(name)}\b", text) is not None


def _about(statement: str, turn: str) -> bool:
    """Whether a statement is about the event a turn tells (shares enough of its content words)."""
    return overlap(stems(turn) - _DATE_STEMS, stems(statement)) >= 0.3


_DATE_STEMS = stems("yesterday today last week weekend month year ago monday tuesday wednesday thursday friday "
                    "saturday sunday")


def _dates(ex: Example, when: bool) -> dict[str, Finding]:
    out: dict[str, Finding] = {}
    if not when or (ex.gold and find_relative_dates(ex.gold)):
        return out
    relative_turns = [t for _, t in ex.turns if find_relative_dates(t)]
    memory = ex.held + ex.context  # what was read at question time also shows what the memory held
    if ex.turns:
        event = [s for s in memory if any(_about(s, t) for t in relative_turns)]
    else:
        event = [s for s in memory if overlap(stems(ex.question) - _DATE_STEMS, stems(s)) >= 0.5]
    kept = [s for s in event if find_relative_dates(s)]
    if kept:
        out["memory_date_relative"] = (1.0, _fragment(kept[0], find_relative_dates(kept[0])[0]))
    elif any(find_relative_dates(s) for s in memory):
        other = next(s for s in memory if find_relative_dates(s))
        out["memory_date_relative"] = (0.5, _fragment(other, find_relative_dates(other)[0]))
    said = find_relative_dates(ex.answer or "")
    if said:
        dated = any(re.match(r"\s*\[[^\]]*\d{4}[^\]]*\]", c) or has_absolute_date(c) for c in ex.context)
        out["answer_date_relative"] = (1.0 if dated else 0.5, _fragment(ex.answer or "", said[0]))
        if not (ex.shows_output or ex.context) and "memory_date_relative" not in out:
            source = relative_turns[0] if relative_turns else ex.answer or ""
            out["memory_date_relative"] = (0.5, _fragment(source, (find_relative_dates(source) or [None])[0]))
    return out


def _extraction(ex: Example) -> dict[str, Finding]:
    out: dict[str, Finding] = {}
    if not ex.shows_output or not ex.turns:
        return out
    held = " ".join(ex.held)
    q = analyze(ex.question)
    for speaker, turn in ex.turns:
        relevant = (ex.gold and holds(turn, ex.gold)) or speaker in q.names or not ex.gold
        if speaker and relevant and not _mentions(held, speaker):
            out["speaker_dropped"] = (1.0, _fragment(turn))
            return out
    if not ex.gold or is_abstention(ex.gold) or any(holds(s, ex.gold) for s in ex.held):
        return out
    for speaker, turn in ex.turns:
        if not holds(turn, ex.gold):
            continue
        about = [s for s in ex.held if _about(s, turn) and (speaker is None or _mentions(s, speaker))]
        detail = ex.gold.split()[0]
        if about:
            out["detail_cut"] = (1.0, _fragment(turn, detail))
        elif speaker is None or _mentions(held, speaker):
            out["detail_cut"] = (0.5, _fragment(turn, detail))
        break
    return out


def _memory_changes(ex: Example) -> dict[str, Finding]:
    out: dict[str, Finding] = {}
    q_stems = stems(ex.question)
    for old, new in ex.replaced:
        if (holds(old, ex.gold) and not holds(new, ex.gold)) if ex.gold else overlap(q_stems, stems(old)) >= 0.5:
            out["compatible_overwritten"] = (1.0, _fragment(old))
    for gone in ex.removed:
        if holds(gone, ex.gold) if ex.gold else overlap(q_stems, stems(gone)) >= 0.5:
            out["unrelated_deleted"] = (1.0, _fragment(gone))
    if ex.gold and ex.context and not any(holds(c, ex.gold) for c in ex.context):
        stored = [s for s in ex.items if holds(s, ex.gold)]
        if stored:
            out["retrieval_missed"] = (1.0, _fragment(stored[0]))
    return out


def _answer(ex: Example) -> dict[str, Finding]:
    if not ex.gold or not ex.answer or has_absolute_date(ex.gold):
        return {}
    parts = [p.strip() for p in re.split(r",|\band\b", ex.gold) if words(p)]
    if len(parts) >= 2:
        found = [p for p in parts if holds(ex.answer, p)]
        if found and len(found) < len(parts):
            return {"partial_answer": (1.0, ex.gold)}
    return {}


def diagnose(ex: Example) -> dict[str, Finding]:
    """The losses one example shows, with confidence and a fragment (see the module docstring)."""
    if ex.gold and is_abstention(ex.gold):
        return {} if ex.answer and is_abstention(ex.answer) else {"should_abstain": (1.0, ex.question)}
    q = analyze(ex.question)
    when = q.kind == "when" or bool(ex.gold and has_absolute_date(ex.gold))
    out = {**_dates(ex, when), **_extraction(ex), **_memory_changes(ex), **_answer(ex)}
    wrong = ex.gold is not None and not (ex.answer and holds(ex.answer, ex.gold))
    if wrong and not out and not (ex.turns or ex.shows_output or ex.context):
        specific = re.search(r"\d|\b[A-Z]", ex.gold) is not None
        out = {loss: (0.35 if loss == "detail_cut" and specific else 0.2, ex.question) for loss in UPSTREAM}
    return out

"""How SimLM reads its inputs: conversation lines, context items, facts about people.

Plain NLP only: regexes, a stopword list, Porter stems, capitalisation. Nothing here knows where
a text came from (LoCoMo, the synthetic generator, a user's data).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from memopt.core.text import (
    STOPWORDS,
    clauses,
    content_words,
    parse_session_date,
    stem,
    words,
)

__all__ = [
    "Line",
    "Item",
    "conversation_lines",
    "context_items",
    "to_third_person",
    "fact_from_sentence",
    "first_clause",
    "subject_of",
    "topic_stems",
    "is_retraction",
    "has_change_cue",
]

_LINE = re.compile(
    r"^\s*(?:\[(?P<id>[^\]]{1,40})\]\s*)?(?P<speaker>[A-Z][\w.'-]*(?: [A-Z][\w.'-]*){0,2}):\s+(?P<text>.+?)\s*$"
)
_ITEM = re.compile(r"^\s*(?:[-*•]\s+|\d+[.)]\s+)?(?:\[(?P<date>[^\]]{1,60})\]\s*)?(?P<text>.+?)\s*$")


@dataclass(frozen=True)
class Line:
    """One conversation turn as written in a prompt."""

    speaker: str
    text: str
    dia_id: str | None = None


@dataclass(frozen=True)
class Item:
    """One context item (a memory, a chunk, a turn) with the date it carries."""

    text: str
    date: dt.date | None
    stems: frozenset[str]


def conversation_lines(conversation: str) -> list[Line]:
    """Turns of a 'Speaker: text' conversation (an optional '[dia_id]' prefix is kept)."""
    out = []
    for raw in conversation.splitlines():
        m = _LINE.match(raw.replace("\u2019", "'"))
        if m:
            out.append(Line(m.group("speaker"), m.group("text"), m.group("id")))
    return out


def context_items(context: str) -> list[Item]:
    """Items of a context: one per non-empty line, with an optional '[date]' prefix."""
    items = []
    for raw in context.splitlines():
        m = _ITEM.match(raw.replace("\u2019", "'"))
        if not m or not m.group("text").strip():
            continue
        text = m.group("text")
        date = parse_session_date(m.group("date")) if m.group("date") else None
        items.append(Item(text, date, frozenset(stem(w) for w in content_words(text))))
    return items


_FIRST_PERSON = [
    (re.compile(r"\bI'm\b|\bI am\b"), "{s} is"),
    (re.compile(r"\bI've\b|\bI have\b"), "{s} has"),
    (re.compile(r"\bI'd\b"), "{s} would"),
    (re.compile(r"\bI'll\b"), "{s} will"),
    (re.compile(r"\bI was\b"), "{s} was"),
    (re.compile(r"\bI do\b"), "{s} does"),
    (re.compile(r"\bwe're\b|\bwe are\b", re.I), "{s} is"),
    (re.compile(r"\bwe've\b", re.I), "{s} has"),
    (re.compile(r"\bI\b|\bme\b|\bmyself\b"), "{s}"),
    (re.compile(r"\bmy\b|\bmine\b", re.I), "{s}'s"),
    (re.compile(r"\bwe\b|\bus\b", re.I), "{s}"),
    (re.compile(r"\bour\b|\bours\b", re.I), "{s}'s"),
]
_HAS_FIRST_PERSON = re.compile(r"\b(I|I'm|I've|I'd|I'll|me|my|mine|myself|we|our|us)\b", re.I)
_ELLIPTIC_START = re.compile(
    r"^(just|finally|recently|started|went|got|been|took|made|had|joined|signed|adopted|moved|bought|"
    r"visited|spent|finished|ran|won|booked|planning|thinking)\b",
    re.I,
)
_REACTION = frozenset(
    "love loved great awesome cool amazing nice glad happy thanks thank sorry good fun excited wonderful "
    "proud sounds sound hear heard totally agree know think hope wish feel felt true right sure see "
    "congrats congratulations lovely beautiful incredible glad definitely absolutely appreciate mean "
    "talk talking chat catch care".split()
)


def to_third_person(sentence: str, speaker: str) -> str:
    """Rewrite a first-person sentence about ``speaker`` in the third person."""
    out = sentence
    for pattern, replacement in _FIRST_PERSON:
        out = pattern.sub(replacement.format(s=speaker), out)
    return out


_INTERJECTION = re.compile(
    r"^(?:(?:guess what|oh|wow|well|so|yeah|yes|hey|haha|honestly|actually|anyway|by the way|you know what)[,!.]?\s+)+",
    re.I,
)


def fact_from_sentence(sentence: str, speaker: str) -> str | None:
    """A self-contained fact from one sentence said by ``speaker``, or None if it states none."""
    s = _INTERJECTION.sub("", sentence.strip().replace("\u2019", "'"))
    if not s or s.endswith("?"):
        return None
    informative = [w for w in content_words(s) if w not in _REACTION and w != speaker.lower()]
    if len(informative) < 2:
        return None
    if _HAS_FIRST_PERSON.search(s):
        fact = to_third_person(s, speaker)
    elif _ELLIPTIC_START.match(s):
        fact = f"{speaker} {s[0].lower()}{s[1:]}"
    else:
        return None
    return fact.rstrip(" .!")


def first_clause(fact: str) -> str:
    """The first clause of a long fact that names its subject (the fact itself when short)."""
    if len(words(fact)) <= 8:
        return fact
    parts = clauses(fact)
    subject = subject_of(fact)
    for part in parts:
        if subject is None or subject in part:
            return part
    return parts[0] if parts else fact


_NAME = re.compile(r"^([A-Z][a-z]+)\b")


def subject_of(fact: str) -> str | None:
    """The person a fact is about: its leading capitalised name, if any."""
    m = _NAME.match(fact.strip())
    if m and m.group(1).lower() not in STOPWORDS:
        return m.group(1)
    return None


_DATE_WORDS = frozenset(
    "january february march april may june july august september october november december monday "
    "tuesday wednesday thursday friday saturday sunday week weekend month year day before after "
    "yesterday today tomorrow ago last next family".split()
)


def topic_stems(fact: str) -> set[str]:
    """Content stems of a fact without its subject, numbers and date words."""
    subject = (subject_of(fact) or "").lower()
    return {
        stem(w)
        for w in content_words(fact)
        if w != subject and w not in _DATE_WORDS and not w.isdigit()
    }


_RETRACTION = re.compile(r"\b(no longer|not \w+ anymore|n't \w+ anymore|anymore|quit|stopped|gave up|given up)\b", re.I)
_CHANGE = re.compile(
    r"\b(moved|now|no longer|switched|changed|instead|left|quit|anymore|replaced|became|promoted|new job|"
    r"new position|new role|new apartment|new home|new city)\b",
    re.I,
)


def is_retraction(fact: str) -> bool:
    """Whether a fact negates something ('no longer', 'quit', 'stopped', 'gave up')."""
    return bool(_RETRACTION.search(fact))


def has_change_cue(fact: str) -> bool:
    """Whether a fact announces a change of state ('moved', 'now', 'switched', 'instead', ...)."""
    return bool(_CHANGE.search(fact))


"""Pieces of a feedback text that `memopt.simlm.examples` reads (used only there): its sentences and the questions
they ask, paragraphs that introduce the next, the last words of a hint, a label without an operation's dotted name,
whether a label names the error or the operation, whether the words after a value are a passive, its clauses and
the words of saying that attribute a turn."""

from __future__ import annotations

import re

from memopt.core.text import words
from memopt.simlm.example_layouts import BULLET, LABEL
from memopt.simlm.example_parts import CUES, QUESTION, QUOTE, SAY, lead_words, role_of

__all__ = ["CLAUSES", "REPORTED", "SAID", "SAID_AFTER", "SAID_BEFORE", "asked", "clauses", "introduced", "named_field",
           "passive_lead", "sentences", "sentences_outside", "tail", "told", "without_op"]

# words of saying: 'Zane said: ...', '... (Zane) said', '“...”, said Zane', a label reporting someone ('Xavi says:')
_SAY, _AUX = rf"(?:told\s+\w+|{SAY['say']})", SAY["say_before"]  # 'said', 'told them', 'gesagt', 'dijo'
SAID = re.compile(rf"^(?P<who>[A-Z][\w'-]*)\s+{_SAY}(?:(?:\s+[a-z]\w*){{1,3}}\s*:|\s*[:,—–-]?)\s+(?!it\b)"
                  r"(?P<text>.+)$")
SAID_BEFORE = re.compile(rf"\b([A-Z][\w'-]*)\s*(?:\([^)]{{0,30}}\))?\s*(?:,\s*who\s+)?(?:(?:{_AUX}|\w+ly)\s+)?"
                         rf"(?:{_SAY}\b[^\"“]{{0,15}}|:\s*)$|\b([A-Z][\w-]*)'s(?:\s+[a-z]+)?\s*[:,]?\s*$")
SAID_AFTER = re.compile(rf"^\W{{0,3}}\s*(?:{_SAY}\s+|[—-]\s*|\()([A-Z][\w'-]*)|"
                        rf"^\W{{0,3}}\s*([A-Z][\w'-]*)\s+(?:(?:{_AUX})\s+)?(?:{_SAY}|added)\b")
REPORTED = re.compile(rf"^\S+\s+(?:\w+ly\s+|(?:{_AUX})\s+)?(?:{_SAY}|asks)$")
CLAUSES = re.compile(r";\s+|\s*(?:<-+|←|<=+)\s*|(?<=[.!])\s+(?=[A-Z\"“'])|"  # '<-- wrong': a note of its own
                     r",\s+(?=(?:but\s+|and\s+|while\s+|whereas\s+|when\s+)?(?:got|answered|"
                     r"expected|gold|the system|the model|(?:it|we|they)\s+(?:said|answer(?:ed|s)?)|should|instead|"
                     r"predicted|correct|"
                     r"(?:the\s+)?(?:right|correct|expected|real|true)?\s*answer)\b)", re.I)


def clauses(text: str) -> list[str]:
    """A text's clauses: split at '; ', an arrow, a sentence's end or a comma before role words, and, unpunctuated
    (speech), at a conjunction whose clause is led by role words ('the right one is X but what came back was Y')."""
    out: list[str] = []
    for clause in CLAUSES.split(text):
        first, *rest = re.split(r"\s+(?=(?:but|and|while|whereas|so)\s)", clause)
        out.append(first)
        for part in rest:
            led = role_of(lead_words(part.split(None, 1)[-1])[0]) is not None
            out[-1:] = [out[-1], part] if led else [f"{out[-1]} {part}"]
    return out


def named_field(hint: str) -> str | None:
    """"error" or "operation" when a field's label names the kind of failure or the blamed operation."""
    last = hint.lower().split()[-3:]
    for kind, sizes in (("error", (3, 2, 1)), ("operation", (3, 2))):
        if any(CUES[kind].fullmatch(" ".join(last[-n:])) for n in sizes):
            return kind
    return None


def introduced(paragraphs: list[str]) -> list[str]:
    """The paragraphs with one that ends by introducing what follows ('Given this turn:') joined to the next."""
    out: list[str] = []
    for paragraph in paragraphs:
        if out and out[-1].rstrip().endswith(":"):
            out[-1] = out[-1].rstrip() + "".join(f"\n  {line}" for line in paragraph.split("\n"))  # lines under it
        else:
            out.append(paragraph)
    return out


def sentences_outside(text: str, quotes: list[re.Match]) -> list[str]:
    """The sentences of a text, split only where no quote is open."""
    cuts = [m.end() for m in re.finditer(r"(?<=[.!?])[\"'”]?\s+(?=[A-Z\"“'(\[])", text)
            if not any(q.start() < m.start() < q.end() - 1 for q in quotes)]
    return [text[a:b].strip() for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True) if text[a:b].strip()]


def told(line: str) -> list[str]:
    """A line of prose (no label) asking several questions as its sentences (a story telling several examples),
    else the line."""
    several = len(set(QUESTION.findall(line))) > 1 and not LABEL.match(BULLET.sub("", line).strip())
    return sentences_outside(line, list(QUOTE.finditer(line))) if several else [line]


def sentences(text: str) -> list[str]:
    """The sentences of a text (split after '.' / '!' and at line breaks)."""
    return [s.strip() for s in re.split(r"(?<=[.!])\s+|\n+", text) if s.strip()]


def asked(text: str) -> str | None:
    """The last question a text asks, lower case, for telling whether two lines ask the same one."""
    found = QUESTION.findall(text)
    return " ".join(words(found[-1])) if found else None


def without_op(label: str) -> str:
    """A label of several words without an operation's dotted name ('evermemos.answer fetches from memory': its
    'answer' is no answer); a key of one ('src.speaker') stays."""
    return re.sub(r"(?<![\w.])[a-z]\w*\.[a-z][\w.]*", " ", label) if len(label.split()) > 1 else label


def passive_lead(after: str) -> bool:
    """Whether the words after a value start with a passive auxiliary ('is returned by', 'was expected')."""
    found = CUES["passive"].search(after)
    return bool(found) and not after.lower().replace("_", " ")[:found.start()].strip()


def tail(text: str, n: int) -> str:
    return " ".join(text.split()[-n:])

"""Pieces of a feedback text that `memopt.simlm.examples` reads (used only there): its sentences and the questions
they ask, paragraphs that introduce the next, the last words of a hint, a label without an operation's dotted name,
whether a label names the error or the operation, and whether the words after a value are a passive."""

from __future__ import annotations

import re

from memopt.core.text import words
from memopt.simlm.example_layouts import BULLET, LABEL
from memopt.simlm.example_parts import CUES, QUESTION, QUOTE

__all__ = ["asked", "introduced", "named_field", "passive_lead", "sentences", "sentences_outside", "tail", "told",
           "without_op"]


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

"""Who a conversation is about: its speakers, the proper names its turns use, and which names its turns join.

"A line about someone else does not hold the item" (`memopt.attribution.need.about_someone_else`) needs to know
who is someone. A capitalised first word is not a person ("Training plan: long run on Sundays"); a person is a
speaker of the conversation (``Chloe``; not a role: ``user``, ``assistant``) or a name its turns write with a
capital in the middle of a sentence (``Lena`` in "At the conference in Denver I met Lena"). A name the question
does not say may still be the one it asks about: "the teacher Tom met in Denver" is Lena when a turn names Lena and
Denver together (`Cast.tied`; the speaker of a turn does not join its names, so "Thanks, Sam!" said by Chloe ties
no one to Sam).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["Cast", "cast_of", "ROLES"]

ROLES = frozenset("user assistant system human ai bot agent tool model me you speaker customer".split())
_WORD = re.compile(r"[A-Z][a-z]+(?:-[A-Z][a-z]+)?")
_BOUNDARY = frozenset(".!?:;\n\"“([*•")
_NOT_NAMES = frozenset("i the a an what when where who whom which why how does did is are was were has have do can "
                       "would will my your his her their our it this that these those there here and or but so "
                       "if then also just ok okay yes no oh hey hi hello thanks thank".split())
_CALENDAR = frozenset("january february march april may june july august september october november december "
                      "monday tuesday wednesday thursday friday saturday sunday".split())


@dataclass(frozen=True)
class Cast:
    """The people and things a conversation names (lower case): speakers, proper names, each turn's names."""

    speakers: frozenset[str]
    names: frozenset[str]
    together: tuple[frozenset[str], ...]

    def is_someone(self, word: str) -> bool:
        """Whether a word is a person or a named thing of the conversation."""
        return word.lower() in self.names

    def speaks(self, words: Iterable[str]) -> bool:
        """Whether any of the words is a speaker's name."""
        return any(w.lower() in self.speakers for w in words)

    def tied(self, words: Iterable[str]) -> frozenset[str]:
        """The names a turn writes together with any of the words (the words included)."""
        asked = {w.lower() for w in words}
        return frozenset(asked.union(*(names for names in self.together if names & asked)))


def _proper(text: str) -> set[str]:
    """The capitalised words a text writes in the middle of a sentence (lower case)."""
    found = set()
    for m in _WORD.finditer(text):
        word, at = m.group(0).lower(), m.start() - 1
        while at >= 0 and text[at] in " \t":
            at -= 1
        titled = at >= 0 and text[at] == "." and re.search(r"\b(?:Dr|Mr|Mrs|Ms|Mx|Prof|St)\.$", text[:at + 1])
        if not titled and (at < 0 or text[at] in _BOUNDARY or not (text[at].isalnum() or text[at] in ",'’-–)")):
            continue
        if word not in _NOT_NAMES and word.removesuffix("s") not in _CALENDAR:
            found.update(word.split("-"))
    return found


def cast_of(turns: Iterable[tuple[str, str]]) -> Cast:
    """The cast of a conversation from its turns ``(speaker, text)``."""
    speakers: set[str] = set()
    together = []
    for speaker, text in turns:
        who = str(speaker or "").strip().lower()
        if who and who not in ROLES and re.fullmatch(r"[a-z][a-z .'-]*", who):
            speakers.update(who.split())
        together.append(frozenset(_proper(str(text))))
    names = frozenset(speakers.union(*together))
    return Cast(frozenset(speakers), names, tuple(t for t in together if len(t) > 1))

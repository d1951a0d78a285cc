"""The units the instruction reader works on: words with their marks, clauses, sentences, and quotes.

A `Word` records what the reader found about it: ``quoted`` (it stands between quotes: an example, not
an instruction), ``scope`` (the negation or contrast covering it, 0 for none; ``contrast`` when it is a contrast),
``rationale`` (it stands in a
"because ..." clause) and ``condition`` (it stands in an "unless / if / when ..." clause). A `Clause` joins
its words by single spaces, lower case, so concept patterns are regular expressions over it
(`memopt.simlm.concepts`). The word classes the reader's rules share are here too.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

__all__ = ["Word", "Match", "Clause", "Sentence", "make_clause", "quote_mask", "tokens", "with_"]

_TOKEN = re.compile(r"[a-z0-9]+(?:['’][a-z]+)*(?:-[a-z0-9]+)*|->|[→=;:,()!?—–]|(?<![\w])-(?![\w])|"
                    r"(?<![\w+])[+&](?![\w+])")
_TAG = re.compile(r"</?[A-Za-z_][\w.-]*(?:\s[^<>]*)?/?>")  # markup (an XML tag names a section; it says nothing)
_QUOTE_PAIRS = {'"': '"', "“": "”", "‘": "’", "'": "'", "«": "»"}

# word classes shared by the reader's rules
STOP_WORDS = frozenset({
    "but", "however", "otherwise", "unless", "except", "if", "when", "whenever", "where", "wherever", "while",
    "whereas", "because", "since", "though", "although", "yet", "so", "then", "that", "which", "who", "whose",
    "before", "after", "once", "until", "instead", "rather",
})
STOP_PUNCT = frozenset({";", ":", "(", ")", "—", "–", "-", "->", "→", "=", "!", "?"})
CLAUSE_PUNCT = frozenset({";", ":", "(", ")", "—", "–", "?"})
COPULAS = frozenset({"is", "are", "be", "was", "were", "it's"})
AUXILIARIES = frozenset({"must", "may", "should", "shall", "can", "will", "could", "would", "might"})
RELATIVE = frozenset({"that", "which", "who", "whose"})
# "just because X", "merely because X": X is a ground the sentence weighs, not a reason it gives
GROUND = frozenset({"just", "merely", "simply", "only", "solely", "purely"})
SUBORDINATORS = frozenset({
    "if", "when", "whenever", "unless", "where", "wherever", "once", "whether", "that", "which", "who",
    "whose", "while", "although", "though", "because", "since",
})


@dataclass(frozen=True)
class Word:
    """One word (or punctuation mark) of a sentence."""

    text: str
    quoted: bool = False
    scope: int = 0
    contrast: bool = False  # the scope is a contrast ("rather than X", "not just X"), not a negation
    rationale: bool = False
    condition: bool = False


@dataclass(frozen=True)
class Match:
    """A regular-expression match over a clause: its first word's index, negation scope and rationale flag."""

    start: int
    scope: int
    rationale: bool


@dataclass(frozen=True, eq=False)
class Clause:
    """A run of words between clause boundaries, with the text the patterns are matched against."""

    words: tuple[Word, ...]
    text: str
    offsets: tuple[int, ...]
    aside: bool = False  # an aside in parentheses: it comments on the sentence, it does not lead it

    def find(self, pattern: re.Pattern[str]) -> tuple[Match, ...]:
        """Matches of ``pattern`` over this clause's words."""
        found = []
        for m in pattern.finditer(self.text):
            start = bisect_right(self.offsets, m.start()) - 1
            first = self.words[start]
            # a match reaching into a rationale ("keep failing because 'last week' ... verbatim") is not one phrase
            last = self.words[bisect_right(self.offsets, max(self.offsets[start], m.end() - 1)) - 1]
            scope = first.scope or self._contrasted(start, m.end())
            found.append(Match(start, scope, first.rationale or last.rationale))
        return tuple(found)

    def _contrasted(self, start: int, end: int) -> int:
        """The scope of a contrast a match reaches into ("a brief summary over a detailed account"), or 0."""
        last = bisect_right(self.offsets, max(self.offsets[start], end - 1)) - 1
        for k in range(start + 1, last + 1):
            if self.words[k].scope:
                before = tuple(w.text for w in self.words[max(0, k - 2):k])
                contrast = before[-1:] in (("over",), ("than",)) or before in (("instead", "of"), ("place", "of"),
                                                                                  ("opposed", "to"))
                return self.words[k].scope if contrast else 0
        return 0


@dataclass(frozen=True, eq=False)
class Sentence:
    """A sentence: its clauses, the whole sentence as one clause, and its text as written."""

    clauses: tuple[Clause, ...]
    whole: Clause
    text: str = ""


def make_clause(words: list[Word], *, aside: bool = False) -> Clause:
    """A clause of these words, its text joined by single spaces."""
    offsets, pos = [], 0
    for w in words:
        offsets.append(pos)
        pos += len(w.text) + 1
    return Clause(tuple(words), " ".join(w.text for w in words), tuple(offsets), aside)


def with_(w: Word, **changes: object) -> Word:
    """A copy of ``w`` with some marks changed."""
    return Word(**{**w.__dict__, **changes})


def quote_mask(text: str) -> list[bool]:
    """Which characters stand between quotes (a quote opens after a non-letter and closes before one)."""
    mask = [False] * len(text)
    i = 0
    while i < len(text):
        ch = text[i]
        closer = _QUOTE_PAIRS.get(ch)
        opens = closer is not None and (i == 0 or not text[i - 1].isalnum()) and i + 1 < len(text) \
            and not text[i + 1].isspace()
        if opens:
            j = i + 1
            while j < len(text):
                if text[j] == closer and (j + 1 == len(text) or not text[j + 1].isalnum()) \
                        and not text[j - 1].isspace():
                    break
                j += 1
            if j < len(text):
                for k in range(i + 1, j):
                    mask[k] = True
                i = j + 1
                continue
        i += 1
    return mask


def tokens(sentence: str) -> list[Word]:
    """The words and punctuation marks of a sentence, lower case, each marked quoted or not."""
    sentence = _TAG.sub(" ", sentence)
    mask = quote_mask(sentence)
    low = sentence.lower().replace("’", "'")
    # shorthand: "same person + activity", "dates & prices" join like "and"
    return [Word("and" if m.group() in "+&" else m.group().replace("'", "") if m.group().endswith("n't") else m.group(),
                 quoted=mask[m.start()]) for m in _TOKEN.finditer(low)]

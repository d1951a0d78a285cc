"""The parts of a feedback example and how SimLM tells them apart (used by `memopt.simlm.examples`).

`Example` is what one example shows. The rest reads single pieces of text: whether a phrase holds
another (`holds`), which generic role words lead a piece (`lead_words`, `role_of`: "expected" /
"gold" / "should" mark the gold answer, "answered" / "got" / "system" the system's), whether a
piece is a third-person statement about a named person (`is_statement`) or a general instruction
(`is_advice`), and which of two unlabelled short answers is the gold one (`assign_answers`).
Only generic English role words are read, never a particular tool's labels.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from memopt.core.text import DATE_PATTERN, MONTHS, STOPWORDS, WEEKDAYS, has_absolute_date, words
from memopt.judge.rules import has_dates_of, recall
from memopt.simlm.answering import analyze, is_abstention

__all__ = ["Example", "holds", "lead_words", "role_of", "is_statement", "is_advice", "assign_answers",
           "subject_of_question", "QUESTION", "QUOTE", "FIRST_PERSON", "NOT_NAMES", "META", "CUES", "LABEL_WORDS",
           "fold"]

QUESTION = re.compile(r"(?:(?<![\w'])|(?<=[\s(\[=:]')|(?<=^'))((?:when|what|where|who|whom|whose|which|why|how|did|"
                       r"does|do|is|are|was|were|has|have|had|can|could|will|would)\b[^?\n\"“”]*\?)", re.I)
QUOTE = re.compile(r'"([^"\n]{1,400}?)"|“([^”\n]{1,400}?)”|(?<![\w])\'((?:[^\'\n]|\b\'\b){1,400}?)\'(?![\w])')
FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|I'd|I'll)\b|\b(?i:me|my|mine|myself|we|our|us|we're|we've)\b")
_DATE_STAMP = re.compile(r"^\s*\[[^\]]{1,60}\]\s*")
_SUBJECT = re.compile(r"^([A-Z][a-z][\w-]*)(?:'s)?\s+([a-z][\w'-]*)")
_NOT_VERBS = frozenset("and or with of in at from to for".split())
# A leading time phrase that ends in a date: 'the week before 3 July 2023 Caroline went ...', 'On 7 May 2023, ...'.
_DATE_LEAD = re.compile(r"^(?-i:[a-z]+\s+|On\s+|The\s+){0,4}?(?:" + DATE_PATTERN.pattern + r")\s*,?\s+(?-i:(?=[A-Z]))",
                        re.IGNORECASE)



@functools.cache
def _fold_char(c: str) -> str:
    return unicodedata.normalize("NFKD", c.lower())[:1] or c


def fold(text: str) -> str:
    """Lower case with accents folded, one character for one (offsets into the text stay valid)."""
    low = text.lower().replace("_", " ")
    return low if low.isascii() and len(low) == len(text) else "".join(map(_fold_char, text.replace("_", " ")))


class Cue:
    """The words of one role in every language of `feedback_cues.yaml`, matched as whole words on folded text."""

    def __init__(self, entries: list[str]) -> None:
        alts = sorted((re.escape(fold(e)).replace(r"\*", r"\w*").replace(r"\ ", r"\s+") for e in entries),
                      key=len, reverse=True)
        self.pattern = re.compile(rf"(?<!\w)(?:{'|'.join(alts)})(?!\w)")
        self.words = frozenset(fold(e) for e in entries if "*" not in e and " " not in e)

    def search(self, text: str) -> re.Match[str] | None:
        return self.pattern.search(fold(text))

    def finditer(self, text: str) -> list[re.Match[str]]:
        return list(self.pattern.finditer(fold(text)))

    def fullmatch(self, text: str) -> bool:
        return self.pattern.fullmatch(fold(text).strip()) is not None


def _cues() -> dict[str, Cue]:
    import yaml

    table = yaml.safe_load(Path(__file__).with_name("feedback_cues.yaml").read_text(encoding="utf-8"))
    return {role: Cue([w for ws in langs.values() for w in ws]) for role, langs in table.items()}


# Generic role words (what anyone writing feedback uses, in each language of the table), never a tool's labels.
CUES = _cues()
META = frozenset("fact facts memory memories answer answers question questions evidence context conversation "
                  "operation output outputs store prompt session turn turns speaker information system mentions "
                  "extracted produced stored retrieved model response f1 score judged judge wrong failed error "
                  "blamed version case cases example".split())
_IMPERATIVE = frozenset("keep drop make use avoid write be ignore remove shorten focus treat replace extract delete "
                        "include omit leave prefer record add skip list state mention resolve convert combine give "
                        "return say limit cut merge update expand never always only don't do please".split())
_MODAL = re.compile(r"\b(should|must|need to|needs to|ought to|has to|have to)\b(?!\s+have\b)", re.I)
NOT_NAMES = frozenset(
    """question answer answers answered gold expected evidence source turn turns observation note notes error output
    outputs input inputs produced stored memory memories fact facts context prediction predicted system response
    reply result example case reason diagnosis problem issue feedback advice hint utterance text said score got
    actual correct wrong speaker before after old new retrieved query summary stage step operation type category
    label id date session conversation dialogue user assistant model truth reference target comment explanation
    detail details none nothing item items source sources later earlier afterwards meanwhile instead chat transcript
    message messages log excerpt snippet record entry""".split()
) | STOPWORDS | {m.lower() for m in MONTHS + WEEKDAYS}
# the words that label a question, an answer or a field: no one's name unless the text around says it is a turn
LABEL_WORDS = frozenset().union(*(CUES[r].words for r in ("gold", "answered", "asked", "held", "read", "error",
                                                           "operation", "label")))


@dataclass
class Example:
    """What one example shows: the question, the source turns, what was held or read, the two answers."""

    question: str = ""
    turns: list[tuple[str | None, str]] = field(default_factory=list)
    items: list[str] = field(default_factory=list)
    context: list[str] = field(default_factory=list)
    replaced: list[tuple[str, str]] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    gold: str | None = None
    answer: str | None = None
    shows_output: bool = False
    before: list[str] = field(default_factory=list)  # memories a label calls the earlier ones ('Memory before: ...')
    after: list[str] = field(default_factory=list)  # and the later ones ('Memory after: ...'), paired in order
    error: str | None = None  # the kind of failure, as the feedback words it ('ExtractionError', 'a date left ...')
    operation: str | None = None  # the operation the feedback blames, as written ('mem0.extract')

    @property
    def held(self) -> list[str]:
        """Every statement the memory held at some point (produced, stored, replaced or removed)."""
        return [*self.items, *(b for b, _ in self.replaced), *(a for _, a in self.replaced), *self.removed]


def holds(text: str, phrase: str) -> bool:
    """Whether ``text`` states ``phrase`` (most of its content words, and its dates whole)."""
    parts = [phrase] if has_absolute_date(phrase) or "," not in phrase else [p for p in phrase.split(",") if p.strip()]
    return all(recall(p, text) >= 0.6 and has_dates_of(p, text) for p in parts)


def lead_words(text: str) -> tuple[str, str]:
    """Split leading role words ('expected', 'the system answered', 'got') from the content."""
    tokens = text.split()
    filler = {"the", "a", "was", "is", "were", "be", "been", "have", "has", "but", "and", "it", "its", "with", "said",
              "says", "would", "of", "as", "which", "what", "answer", "instead"}
    i = 0
    while i < len(tokens) and (tokens[i].lower().strip(",:") in filler or CUES["gold"].fullmatch(tokens[i].strip(",:"))
                               or CUES["answered"].fullmatch(tokens[i].strip(",:"))):
        i += 1
    if i == 0 or i == len(tokens) or role_of(" ".join(tokens[:i])) is None:
        return "", text
    return " ".join(tokens[:i]), " ".join(tokens[i:]).strip(" \"'“”")


def role_of(words_before: str) -> str | None:
    if CUES["gold"].search(words_before):
        return "gold"
    if CUES["answered"].search(words_before):
        return "answer"
    return None


def is_statement(text: str, is_name: Callable[[str], bool]) -> bool:
    """A third-person sentence about a named person ('Zane went to Greece yesterday')."""
    body = _DATE_STAMP.sub("", text).strip()
    if len(words(body)) < 3 or FIRST_PERSON.search(body):
        return False
    subjects = (_SUBJECT.match(b) for b in (body, _DATE_LEAD.sub("", body, count=1)))
    return any(m and is_name(m.group(1)) and m.group(2) not in _NOT_VERBS for m in subjects)


def is_advice(sentence: str, is_name: Callable[[str], bool]) -> bool:
    """A general instruction: imperative or modal, about no named person and no example."""
    s = sentence.strip().strip("-*• ")
    if not s or s.endswith("?") or re.search(r"\d", s) or QUOTE.search(s):
        return False
    if any(is_name(t) for t in re.findall(r"\b[A-Z][\w'-]*", s)[1:]):
        return False
    first = s.split()[0].lower().strip(",:")
    return first in _IMPERATIVE or bool(_MODAL.search(s))


def assign_answers(ex: Example, phrases: list[tuple[str, str | None]]) -> None:
    """Which short phrase is the gold answer and which the system's (see the module docstring)."""
    ex.gold = next((p for p, r in phrases if r == "gold"), None)
    ex.answer = next((p for p, r in phrases if r == "answer"), None)
    free = [p for p, r in phrases if r is None and p not in (ex.gold, ex.answer)]
    if ex.gold is None and ex.answer is None and len(free) >= 2:
        ex.gold, ex.answer = _orient(ex, free[0], free[1])
    elif ex.gold is None and free:
        ex.gold = free[0]
    elif ex.answer is None and free:
        ex.answer = free[0]


def _orient(ex: Example, a: str, b: str) -> tuple[str, str]:
    q = analyze(ex.question) if ex.question else None
    if q is not None and q.kind == "when" and has_absolute_date(a) != has_absolute_date(b):
        return (a, b) if has_absolute_date(a) else (b, a)
    sources = [t for _, t in ex.turns] + ex.held
    if is_abstention(a) != is_abstention(b):
        real = b if is_abstention(a) else a
        person = subject_of_question(ex.question)
        about = [t for s, t in ex.turns if person and (s == person or re.search(rf"\b{person}\b", t))]
        return (real, a if real == b else b) if any(holds(t, real) for t in about) else (a if real == b else b, real)
    supported = [any(holds(t, p) for t in sources) for p in (a, b)]
    if supported[0] != supported[1]:
        return (a, b) if supported[0] else (b, a)
    return a, b


def subject_of_question(question: str) -> str | None:
    """The person a question is about: its first capitalised word after the first that is no common word."""
    for token in re.findall(r"\b[A-Z][\w'-]*", question)[1:] if question[:1].isupper() else []:
        if token.removesuffix("'s").lower() not in NOT_NAMES:
            return token.removesuffix("'s")
    return None

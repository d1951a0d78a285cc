"""The parts of a feedback example and the words that tell them apart (used by `memopt.simlm.examples`).

`CUES` holds the words of each role in every language of `feedback_cues.yaml` ("expected", "Erwartet" and
"esperada" mark the gold answer; "overwrote", "überschrieb" and "sobrescribió" a replacement). `Example` is what one
example shows. The rest reads single pieces of text: whether a phrase holds another (`holds`), which role words
lead a piece (`lead_words`, `role_of`), whether a piece is a statement about a named person (`is_statement`) or a
general instruction (`is_advice`), which of two unlabelled answers is the gold one (`assign_answers`), and which of
two memories a sentence says replaced the other, in whatever voice, order and language (`replacement`,
`label_side`, `unquoted_replacement`, `unquoted_removal`): "X was overwritten by Y", "Y overwrote X", "replaced X
with Y", "X → Y", "changed from X to Y", "hat X mit Y überschrieben", "memory before: X ... after: Y".
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from memopt.core.text import DATE_PATTERN, MONTHS, STOPWORDS, WEEKDAYS, has_absolute_date, words
from memopt.judge.rules import has_dates_of, recall
from memopt.simlm.answering import analyze, is_abstention

__all__ = ["Example", "holds", "lead_words", "role_of", "is_statement", "is_advice", "assign_answers", "replacement",
           "label_side", "unquoted_replacement", "unquoted_removal", "QUESTION", "QUOTE", "FIRST_PERSON", "NOT_NAMES",
           "WORDS", "SAY", "CUES", "LABEL_WORDS", "ERROR_NAME"]

QUESTION = re.compile(r"(?:(?<![\w'])|(?<=[\s(\[=:]')|(?<=^'))((?:when|what|where|who|whom|whose|which|why|how|did|"
                      r"does|do|is|are|was|were|has|have|had|can|could|will|would)\b[^?\n\"“”]*\?)", re.I)
QUOTE = re.compile(r'"([^"\n]{1,400}?)"|“([^”\n]{1,400}?)”|(?<![\w])\'((?:[^\'\n]|\b\'\b){1,400}?)\'(?![\w])')
FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|I'd|I'll)\b|\b(?i:me|my|mine|myself|we|our|us|we're|we've)\b")
ERROR_NAME = re.compile(r"\b[A-Z][a-z]+(?:[A-Z][a-z]+)*(?:Error|Failure|Fault)\b")  # 'ExtractionError'
_DATE_STAMP = re.compile(r"^\s*\[[^\]]{1,60}\]\s*")
_SUBJECT = re.compile(r"^([A-Z][a-z][\w-]*)(?:'s)?\s+([a-z][\w'-]*)")
# A leading time phrase that ends in a date: 'the week before 3 July 2023 Caroline went ...', 'On 7 May 2023, ...'.
_DATE_LEAD = re.compile(r"^(?-i:[a-z]+\s+|On\s+|The\s+){0,4}?(?:" + DATE_PATTERN.pattern + r")\s*,?\s+(?-i:(?=[A-Z]))",
                        re.IGNORECASE)
_MODAL = re.compile(r"\b(should|must|need to|needs to|ought to|has to|have to)\b(?!\s+have\b)", re.I)


@functools.cache
def _fold_char(c: str) -> str:
    return unicodedata.normalize("NFKD", c.lower())[:1] or c


def _fold(text: str) -> str:
    """Lower case with accents folded and '_' a space, one character for one (offsets stay valid)."""
    low = text.lower().replace("_", " ")
    return low if low.isascii() and len(low) == len(text) else "".join(map(_fold_char, text.replace("_", " ")))


class Cue:
    """The words of one role in every language of `feedback_cues.yaml`, matched as whole words on folded text."""

    def __init__(self, entries: list[str]) -> None:
        alts = sorted((re.escape(_fold(e)).replace(r"\*", r"\w*").replace(r"\ ", r"\s+") for e in entries),
                      key=len, reverse=True)
        self.pattern = re.compile(rf"(?<!\w)(?:{'|'.join(alts)})(?!\w)")
        self.words = frozenset(_fold(e) for e in entries if "*" not in e and " " not in e)

    def search(self, text: str) -> re.Match[str] | None:
        return self.pattern.search(_fold(text))

    def finditer(self, text: str) -> list[re.Match[str]]:
        return list(self.pattern.finditer(_fold(text)))

    def fullmatch(self, text: str) -> bool:
        return self.pattern.fullmatch(_fold(text).strip()) is not None


_TABLE = yaml.safe_load(Path(__file__).with_name("feedback_cues.yaml").read_text(encoding="utf-8"))
WORDS = {name: frozenset(ws) for name, ws in _TABLE.pop("words").items()}
# the verbs of saying and what may stand before them, as written (accents and all), for the patterns of turns
SAY = {role: "|".join(sorted({w for ws in _TABLE.pop(role).values() for w in ws}, key=len, reverse=True))
       for role in ("say", "say_before")}
CUES = {role: Cue([w for ws in langs.values() for w in ws]) for role, langs in _TABLE.items()}
NOT_NAMES = WORDS["not_names"] | STOPWORDS | {m.lower() for m in MONTHS + WEEKDAYS}
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
    text: str = ""  # the example as written, its lines together (what `memopt.simlm.example_claims` reads by shape)

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
    tokens, i = text.split(), 0
    while i < len(tokens):
        pair = " ".join(tokens[i:i + 2]).strip(",:")  # 'came back', 'rather than': a role of two words
        if len(tokens) > i + 2 and any(CUES[r].fullmatch(pair) for r in ("gold", "answered")):
            i += 2
        elif tokens[i].lower().strip(",:") in WORDS["leads"] or \
                any(CUES[r].fullmatch(tokens[i].strip(",:")) for r in ("gold", "answered")):
            i += 1
        else:
            break
    if i == 0 or i == len(tokens) or role_of(" ".join(tokens[:i])) is None:
        return "", text
    return " ".join(tokens[:i]), " ".join(tokens[i:]).strip(" \"'“”")


def role_of(words_before: str) -> str | None:
    """"gold" when the words name the expected answer (or end in 'instead of'), "answer" when they name the system's,
    else None ('read to answer' names neither: there the word is a verb)."""
    words_before = re.sub(r"\bto (?:answer|reply|respond)\b", "", words_before)
    instead = CUES["instead"].search(" ".join(words_before.split()[-4:]))  # 'it said Rocky instead of': Milo
    if CUES["gold"].search(words_before) or instead and not " ".join(words_before.split()[-4:])[instead.end():].strip():
        return "gold"
    return "answer" if CUES["answered"].search(words_before) else None


def is_statement(text: str, is_name: Callable[[str], bool]) -> bool:
    """A third-person sentence about a named person ('Zane went to Greece yesterday')."""
    body = _DATE_STAMP.sub("", text).strip()
    if len(words(body)) < 3 or FIRST_PERSON.search(body) or set(words(body)) & WORDS["pipeline"] or \
            re.match(r"[A-Z][\w']*(?: [a-z]\w*){1,2}:\s", body) or re.search(r"\b[a-z]\w*\.[a-z]\w+", body) or \
            ERROR_NAME.search(body):
        # 'Reviewer note: ...' is a label and its text; 'on the mem0.answer prompt', 'as ExtractionError' are about
        # the pipeline
        return False
    subjects = (_SUBJECT.match(b) for b in (body, _DATE_LEAD.sub("", body, count=1)))
    return any(m and is_name(m.group(1)) and m.group(2) not in ("and", "or", "with", "of", "in", "at", "from", "to",
                                                                  "for") for m in subjects)


def is_advice(sentence: str, is_name: Callable[[str], bool]) -> bool:
    """A general instruction: imperative or modal, about no named person and no example."""
    s = sentence.strip().strip("-*• ")
    if not s or s.endswith("?") or re.search(r"\d", s) or QUOTE.search(s):
        return False
    if any(is_name(t) for t in re.findall(r"\b[A-Z][\w'-]*", s)[1:]):
        return False
    return s.split()[0].lower().strip(",:") in WORDS["imperative"] or bool(_MODAL.search(s))


def assign_answers(ex: Example, phrases: list[tuple[str, str | None]]) -> None:
    """The gold answer and the system's: the first phrase each role names; without role words, the one that answers
    the question (an absolute date for a "when" question, a real answer when the question's person said it, the one
    the source turns support) is the gold, else the first."""
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
        person = next((t.removesuffix("'s") for t in re.findall(r"\b[A-Z][\w'-]*", ex.question)[1:]
                       if ex.question[:1].isupper() and t.removesuffix("'s").lower() not in NOT_NAMES), None)
        about = [t for s, t in ex.turns if person and (s == person or re.search(rf"\b{person}\b", t))]
        return (real, a if real == b else b) if any(holds(t, real) for t in about) else (a if real == b else b, real)
    supported = [any(holds(t, p) for t in sources) for p in (a, b)]
    if supported[0] != supported[1]:
        return (a, b) if supported[0] else (b, a)
    return a, b


# --- which memory replaced which ------------------------------------------------------------------------------------

_ARROW = re.compile(r"→|->|=>")
_BECAME = re.compile(r"\b(?:became|become|becomes|turn(?:ed|s|ing)?\s+into|into)\b|→|->|=>", re.I)


def change(text: str) -> re.Match[str] | None:
    """The first word of changing in a text ('overwrote', 'ersetzt', '→')."""
    found = [m for m in (CUES["change"].search(text), _ARROW.search(text)) if m]
    return min(found, key=lambda m: m.start()) if found else None


def _toward(text: str) -> bool:
    """Whether a text starts with a preposition pointing to the new memory ('by', 'with', 'to', 'mit', 'con')."""
    first = re.match(r"^\W*([^\W\d]+)", text)
    return bool(first and CUES["toward"].fullmatch(first.group(1)))


def replacement(before: str, between: str, after: str = "") -> bool | None:
    """For two memories quoted one after the other, with ``before`` the words ahead of the first, ``between`` the
    words between them and ``after`` the rest of their clause: True when the first is the old one, False when it is
    the new one, None when the words say nothing of a replacement."""
    verb = change(between)
    if verb:  # "X was overwritten by Y", "X became Y", "X changed to Y"; "Y overwrote X"
        passive = any(CUES["change"].search(" ".join(between[aux.end():].split()[:3]))
                      for aux in CUES["passive"].finditer(between))
        return passive or bool(_BECAME.search(between)) or _toward(between[verb.end():])
    lead = CUES["in_place_of"].search(" ".join(between.split()[:4]))  # "wrote X over Y": the first is new
    if lead and not " ".join(between.split()[:4])[:lead.start()].strip(" ,(“\"'"):
        return False
    tail = " ".join(before.split()[-8:])
    if change(tail) or re.search(r"\b(?:from|von)\s*$", tail, re.I):  # "replaced X with Y", "changed from X to Y"
        return True if change(tail) or CUES["toward"].search(" ".join(between.split()[:4])) or \
            _BECAME.search(between) else None
    clause = re.split(r"[,;.!?]", after)[0]
    if verb := change(clause):  # the verb last: "hat X mit Y überschrieben", "Y hat X ersetzt"; "X ... until Y
        return True if re.match(r"\s+(?:it|them)\b", clause[verb.end():]) else _toward(between)  # overwrote it"
    return None


def label_side(label: str) -> str | None:
    """``"old"`` when a field's label calls its memory the earlier one ("Memory before", "Old value"), ``"new"``
    when it calls it the later one ("After", "New memory"), else None."""
    old, new = CUES["old"].search(label), CUES["new"].search(label)
    return "old" if old and not new else "new" if new and not old else None


_NOUN = re.compile(r"^(?:the\s+|a\s+|its\s+|their\s+)?(?:(?:stored|old|new|existing|previous|earlier|original|"
                   r"compatible|related)\s+)*(?:memory|memories|fact|facts|entry|record|note|unit)\b\s*"
                   r"(?:that\s+says|saying|which\s+said|that|:|,)?\s*", re.I)
_END = re.compile(r"\s*(?:,|;|\.\s|\s(?:although|though|even though|because|since|while|but|so)\s).*$", re.I)


def _statement(text: str) -> str:
    return _END.sub("", _NOUN.sub("", text.strip(" .,;:"))).strip(" .,;:")


def _without_aux(text: str) -> str | None:
    """The text before a passive auxiliary it ends with ('X was', 'X has been', 'X got'), or None."""
    aux = re.search(r"\s+(?:has\s+been|had\s+been|" + "|".join(sorted(CUES["passive"].words, key=len, reverse=True))
                    + r")(?:\s+\w+ly)?\s*$", text, re.I)
    return text[:aux.start()] if aux else None


def unquoted_replacement(text: str, is_statement: Callable[[str], bool]) -> tuple[str, str] | None:
    """(old, new) when a sentence says without quotes that one memory replaced another: "X was overwritten by Y",
    "V X with Y" (the verb first), "Y overwrote X"; each side must read as a statement about someone."""
    for verb in sorted([*CUES["change"].finditer(text), *_ARROW.finditer(text)], key=lambda m: m.start()):
        left, right = text[:verb.start()], text[verb.end():]
        by = re.split(rf"\s+(?:{'|'.join(CUES['toward'].words)})\s+", right, maxsplit=1, flags=re.I)
        if _without_aux(left) is not None and len(by) == 2:  # "X was overwritten by Y"
            pair = (_statement(_without_aux(left) or ""), _statement(by[1]))
        elif len(by) == 2 and is_statement(_statement(by[0])):  # "the update replaced X with Y"
            pair = (_statement(by[0]), _statement(by[1]))
        elif re.match(r"(?:→|->|=>|became|become|becomes|turn)", verb.group(0), re.I):  # "X -> Y", "X became Y"
            pair = (_statement(left.split(":")[-1]), _statement(right))
        else:  # "Y overwrote X"
            pair = (_statement(right), _statement(left.split(":")[-1]))
        if all(is_statement(side) for side in pair):
            return pair
    return None


def unquoted_removal(text: str, is_statement: Callable[[str], bool]) -> str | None:
    """The memory a sentence says was removed, without quotes: "the update removed X", "X was deleted"."""
    for verb in CUES["removal"].finditer(text):
        left, right = text[:verb.start()].split(":")[-1], text[verb.end():]
        kept = _without_aux(left)
        for side in ((_statement(kept),) if kept is not None else ()) + (_statement(right),):
            if is_statement(side):
                return side
    return None

"""Reading instruction text the way a reader of English does: sentences, clauses, quotes and negation.

`read_sentences(text)` splits instructions into sentences (lines, sentence punctuation, bullets; a line
wrapped inside a sentence is joined back) and each sentence into clauses (at ``; : ( ) — –`` and
"but"). Every word token records:

- ``quoted``: it stands between quotes. Quoted text is an example, not an instruction: a negation
  word inside quotes ("say 'I don't know'") negates nothing, but the quoted words still count as
  what the sentence talks about.
- ``scope``: the id of the negation or contrast that covers it (0 = none). A scope opens after
  "not", "n't", "never", "nor", "without", "avoid", "refrain from", "no need to", "no", and the
  contrasts "instead of", "rather than", "as opposed to", "in place of"; it closes at
  punctuation, at a conjunction or subordinator ("but", "if", "when", "unless", "because", "that",
  ...), or at the next negation. A comma closes it unless a short list follows ("do not shorten,
  abbreviate or truncate"). A negation inside a subordinate clause ("if the context does not
  support it say ...") also closes before the next instruction verb; "without" and "no" cover a
  few words only ("no relative dates", but "under no circumstances" to the end of the clause).
  "not only" / "not just" puts what follows in a contrast scope ("every speaker, not only the
  user"), as "over" does after "prefer". "Don't forget to" / "never fail to" negate nothing, and a
  clause ending its subject with "is not allowed", "is unnecessary", "are forbidden", ... negates
  the subject ("guessing is not allowed").
- ``rationale``: it stands in a "because ..." / "since ..." clause, which explains and instructs
  nothing.
- ``condition``: it stands in a condition or exception ("unless ...", "if ...", "when ..."). A cue's
  concept found in the main clause outweighs the same concept in its condition ("do not restrict
  extraction to the user unless only one person speaks": the "only" restricts nothing).

A negation inside a subject or relative clause ("questions the memories cannot answer are ...", "a
fact that does not contradict it should be added") ends at the main clause's finite verb; "not"
before a participle after a noun ("memories not named by the retraction stay") covers the
participle phrase only; "under no circumstances should X, Y or Z be V-ed" reaches past the list's
commas to the verb. A match that reaches past "over" / "than" into a contrast is in the contrast.

`Clause.find(pattern)` returns the matches of a regular expression over the clause's words (joined
by single spaces, lower case), each with the scope of its first word.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["Word", "Match", "Clause", "Sentence", "read_sentences"]

_TOKEN = re.compile(r"[a-z0-9]+(?:['’][a-z]+)*(?:-[a-z0-9]+)*|->|[→=;:,()!?—–]|(?<![\w])-(?![\w])")
_QUOTE_PAIRS = {'"': '"', "“": "”", "‘": "’", "'": "'", "«": "»"}
_ABBREV = re.compile(r"\b(e\.g|i\.e|etc|vs|approx|cf)\.", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!]+(?=\s|$)")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)]|[a-z][.)])\s+", re.IGNORECASE)

_NEG_WORDS = frozenset({
    "not", "never", "nor", "neither", "without", "avoid", "avoids", "avoiding", "cannot", "dont", "doesnt",
    "didnt", "isnt", "arent", "cant", "wont", "shouldnt", "mustnt", "neednt", "wouldnt", "couldnt", "havent",
    "hasnt", "wasnt", "werent",
})
_CONTRASTS = (("instead", "of"), ("rather", "than"), ("as", "opposed", "to"), ("in", "place", "of"))
_ADDITIVE = frozenset({"only", "just", "merely", "simply"})
_STOP_WORDS = frozenset({
    "but", "however", "otherwise", "unless", "except", "if", "when", "whenever", "where", "wherever", "while",
    "whereas", "because", "since", "though", "although", "yet", "so", "then", "that", "which", "who", "whose",
    "before", "after", "once", "until", "instead", "rather",
})
_STOP_PUNCT = frozenset({";", ":", "(", ")", "—", "–", "-", "->", "→", "=", "!", "?"})
_CLAUSE_PUNCT = frozenset({";", ":", "(", ")", "—", "–", "?"})
_SHORT_SCOPE = {"without": 3, "no": 4}
_SUBORDINATORS = frozenset({
    "if", "when", "whenever", "unless", "where", "wherever", "once", "whether", "that", "which", "who",
    "whose", "while", "although", "though", "because", "since",
})
_INSTRUCTION_VERBS = frozenset({
    "say", "reply", "answer", "respond", "return", "write", "output", "state", "give", "add", "keep", "use",
    "delete", "remove", "update", "extract", "record", "include", "list", "combine", "resolve", "convert",
    "abstain", "leave", "copy", "store", "replace", "overwrite", "expand", "drop", "ignore", "treat", "make",
    "put", "provide", "compute", "calculate", "merge", "mark",
})
_RATIONALE = frozenset({"because", "since"})
_NO_WAY = frozenset({"circumstances", "case", "account", "point", "time", "way"})
_DOUBLE_NEGATIVE = frozenset({"forget", "fail", "neglect", "hesitate"})
_COPULAS = frozenset({"is", "are", "be", "was", "were", "it's"})
_PROHIBITED = frozenset({"forbidden", "prohibited", "disallowed", "unnecessary", "discouraged", "unacceptable",
                         "banned"})
_DUTY = frozenset({"job", "responsibility", "task", "concern", "role", "business", "duty", "problem"})
_OWNER = frozenset({"your", "our", "my", "the", "a", "part", "within"})
_MODALS = frozenset({"is", "are", "was", "were", "be", "should", "must", "shall", "may", "can", "will", "ought", "gets",
                     "get", "needs"})
_AUXILIARIES = frozenset({"must", "may", "should", "shall", "can", "will", "could", "would", "might"})
_IRREGULAR_PARTICIPLES = frozenset({"known", "given", "said", "told", "written", "taken", "shown", "meant", "made",
                                    "held", "kept", "left", "withdrawn", "spoken", "seen"})
_CONDITIONS = frozenset({"unless", "except", "if", "when", "whenever", "once", "until"})
_FINITE = frozenset({"is", "are", "was", "were", "should", "must", "shall", "will", "may", "can", "might", "would",
                     "could", "has", "have", "needs"})
_IMPERATIVE_PREFIX = frozenset({"please", "just", "simply", "also", "so", "then", "thus", "therefore", "always",
                                "ever", "you", "we", "i", "and", "or", "kindly", "still"})
_RELATIVE = frozenset({"that", "which", "who", "whose"})
_COMPARATIVES = frozenset({"better", "preferable", "safer", "wiser", "rather"})
_PERMITTED = frozenset({"allowed", "permitted", "needed", "necessary", "required", "acceptable", "wanted", "desired",
                        "ok", "okay", "advisable", "helpful", "useful"})


@dataclass(frozen=True)
class Word:
    """One word (or punctuation mark) of a sentence."""

    text: str
    quoted: bool = False
    scope: int = 0
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

    def find(self, pattern: re.Pattern[str]) -> tuple[Match, ...]:
        """Matches of ``pattern`` over this clause's words."""
        found = []
        for m in pattern.finditer(self.text):
            start = bisect_right(self.offsets, m.start()) - 1
            first = self.words[start]
            found.append(Match(start, first.scope or self._contrasted(start, m.end()), first.rationale))
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
    """A sentence: its clauses and the whole sentence as one clause."""

    clauses: tuple[Clause, ...]
    whole: Clause


def _clause(words: list[Word]) -> Clause:
    offsets, pos = [], 0
    for w in words:
        offsets.append(pos)
        pos += len(w.text) + 1
    return Clause(tuple(words), " ".join(w.text for w in words), tuple(offsets))


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


def _split_sentences(text: str) -> list[str]:
    """Lines (wrapped lines joined back), then sentence punctuation outside quotes."""
    lines: list[str] = []
    for raw in _ABBREV.sub(lambda m: m.group(1), text).splitlines():
        line = raw.strip()
        if not line:
            lines.append("")
            continue
        joins = lines and lines[-1] and not re.search(r"[.!?:]$", lines[-1]) and line[0].islower() \
            and not _BULLET.match(raw)
        if joins:
            lines[-1] = f"{lines[-1]} {line}"
        else:
            lines.append(_BULLET.sub("", line))
    sentences: list[str] = []
    for line in lines:
        if not line:
            continue
        mask = quote_mask(line)
        start = 0
        for m in _SENTENCE_END.finditer(line):
            if not mask[m.start()]:
                sentences.append(line[start:m.end()])
                start = m.end()
        sentences.append(line[start:])
    return [s.strip() for s in sentences if re.search(r"[A-Za-z]", s)]


def _tokens(sentence: str) -> list[Word]:
    mask = quote_mask(sentence)
    low = sentence.lower().replace("’", "'")
    return [Word(m.group().replace("'", "") if m.group().endswith("n't") else m.group(), quoted=mask[m.start()])
            for m in _TOKEN.finditer(low)]


def _cue(words: list[Word], i: int) -> int:
    """Length of the negation or contrast cue at word ``i`` (0 if none)."""
    w = words[i]
    if w.quoted:
        return 0
    nxt = [x.text for x in words[i + 1:i + 4]]
    for cue in _CONTRASTS:
        if (w.text, *nxt[:len(cue) - 1]) == cue:
            return len(cue)
    if w.text == "than" and any(x.text in _COMPARATIVES for x in words[max(0, i - 12):i]):
        return 1
    if w.text == "over" and any(x.text.startswith(("prefer", "favo")) for x in words[max(0, i - 6):i]):
        return 1
    if w.text == "not" and nxt[:1] and nxt[0] in _ADDITIVE:
        return 2
    if w.text == "no" and nxt[:1] == ["need"]:
        return 3 if nxt[1:2] in (["to"], ["for"]) else 2
    if w.text == "no" and nxt[:1] and nxt[0] in _NO_WAY:
        return 2
    if w.text == "no":
        return 0 if nxt[:1] == ["longer"] else 1
    if w.text in ("nothing", "none") and _clause_start(words, i) and _predicate_follows(words, i):
        return 1
    if w.text == "refrain" and nxt[:1] == ["from"]:
        return 2
    if w.text in _NEG_WORDS:
        return 0 if nxt[:1] and nxt[0] in _DOUBLE_NEGATIVE and nxt[1:2] == ["to"] else 1
    return 0


def _prohibited(words: list[Word]) -> int:
    """Where a clause ends its subject with "is not allowed", "are forbidden", ... (-1 if it does not)."""
    for i in range(len(words) - 1):
        if words[i].quoted:
            continue
        if words[i].text in _AUXILIARIES and [w.text for w in words[i + 1:i + 3]] in (["not", "be"], ["never", "be"]):
            return i
        if words[i].text not in _COPULAS:
            continue
        rest = [w.text for w in words[i + 1:i + 3]]
        if rest[:1] and rest[0] in _PROHIBITED or rest[:1] in (["not"], ["never"]) and rest[1:2] and \
                rest[1] in _PERMITTED:
            return i
        if rest[:1] in (["not"], ["never"]) and [w.text for w in words[i + 2:i + 4]] == ["to", "be"]:
            return i
        duty = [w.text for w in words[i + 1:i + 6]]
        if duty[:1] == ["not"] and duty[1:2] and duty[1] in _OWNER and _DUTY & set(duty[2:]):
            return i
    return -1


def _list_follows(words: list[Word], i: int, segment: int) -> bool:
    """After the comma at ``i``: does a list of short items continue ("shorten, abbreviate or truncate")?"""
    if segment > 2:
        return False
    item = 0
    for w in words[i + 1:]:
        if w.text in _STOP_PUNCT or w.text in (",", ".") or (w.text in _STOP_WORDS and not w.quoted):
            return False
        if w.text in ("and", "or", "nor"):
            return item > 0
        item += 1
        if item > 2:
            return False
    return False


_NOTHING_BUT = (("beyond",), ("but",), ("except",), ("other", "than"), ("more", "than"), ("apart", "from"))


def _more_than(words: list[Word]) -> list[Word]:
    """"Never delete more than one memory", "no more than three", "delete nothing beyond the retracted memory"
    restrict, they do not negate: read them as "only"."""
    out = list(words)
    for i in range(len(out) - 2, -1, -1):
        if out[i].text == "nothing" and not out[i].quoted:
            for tail in _NOTHING_BUT:
                if tuple(w.text for w in out[i + 1:i + 1 + len(tail)]) == tail:
                    out[i:i + 1 + len(tail)] = [_with(out[i], text="only")]
                    break
            continue
        if out[i].text != "more" or out[i + 1].text != "than" or out[i].quoted:
            continue
        for j in (i - 1, i - 2):
            if j >= 0 and out[j].text in ("not", "never", "no") and not out[j].quoted and \
                    all(w.text not in _STOP_PUNCT and w.text != "," for w in out[j + 1:i]):
                out[i:i + 2] = [_with(out[i], text="only")]
                del out[j]
                break
    return out


def _aside_end(words: list[Word], i: int) -> int:
    """Index of the ")" closing the aside that opens at ``i`` (-1 if none, or if the aside holds a negation)."""
    for k in range(i + 1, len(words)):
        if words[k].text == ")":
            return k
        if words[k].text == "(" or _cue(words, k):
            return -1
    return -1


def _clause_start(words: list[Word], i: int) -> bool:
    return i == 0 or words[i - 1].text in _CLAUSE_PUNCT or words[i - 1].text in (",", "and")


def _predicate_follows(words: list[Word], i: int) -> int:
    """Where the predicate of a subject opened by "no" at ``i`` starts ("No detail (...) is to be dropped"), or 0."""
    k, seen = i + 1, 0
    while k < len(words) and seen < 16:
        t = words[k].text
        if t == "(" and (close := _aside_end(words, k)) > 0:
            k = close + 1
            continue
        if t in _STOP_PUNCT or t == "." or t in _STOP_WORDS and t not in _RELATIVE:
            return False
        if t in _MODALS:
            return k
        k, seen = k + 1, seen + (t != ",")
    return 0


def _participle(word: str) -> bool:
    return word.endswith("ed") or word in _IRREGULAR_PARTICIPLES


def _phrase_length(words: list[Word], k: int) -> int:
    """Length of a prepositional phrase at ``k`` ("by the retraction"): preposition, determiner, noun; else 0."""
    if words[k].text not in ("by", "in", "from", "at", "on", "with", "to"):
        return 0
    n = 1
    if k + n < len(words) and words[k + n].text in ("the", "a", "an", "this", "that", "any", "its", "their"):
        n += 1
    return n + 1 if k + n < len(words) else n


def _in_subject(words: list[Word], i: int) -> bool:
    """Does the negation at ``i`` stand in a subject phrase ("Questions the memories cannot answer are ...")?

    Some words precede it in its clause and none is a modal, a copula or an imperative's adverb: the finite
    verb that follows then starts the main predicate, which the negation does not reach.
    """
    prefix = []
    for w in reversed(words[:i]):
        if w.text in _CLAUSE_PUNCT or w.text in (",", ".") or w.text in _STOP_WORDS:
            break
        prefix.append(w.text)
    if prefix and prefix[0] in ("do", "does", "did"):
        prefix = prefix[1:]
    return bool(prefix) and not any(t in _FINITE or t in _COPULAS or t in _IMPERATIVE_PREFIX for t in prefix)


def _scope_end(words: list[Word], i: int, length: int, subordinate: bool) -> tuple[int, bool]:
    """Where the scope of the cue at ``i`` ends, and whether another cue inside it stops it (a double negation)."""
    w = words[i]
    predicate = _predicate_follows(words, i) if w.text in ("no", "nothing", "none") and length == 1 and \
        _clause_start(words, i) else 0
    passive_no = predicate > 0
    embedded = not passive_no and (subordinate or _in_subject(words, i))
    # "under no circumstances should X, Y or Z be dropped": the negated verb ends the clause, past its commas
    inverted = w.text == "no" and length == 2 and i + 2 < len(words) and words[i + 2].text in _AUXILIARIES
    short = _SHORT_SCOPE.get(w.text, len(words)) if length == 1 and not passive_no else len(words)
    if w.text == "not" and embedded and i + 1 < len(words) and _participle(words[i + 1].text):
        # a reduced relative ("memories not named by the retraction stay ..."): the participle and its phrase
        short = 1 + (_phrase_length(words, i + 2) if i + 2 < len(words) else 0)
    j, segment, limit = i + length, 0, i + length + short
    while j < min(len(words), limit):
        t = words[j]
        if not t.quoted:
            if t.text == "(" and (close := _aside_end(words, j)) > 0:
                j = close + 1
                continue
            if t.text == "," and j > predicate and not _list_follows(words, j, segment) and not (
                    inverted and j + 1 < len(words) and words[j + 1].text not in _INSTRUCTION_VERBS):
                break
            if _cue(words, j):
                return j, True
            if t.text in _STOP_PUNCT or t.text == "." or t.text in _STOP_WORDS and not (
                    passive_no and t.text in _RELATIVE):
                break
            if subordinate and t.text in _INSTRUCTION_VERBS and j > i + length:
                break
            if embedded and t.text in _FINITE and j > i + length and words[j - 1].text not in ("to", "not"):
                break
        segment = 0 if t.text == "," else segment + 1
        j += 1
    return j, False


def _mark(words: list[Word]) -> list[Word]:
    """Negation and contrast scopes, and rationale clauses.

    A negation inside another negation's scope cancels it ("no date is to be kept without being converted":
    the conversion is what is asked), so its words are left unscoped.
    """
    out = list(words)
    scope_id, i, subordinate, cancelled = 0, 0, False, False
    while i < len(out):
        w = out[i]
        if w.text in _CLAUSE_PUNCT or w.text == ",":
            subordinate = cancelled = False
            i += 1
            continue
        if not w.quoted and w.text in _SUBORDINATORS:
            subordinate = True
        length = _cue(out, i)
        if not length:
            if not w.quoted and w.text in _RATIONALE and (i + 1 == len(out) or out[i + 1].text != "of"):
                j = i
                while j < len(out) and out[j].text not in _CLAUSE_PUNCT and out[j].text != ",":
                    out[j] = _with(out[j], rationale=True)
                    j += 1
            i += 1
            continue
        end, nested = _scope_end(out, i, length, subordinate)
        if not cancelled:
            scope_id += 1
            for j in range(i + length, end):
                if out[j].text not in ("(", ")"):
                    out[j] = _with(out[j], scope=scope_id)
        cancelled = nested and not cancelled
        i = end
    start = 0
    for end in [k for k, w in enumerate(out) if w.text in _CLAUSE_PUNCT and w.text not in "()"] + [len(out)]:
        subject = _prohibited(out[start:end])
        if subject > 0:
            scope_id += 1
            negation = out[start + subject + 1].text in ("not", "never")
            # one negation: the subject shares the scope of the predicate it negates ("X is not to be added")
            shared = out[start + subject + 2].scope if negation and start + subject + 2 < end else 0
            for k in range(start, start + subject):
                if not out[k].scope:
                    out[k] = _with(out[k], scope=shared or scope_id)
            after = start + subject + 3
            infinitive = start + subject + 2 < end and out[start + subject + 2].text in ("to", "be") or \
                after < end and out[after].text == "to"
            if negation and not infinitive:
                for k in range(start + subject + 2, end):
                    out[k] = _with(out[k], scope=0)
        start = end + 1
    return out


def _conditions(words: list[Word]) -> list[Word]:
    """Mark the words of a condition or exception ("unless the conversation has only one speaker") up to the
    clause's end: they qualify the instruction, they do not give it."""
    out, inside = list(words), False
    for k, w in enumerate(out):
        if w.text in _CLAUSE_PUNCT or w.text in (",", "."):
            inside = False
        elif not w.quoted and w.text in _CONDITIONS:
            inside = True
        if inside:
            out[k] = _with(w, condition=True)
    return out


def _with(w: Word, **changes: object) -> Word:
    return Word(**{**w.__dict__, **changes})


def _clauses(words: list[Word]) -> list[list[Word]]:
    """Clauses at clause punctuation and "but"; an aside in parentheses is its own clause, the words around it one."""
    clauses: list[list[Word]] = [[]]
    outer: list[Word] | None = None
    for k, w in enumerate(words):
        if w.quoted:
            clauses[-1].append(w)
        elif w.text == "(" and outer is None and _aside_end(words, k) > 0:
            outer = clauses[-1]
            clauses.append([])
        elif w.text == ")" and outer is not None:
            clauses.append(outer)
            outer = None
        elif w.text == ":" and len(clauses) == 1 and 0 < len(clauses[0]) <= 2:
            continue  # a label and its value ("Speakers: all of them") read as one clause
        elif w.text in _CLAUSE_PUNCT or w.text == "but":
            clauses.append([])
        else:
            clauses[-1].append(w)
    unique: list[list[Word]] = []
    for c in clauses:
        if c and not any(c is u for u in unique):
            unique.append(c)
    return unique


@lru_cache(maxsize=8192)
def read_sentences(text: str) -> tuple[Sentence, ...]:
    """The sentences of an instruction text, each read into clauses with quotes, scopes and rationale."""
    out = []
    for raw in _split_sentences(text):
        words = _conditions(_mark(_more_than(_tokens(raw))))
        if not words:
            continue
        whole = _clause([w for w in words if w.text not in _CLAUSE_PUNCT])
        out.append(Sentence(tuple(_clause(c) for c in _clauses(words)), whole))
    return tuple(out)

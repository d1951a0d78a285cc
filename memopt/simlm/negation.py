"""Negation and contrast: which words a "not", "never", "no", "without", "refrain from", "rather than" covers.

A scope opens after "not", "n't", "never", "nor", "without", "avoid", "refrain from", "no need to", "no", and
the contrasts "instead of", "rather than", "as opposed to", "in place of"; it closes at punctuation, at a
conjunction or subordinator ("but", "if", "when", "unless", "because", "that", ...), or at the next negation
(a negation inside a negation cancels it: "no date is to be kept without being converted"). A comma closes
it unless a short list follows ("do not shorten, abbreviate or truncate"). A negation inside a subordinate
clause closes before the next instruction verb; "without" and "no" cover a few words only ("no relative
dates", but "under no circumstances" to the end of the clause). "not only" / "not just" puts what follows in
a contrast ("every speaker, not only the user"), as "over" does after "prefer", "to" after "preferred" ("an honest
'not mentioned' is preferred to a guess") and "than" after "better". "Nothing" before a participle negates it
("nothing lost").
"Don't forget to" / "never fail to" negate nothing. A negation inside a subject or relative clause ("questions
the memories cannot answer are ...") ends at the main clause's finite verb; "not" before a participle after a
noun ("memories not named by the retraction stay") covers the participle phrase only; "under no circumstances
should X, Y or Z be V-ed" reaches past the list's commas to the verb.
"""

from __future__ import annotations

from memopt.simlm.words import (
    AUXILIARIES,
    CLAUSE_PUNCT,
    COPULAS,
    RELATIVE,
    STOP_PUNCT,
    STOP_WORDS,
    SUBORDINATORS,
    Word,
    with_,
)

__all__ = ["INSTRUCTION_VERBS", "aside_end", "cue", "list_follows", "mark_scopes", "predicate_follows"]

_NEG_WORDS = frozenset({
    "not", "never", "nor", "neither", "without", "avoid", "avoids", "avoiding", "cannot", "dont", "doesnt",
    "didnt", "isnt", "arent", "cant", "wont", "shouldnt", "mustnt", "neednt", "wouldnt", "couldnt", "havent",
    "hasnt", "wasnt", "werent",
    # Scots: "dinnae make something up", "ye cannae guess"
    "dinnae", "dinna", "didnae", "didna", "cannae", "canna", "winnae", "wouldnae", "shouldnae", "couldnae", "doesnae",
    "isnae", "arenae", "wasnae", "mustnae",
})
_CONTRASTS = (("instead", "of"), ("rather", "than"), ("as", "opposed", "to"), ("in", "place", "of"))
_ADDITIVE = frozenset({"only", "just", "merely", "simply"})
_SHORT_SCOPE = {"without": 3, "no": 4}
INSTRUCTION_VERBS = frozenset({
    "say", "reply", "answer", "respond", "return", "write", "output", "state", "give", "add", "keep", "use",
    "delete", "remove", "update", "extract", "record", "include", "list", "combine", "resolve", "convert",
    "abstain", "leave", "copy", "store", "replace", "overwrite", "expand", "drop", "ignore", "treat", "make",
    "put", "provide", "compute", "calculate", "merge", "mark",
})
_PREPOSITIONS = frozenset({"with", "of", "for", "in", "on", "at", "from", "by", "about", "to", "into", "under"})
_NO_WAY = frozenset({"circumstances", "case", "account", "point", "time", "way"})
_DOUBLE_NEGATIVE = frozenset({"forget", "fail", "neglect", "hesitate"})
_MODALS = frozenset({"is", "are", "was", "were", "be", "should", "must", "shall", "may", "can", "will", "ought", "gets",
                     "get", "needs"})
_IRREGULAR_PARTICIPLES = frozenset({"known", "given", "said", "told", "written", "taken", "shown", "meant", "made",
                                    "held", "kept", "left", "withdrawn", "spoken", "seen", "lost", "forgotten", "cut",
                                    "thrown", "gone"})
_FINITE = frozenset({"is", "are", "was", "were", "should", "must", "shall", "will", "may", "can", "might", "would",
                     "could", "has", "have", "needs"})
_IMPERATIVE_PREFIX = frozenset({"please", "just", "simply", "also", "so", "then", "thus", "therefore", "always",
                                "ever", "you", "we", "i", "and", "or", "kindly", "still"})
_CONTRAST_WORDS = frozenset({"than", "over", "to", "instead", "rather", "as", "in", "beats", "trumps", "outweighs"})
_COMPARATIVES = frozenset({"better", "preferable", "safer", "wiser", "rather"})


def cue(words: list[Word], i: int) -> int:
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
    if w.text == "to" and _compared_to(words, i):
        return 1
    if w.text in ("not", "dont", "doesnt") and nxt[:1] and nxt[0] in _ADDITIVE:
        return 2  # "not just X", "don't only X": X is contrasted, not forbidden
    if w.text == "no" and nxt[:1] == ["need"]:
        return 3 if nxt[1:2] in (["to"], ["for"]) else 2
    if w.text == "no" and nxt[:1] and nxt[0] in _NO_WAY:
        return 2
    if w.text == "no":
        return 0 if nxt[:1] == ["longer"] else 1
    if w.text in ("nothing", "none") and _clause_start(words, i) and (predicate_follows(words, i) or (
            i + 1 < len(words) and _participle(words[i + 1].text))):
        return 1  # "nothing is to be dropped", and verbless "nothing lost"
    if w.text in ("refrain", "abstain", "desist") and nxt[:1] == ["from"] or (w.text, *nxt[:2]) == ("steer", "clear",
                                                                                                     "of"):
        return 2 if w.text != "steer" else 3
    if w.text in ("beats", "trumps", "outweighs"):
        return 1  # a preference: "saying so beats guessing"
    if w.text in _NEG_WORDS:
        # a suggestion asks for what it names: "why not store them too?", "why don't you add synonyms?"
        suggestion = i > 0 and words[i - 1].text == "why" and w.text in ("not", "dont")
        return 0 if suggestion or nxt[:1] and nxt[0] in _DOUBLE_NEGATIVE and nxt[1:2] == ["to"] else 1
    return 0



_PREFERRED = frozenset({"preferred", "preferable", "superior"})
_DETERMINERS = frozenset({"a", "an", "the", "any", "one", "some", "every", "each", "your", "its", "their"})


def _compared_to(words: list[Word], i: int) -> bool:
    """Is the "to" at ``i`` the second term of a preference ("X is preferred to a guess"), not an infinitive?"""
    if not any(x.text in _PREFERRED for x in words[max(0, i - 3):i]) or i + 1 >= len(words):
        return False
    nxt = words[i + 1]
    return nxt.quoted or nxt.text in _DETERMINERS or nxt.text.endswith("ing")


def list_follows(words: list[Word], i: int, segment: int) -> bool:
    """After the comma at ``i``: does a list of short items continue ("shorten, abbreviate or truncate")?"""
    if segment > 2:
        return False
    item = 0
    for w in words[i + 1:]:
        if w.text in STOP_PUNCT or w.text in (",", ".") or (w.text in STOP_WORDS and not w.quoted):
            return False
        if w.text in ("and", "or", "nor"):
            return item > 0
        item += 1
        if item > 2:
            return False
    return False


def aside_end(words: list[Word], i: int) -> int:
    """Index of the ")" closing the aside that opens at ``i`` (-1 if none, or if the aside holds a negation)."""
    for k in range(i + 1, len(words)):
        if words[k].text == ")":
            return k
        if words[k].text == "(" or cue(words, k):
            return -1
    return -1


_CONCESSIVE = frozenset({"however", "whatever", "whichever", "regardless", "even"})


def comma_aside_end(words: list[Word], i: int) -> int:
    """Index of the comma closing a concessive aside that opens with the comma at ``i`` ("no detail, however
    small, is to be omitted"; ", no matter how minor,"), or -1: such an aside does not end a subject."""
    opener = [w.text for w in words[i + 1:i + 3]]
    if words[i].text != "," or not (opener[:1] and opener[0] in _CONCESSIVE or opener == ["no", "matter"]):
        return -1
    for k in range(i + 2, min(len(words), i + 8)):
        if words[k].text == ",":
            return k
        if words[k].text in STOP_PUNCT or words[k].text == "." or k > i + 3 and cue(words, k):
            return -1
    return -1


_COMPLEMENT = frozenset({"sure", "ensure", "ensures", "guarantee", "verify", "check"})


def _clause_start(words: list[Word], i: int) -> bool:
    """Does word ``i`` start a clause (after punctuation or "and"; "nothing" / "none" also after "make sure", "ensure":
    "make sure nothing the other speaker says is dropped")?"""
    return i == 0 or words[i - 1].text in CLAUSE_PUNCT or words[i - 1].text in (",", "and") or \
        words[i].text in ("nothing", "none") and words[i - 1].text in _COMPLEMENT


def predicate_follows(words: list[Word], i: int) -> int:
    """Where the predicate of a subject opened by "no" at ``i`` starts ("No detail (...) is to be dropped"), or 0."""
    k, seen = i + 1, 0
    while k < len(words) and seen < 16:
        t = words[k].text
        if t == "(" and (close := aside_end(words, k)) > 0 or t == "," and (close := comma_aside_end(words, k)) > 0:
            k = close + 1
            continue
        if t in STOP_PUNCT or t == "." or t in STOP_WORDS and t not in RELATIVE:
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
        if w.text in CLAUSE_PUNCT or w.text in (",", ".") or w.text in STOP_WORDS:
            break
        prefix.append(w.text)
    if prefix and prefix[0] in ("do", "does", "did"):
        prefix = prefix[1:]
    return bool(prefix) and not any(t in _FINITE or t in COPULAS or t in _IMPERATIVE_PREFIX for t in prefix)


def _scope_end(words: list[Word], i: int, length: int, subordinate: bool) -> tuple[int, bool]:
    """Where the scope of the cue at ``i`` ends, and whether another cue inside it stops it (a double negation)."""
    w = words[i]
    predicate = predicate_follows(words, i) if w.text in ("no", "nothing", "none") and length == 1 and \
        _clause_start(words, i) else 0
    passive_no = predicate > 0
    embedded = not passive_no and (subordinate or _in_subject(words, i))
    # "under no circumstances should X, Y or Z be dropped": the negated verb ends the clause, past its commas
    inverted = w.text == "no" and length == 2 and i + 2 < len(words) and words[i + 2].text in AUXILIARIES
    short = _SHORT_SCOPE.get(w.text, len(words)) if length == 1 and not passive_no else len(words)
    if w.text == "not" and embedded and i + 1 < len(words) and _participle(words[i + 1].text):
        # a reduced relative ("memories not named by the retraction stay ..."): the participle and its phrase
        short = 1 + (_phrase_length(words, i + 2) if i + 2 < len(words) else 0)
    # "questions with no supporting item return ...": a "no" after a preposition negates its noun phrase, not the verb
    phrase_no = w.text == "no" and length == 1 and i > 0 and words[i - 1].text in _PREPOSITIONS
    j, segment, limit = i + length, 0, i + length + short
    while j < min(len(words), limit):
        t = words[j]
        if not t.quoted:
            if t.text == "(" and (close := aside_end(words, j)) > 0 or \
                    passive_no and t.text == "," and (close := comma_aside_end(words, j)) > 0:
                j = close + 1
                continue
            if t.text == "," and j > predicate and not list_follows(words, j, segment) and not (
                    inverted and j + 1 < len(words) and words[j + 1].text not in INSTRUCTION_VERBS):
                break
            if cue(words, j):
                # a contrast ("... than to drop one") ends the negation; only a second negation cancels it
                return j, t.text not in _CONTRAST_WORDS
            result = t.text == "so" and "that" in [x.text for x in words[j + 1:j + 4]] or t.text == "that" and \
                j >= 2 and words[j - 2].text in ("so", "such")  # a consequence: "not so short that it loses names"
            # "after the first clause" is a preposition, not a subordinator: it stays in the scope
            preposition = t.text in ("after", "before") and j + 1 < len(words) and words[j + 1].text in _DETERMINERS
            if t.text in STOP_PUNCT or t.text == "." or t.text in STOP_WORDS and not (
                    passive_no and t.text in RELATIVE) and not result and not preposition:
                break
            if (subordinate or phrase_no) and t.text in INSTRUCTION_VERBS and j > i + length:
                break
            if phrase_no and t.text in _FINITE:
                break
            if embedded and t.text in _FINITE and j > i + length and words[j - 1].text not in ("to", "not"):
                break
        segment = 0 if t.text == "," else segment + 1
        j += 1
    return j, False


_BACK_REFERENCE = frozenset({"they", "them", "their", "theirs", "themselves", "it", "its", "he", "him", "his", "she",
                             "her", "those"})
_QUANTIFIERS = frozenset({"only", "solely", "exclusively", "every", "each", "all", "any", "both", "one", "a", "an"})
_PARTICLES = frozenset({"over", "out", "up", "down", "away", "past", "aside", "off"})


def _verb_only(words: list[Word], i: int, length: int, end: int) -> int:
    """Where a contrast over a gerund ends when the rest of the sentence refers back to the gerund's object ("instead
    of dismissing the other participant as small talk, store their facts"): after the gerund (and its particle), so the
    object is the topic of both sides and only the act is contrasted. Otherwise ``end``."""
    k = i + length
    if words[i].text not in ("instead", "rather", "as", "in") or k >= end or not words[k].text.endswith("ing") or \
            not any(w.text in _BACK_REFERENCE and not w.quoted for w in words[end:]):
        return end
    verb = k + 2 if k + 1 < end and words[k + 1].text in _PARTICLES else k + 1
    # a restricted or quantified object is what the contrast is about: "rather than deleting just the retracted one"
    return end if verb < end and words[verb].text in _ADDITIVE | _QUANTIFIERS else verb


def mark_scopes(words: list[Word]) -> list[Word]:
    """Negation and contrast scopes.

    A negation inside another negation's scope cancels it ("no date is to be kept without being converted":
    the conversion is what is asked), so its words are left unscoped.
    """
    out = list(words)
    scope_id, i, subordinate, cancelled = 0, 0, False, False
    while i < len(out):
        w = out[i]
        if w.text in CLAUSE_PUNCT or w.text == ",":
            subordinate = cancelled = False
            i += 1
            continue
        if not w.quoted and w.text in SUBORDINATORS:
            subordinate = True
        length = cue(out, i)
        if not length:
            i += 1
            continue
        end, nested = _scope_end(out, i, length, subordinate)
        contrast = w.text in _CONTRAST_WORDS or length == 2 and out[i + 1].text in _ADDITIVE
        if contrast:
            end = _verb_only(out, i, length, end)
        if not cancelled:
            scope_id += 1
            for j in range(i + length, end):
                if out[j].text not in ("(", ")"):
                    out[j] = with_(out[j], scope=scope_id, contrast=contrast)
        cancelled = nested and not cancelled
        i = end
    return out

"""What a colon or an ellipsis leaves the reader to supply: a "Don't:" label, an unquoted reply, a gapped verb.

- ``mark_literal_replies`` (before negation scopes): a short text ending the sentence after a reply verb and a colon
  ("reply exactly: Not mentioned", "answer with: not known") is the reply itself, a quote: its "not" negates nothing.
  The colon goes, so the reply verb and its reply are one clause and a negated verb covers the reply ("never
  answer with: Not mentioned" forbids it).
- ``mark_label_negation`` (after them): a negation that labels what follows ("Don't: ignore the other speaker.",
  "Avoid: guessing") negates the whole rest of the sentence, past the colon that would otherwise close it.
- ``restore_gapped_verb`` (before scopes): "Drop filler, but never the names" means "but never drop the names": the
  imperative verb that opens the sentence is supplied after a "but never / but not" that has none.
"""

from __future__ import annotations

from memopt.simlm.words import Word, with_

_REPLY_VERBS = frozenset({"reply", "replies", "answer", "respond", "say", "output", "return", "write", "print"})
_REPLY_FILLERS = frozenset({"exactly", "only", "with", "simply", "just", "literally", "verbatim", "then", "the",
                            "string", "text", "phrase", "words"})
_LITERAL_MAX = 5
_LABEL_NEGATIONS = (("dont",), ("do", "not"), ("never",), ("avoid",), ("not",), ("donts",), ("bad",), ("wrong",))
_BULLETS = frozenset({"-", "*", "•", "#", "##", "###"})


def _literal_after(words: list[Word], colon: int) -> tuple[int, int] | None:
    """(reply verb index, first literal word) when the colon at ``colon`` introduces a literal reply, else None."""
    k = colon - 1
    while k >= 0 and words[k].text in _REPLY_FILLERS:
        k -= 1
    rest = [w for w in words[colon + 1:] if w.text not in (".", "!")]
    if k < 0 or words[k].text not in _REPLY_VERBS or not rest or len(rest) > _LITERAL_MAX:
        return None
    if any(w.text in (":", ";", ",", "(", "—", "–") for w in rest):
        return None
    return k, colon + 1


def _literals(words: list[Word]) -> list[tuple[int, int]]:
    return [span for i, w in enumerate(words) if w.text == ":" and not w.quoted
            and (span := _literal_after(words, i)) is not None]


def mark_literal_replies(words: list[Word]) -> list[Word]:
    """A reply given after a colon without quotes is quoted (see the module docstring)."""
    spans = _literals(words)
    if not spans:
        return words
    start = spans[-1][1]
    # the colon goes: the reply verb and its reply are one clause, and a negation of the verb covers the reply
    return [*words[:start - 1], *(with_(w, quoted=True) for w in words[start:])]


def mark_label_negation(words: list[Word]) -> list[Word]:
    """A negation that labels the rest of the sentence ("Don't: ...") negates all of it."""
    k = 0
    while k < len(words) and words[k].text in _BULLETS:
        k += 1
    for label in _LABEL_NEGATIONS:
        end = k + len(label)
        if tuple(w.text for w in words[k:end]) == label and end < len(words) and words[end].text == ":":
            scope = 1 + max((w.scope for w in words), default=0)
            return [*words[:end + 1],
                    *(with_(w, scope=0 if w.scope else scope, contrast=False) for w in words[end + 1:])]
    return words


_GAP_VERBS = frozenset({
    "add", "keep", "use", "delete", "remove", "update", "extract", "record", "include", "combine", "resolve",
    "convert", "leave", "copy", "store", "replace", "overwrite", "expand", "drop", "ignore", "merge", "cut", "trim",
    "strip", "omit", "skip", "shorten", "abbreviate", "discard", "erase", "lose", "compress", "summarise", "summarize",
})
_NOUN_PHRASE_START = frozenset({"a", "an", "the", "any", "their", "its", "his", "her", "your", "those", "these"})


def restore_gapped_verb(words: list[Word]) -> list[Word]:
    """Supply the sentence's imperative verb to a "but never the names" that has none (see the module docstring)."""
    k = 0
    while k < len(words) and words[k].text in _BULLETS:
        k += 1
    if k >= len(words) or words[k].text not in _GAP_VERBS or words[k].quoted:
        return words
    out = list(words)
    for i in range(len(out) - 3, k, -1):
        if out[i].text == "but" and out[i + 1].text in ("never", "not") and out[i + 2].text in _NOUN_PHRASE_START:
            out.insert(i + 2, Word(words[k].text))
    return out

"""Splitting instructions into sentences and clauses, and marking the clauses that do not instruct.

Sentences end at lines (a line wrapped inside a sentence is joined back), bullets and sentence punctuation
outside quotes; a question mark does not end one. Clauses end at ``; : ( ) — – ?`` and "but"; an aside in
parentheses is its own clause and the words around it one. A "because ..." / "since ..." clause explains
(``rationale``); an "unless / if / when ..." clause qualifies (``condition``).
"""

from __future__ import annotations

import re

from memopt.simlm.config_values import config_as_text
from memopt.simlm.negation import INSTRUCTION_VERBS, aside_end, list_follows
from memopt.simlm.words import CLAUSE_PUNCT, GROUND, Word, quote_mask, with_

__all__ = ["split_sentences", "split_clauses", "mark_conditions", "mark_rationale", "drop_hedges"]

_ABBREV = re.compile(r"\b(e\.g|i\.e|etc|vs|approx|cf)\.", re.IGNORECASE)
_DOCSTRING = re.compile(r'"""|\'\'\'')
# a prompt quoted after its label ("system: '...'", "instructions = \"...\"") is the instructions, not an example
_QUOTED_PROMPT = re.compile(r"""^(\s*)(?:system(?:[ _]prompt)?|prompt|instructions?)\s*[:=]\s*(['"`])(.+)\2\s*,?\s*$""",
                            re.IGNORECASE | re.MULTILINE)
# shorthand: "rel. times", "abs. date", "w/ owner", "w/o rounding"
_SHORTHAND = ((re.compile(r"\brel\.(?=\s)", re.IGNORECASE), "relative"),
              (re.compile(r"\babs\.(?=\s)", re.IGNORECASE), "absolute"),
              (re.compile(r"\bw/o\b", re.IGNORECASE), "without"), (re.compile(r"\bw/(?=\s)", re.IGNORECASE), "with"))
_SENTENCE_END = re.compile(r"[.!]+(?=\s|$)")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)]|[a-z][.)])\s+", re.IGNORECASE)
_RATIONALE = frozenset({"because", "since"})
_CONDITIONS = frozenset({"unless", "except", "if", "when", "whenever", "once", "until"})


def split_sentences(text: str) -> list[str]:
    """Lines (wrapped lines joined back), then sentence punctuation outside quotes; configuration entries are read
    as clauses (`memopt.simlm.config_values`)."""
    lines: list[str] = []
    text = _QUOTED_PROMPT.sub(r"\1\3", config_as_text(text))
    for pattern, words in _SHORTHAND:
        text = pattern.sub(words, text)
    # a docstring's triple quotes delimit the instructions, they do not quote an example
    for raw in _DOCSTRING.sub(" ", _ABBREV.sub(lambda m: m.group(1), text)).splitlines():
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


def mark_rationale(words: list[Word]) -> list[Word]:
    """Mark a "because ..." / "since ..." clause (not "because of"): it explains and instructs nothing."""
    out = list(words)
    for i, w in enumerate(out):
        if w.quoted or w.text not in _RATIONALE or w.scope or i + 1 < len(out) and out[i + 1].text == "of":
            continue
        if i > 0 and out[i - 1].text in GROUND:
            continue  # "just because X" names a ground the sentence weighs, not a reason it gives
        j = i
        while j < len(out) and out[j].text not in CLAUSE_PUNCT and out[j].text != ",":
            out[j] = with_(out[j], rationale=True)
            j += 1
    return out


def mark_conditions(words: list[Word]) -> list[Word]:
    """Mark the words of a condition or exception ("unless the conversation has only one speaker") up to the
    clause's end: they qualify the instruction, they do not give it."""
    out, inside, segment = list(words), False, 0
    for k, w in enumerate(out):
        # "unless every name, number and place survives": a short list goes on past its comma
        listed = w.text == "," and inside and list_follows(words, k, segment) and k + 1 < len(words) \
            and words[k + 1].text not in INSTRUCTION_VERBS
        if (w.text in CLAUSE_PUNCT or w.text in (",", ".")) and not listed:
            inside = False
        elif not w.quoted and w.text in _CONDITIONS:
            inside, segment = True, -1
        segment = 0 if w.text == "," else segment + 1
        if inside:
            out[k] = with_(w, condition=True)
    return out


def split_clauses(words: list[Word]) -> list[tuple[list[Word], bool]]:
    """Clauses at clause punctuation and "but"; an aside in parentheses is its own clause, the words around it one.
    Each clause comes with whether it is such an aside."""
    clauses: list[list[Word]] = [[]]
    outer: list[Word] | None = None
    asides: list[list[Word]] = []
    for k, w in enumerate(words):
        if w.quoted:
            clauses[-1].append(w)
        elif w.text == "(" and outer is None and aside_end(words, k) > 0:
            outer = clauses[-1]
            clauses.append([])
            asides.append(clauses[-1])
        elif w.text == ")" and outer is not None:
            clauses.append(outer)
            outer = None
        elif w.text == ":" and len(clauses) == 1 and 0 < len(clauses[0]) <= 2:
            continue  # a label and its value ("Speakers: all of them") read as one clause
        elif w.text in CLAUSE_PUNCT or w.text == "but":
            clauses.append([])
        else:
            clauses[-1].append(w)
    unique: list[list[Word]] = []
    for c in clauses:
        if c and not any(c is u for u in unique):
            unique.append(c)
    return [(c, any(c is a for a in asides)) for c in unique]


_HEDGES = (("by", "itself"), ("in", "itself"), ("on", "its", "own"), ("by", "themselves"), ("on", "their", "own"),
           ("alone",), ("as", "such"))


def drop_hedges(words: list[Word]) -> list[Word]:
    """Without a hedge between commas (", by itself,"): it qualifies without changing what the clause says, so a
    negation before it reaches past it ("is never, by itself, grounds for ...")."""
    out = list(words)
    for i in range(len(out) - 1, -1, -1):
        if out[i].text != "," or out[i].quoted:
            continue
        for hedge in _HEDGES:
            n = len(hedge)
            if tuple(w.text for w in out[i + 1:i + 1 + n]) == hedge and i + 1 + n < len(out) and \
                    out[i + 1 + n].text == ",":
                del out[i:i + 2 + n]
                break
    return out

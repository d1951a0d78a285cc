"""Lengths and counts a clause prescribes, as ranges that two rules can find disjoint.

- **length** of the output (or of each item): a class from 1 (one word) through 2 (a few words), 3 (a sentence),
  4 (a paragraph) to 5 (long, detailed, several paragraphs), read from words ("terse", "in detail", "explain your
  reasoning") and bounds ("at most 3 words", "at least two sentences"); a rule gives the range of classes it
  allows, and two rules clash when their ranges do not meet ("one word" / "full sentences");
- **bounds** in numbers: "at least 20 words", "no more than 3 sentences", "under 200 characters", "exactly 5
  words", "10 words or fewer", read as a range of words, sentences or characters of the output (or of each item),
  so two bounds that cannot both hold clash however far apart their length classes are ("less than 5-6 words" /
  "at least 20 words");
- **count** of facts, queries or memory operations: "at most three facts", "exactly one query", "several
  operations", "every fact, however many" (unbounded).

A bound that a negation governs ("do not write more than ...") is not read as a prescription of its own.
"""

from __future__ import annotations

import math
import re

from memopt.export.claims import Claim, negated

__all__ = ["length", "bounds", "counts"]

_NUMBERS = {"a": 1, "an": 1, "one": 1, "single": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20, "thirty": 30,
            "forty": 40, "fifty": 50, "hundred": 100}
_NUM = r"(?P<n>\d+|a|an|one|single|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|" \
       r"forty|fifty|hundred)(?:\s*(?:-|to|or)\s*(?P<m>\d+|two|three|four|five|six|seven|eight|nine|ten|twelve|" \
       r"fifteen|twenty))?"



def _count(token: str | None) -> float | None:
    if token is None:
        return None
    return float(token) if token.isdigit() else float(_NUMBERS.get(token, 0)) or None


def _words_class(n: float) -> float:
    return 1 if n <= 1 else 2 if n <= 4 else 3 if n <= 30 else 4 if n <= 150 else 5


_UPPER = re.compile(rf"\b(?P<q>under|at most|no more than|not more than|up to|maximum of|max|fewer than|less than|"
                    rf"below|within|limit(?:ed)? (?:\w+ )?to|only|exactly|just|in|with|as|be|of|to) {_NUM} "
                    rf"(?:\w+ )?(?P<unit>words?|sentences?|paragraphs?)\b")
_LOWER = re.compile(rf"\b(?P<q>at least|no fewer than|no less than|minimum of|more than|over|a minimum of) {_NUM} "
                    rf"(?:\w+ )?(?P<unit>words?|sentences?|paragraphs?)\b")
_LENGTH_MARKS: tuple[tuple[str, float, float], ...] = (  # pattern, lowest and highest length class it allows
    (r"\b(?:one|a single|single|just a|just one)[- ]word\b|\bone-word\b|\bsingle-word\b|\ba word\b", 1, 1),
    (r"\b(?:a few|a handful of|two or three|a couple of) words\b|\b(?:short |brief )?phrase\b|\bterse\b",
     0, 2),
    (r"\b(?:one|a single|single|one short|a short|one full|a full|a complete|one complete)[- ]sentence\b", 3, 3),
    (r"\b(?:full|complete|whole|proper) sentences?\b|\bin sentences\b", 3, math.inf),
    (r"\b(?:brief|briefly|short|shorter|terse|tersely)\b", 0, 4),
    (r"\b(?:a|one|single|flowing|short) paragraph\b", 3.5, 4),
    (r"\b(?:multi-paragraph|several paragraphs|multiple paragraphs|paragraphs)\b", 5, math.inf),
    (r"\b(?:in (?:full |great |some )?detail|detailed|thorough\w*|exhaustive\w*|elaborate\w*|at length|in depth|"
     r"in-depth|lengthy|long-form|comprehensive account)\b|\bdescribe every\b|\baccount of every\b", 5, math.inf),
    (r"\bexplain\w*|\breasoning\b|\bstep[- ]by[- ]step\b|\bjustif\w*", 3, math.inf),
)
_LENGTH_COMPILED = tuple((re.compile(p), lo, hi) for p, lo, hi in _LENGTH_MARKS)
_COUNT_UNITS = {"fact": "fact", "entr": "fact", "item": "fact", "memor": "fact", "bullet": "fact", "point": "fact",
                "quer": "query", "search": "query", "operation": "event", "event": "event", "decision": "event"}
_COUNT_NOUN = r"(?:(?:\w+ ){0,2}?)(?P<unit>facts?|entr(?:y|ies)|items?|memor(?:y|ies)|bullets?|bullet points|" \
              r"quer(?:y|ies)|search(?:es)?|operations?|events?|decisions?)\b"
_COUNT = re.compile(rf"\b(?P<q>at most|no more than|not more than|up to|maximum of|fewer than|less than|limit(?:ed)? "
                    rf"(?:\w+ )?to|at least|no fewer than|no less than|minimum of|more than|exactly|only|just|a "
                    rf"single|one single)? ?{_NUM} {_COUNT_NOUN}(?P<per> (?:per|for each|each|for every)\b)?")
_MANY = re.compile(rf"\b(?:several|multiple|many|a list (?:of|with)|a few) {_COUNT_NOUN}|\bone (?:\w+ )?(?P<unit2>"
                   rf"operation|event|decision)s? (?:for each|per) (?:of them|memory|affected|touched|one)\b")
_ALL = re.compile(r"\b(?:however many|no matter how many|never leave (?:one|any|a single)(?: \w+)? out|all of them|"
                  r"every single)\b")
_ONLY_THE = re.compile(r"\bonly the (?P<unit>query|search query|fact|operation|event)\b")


def length(text: str, target: str) -> list[Claim]:
    lo, his, said = 0.0, [], []
    for pattern, low, high in _LENGTH_COMPILED:
        m = pattern.search(text)
        if m and not negated(text[:m.start()]):
            lo, said = max(lo, low), said + [m[0]]
            if high < math.inf:
                his.append((m.start(), high))
    for m in _UPPER.finditer(text):
        n = _count(m["m"]) or _count(m["n"])
        if n is None or m["q"] in ("of", "to", "be", "with", "as", "in") and m["n"] in ("a", "an"):
            continue
        unit = m["unit"].rstrip("s")
        exact = m["q"] in ("exactly", "in", "with", "as", "be", "of", "to", "just") and not m["m"]
        top = _words_class(n) if unit == "word" else (3 if n <= 1 else 4 if n <= 5 else 5) if unit == "sentence" \
            else 4 if n <= 1 else 5
        if negated(text[:m.start()]):  # "never ... with only one word": longer than the bound
            lo, said = max(lo, top + 0.5), said + [f"not {m[0]}"]
            continue
        his.append((m.start(), top))
        if unit == "word" and exact:
            lo = max(lo, top - 0.5)
        elif unit == "sentence" and (exact or m["m"]):
            lo = max(lo, 3 if n <= 1 else 3.5)
        said.append(m[0])
    for m in _LOWER.finditer(text):
        n = _count(m["n"])
        if n is None:
            continue
        unit = m["unit"].rstrip("s")
        least = _words_class(n) if unit == "word" else (3 if n <= 1 else 4 if n < 8 else 5) if unit == "sentence" \
            else 5
        if negated(text[:m.start()]):  # "do not write at least ...": read as "shorter than the bound"
            his.append((m.start(), least - 0.5))
            said.append(f"not {m[0]}")
            continue
        lo = max(lo, least)
        said.append(m[0])
    if not said:
        return []
    alternatives = " or " in text and len(his) > 1
    hi = max(h for _, h in his) if alternatives else min((h for _, h in his), default=math.inf)
    return [Claim("length", "length", True, target, lo=lo, hi=hi, said=", ".join(said))]


_BOUND_UNIT = r"(?:\w+ )?(?P<unit>words?|sentences?|characters?|chars|letters?)\b"
_BOUND = re.compile(
    rf"\b(?P<q>at most|no more than|not more than|up to|a maximum of|maximum of|max(?:imum)?|under|fewer than|"
    rf"less than|below|within|shorter than|limit(?:ed)? (?:\w+ )?to|at least|no fewer than|no less than|"
    rf"a minimum of|minimum of|min(?:imum)?|more than|over|longer than|exactly) {_NUM} {_BOUND_UNIT}|"
    rf"\b(?P<n2>\d+) {_BOUND_UNIT.replace('unit', 'unit2')} or (?P<q2>fewer|less|more|longer|shorter)\b")
_CHARACTERS = {"word": (1, 20), "sentence": (1, 1000)}  # the fewest and most characters a word or sentence takes
_STRICT_UPPER = ("under", "fewer than", "less than", "below", "shorter than")
_LOWER_Q = ("at least", "no fewer than", "no less than", "a minimum of", "minimum of", "min", "minimum", "more than",
            "over", "longer than")


def bounds(text: str, target: str) -> list[Claim]:
    """The numeric bounds of a clause on words, sentences or characters, as ranges (see the module docstring)."""
    out = []
    for m in _BOUND.finditer(text):
        if negated(text[:m.start()]):
            continue
        if m["n2"]:
            n, q, unit = float(m["n2"]), m["q2"], m["unit2"]
            lo, hi = (n, math.inf) if q in ("more", "longer") else (0.0, n)
        else:
            low, top, q, unit = _count(m["n"]), _count(m["m"]), m["q"], m["unit"]
            if low is None:
                continue
            if q in _LOWER_Q:
                lo, hi = (low + 1 if q in ("more than", "over", "longer than") else low), math.inf
            elif q == "exactly":
                lo, hi = low, top or low
            else:
                hi = top or low
                lo, hi = 0.0, hi - 1 if q in _STRICT_UPPER else hi
        unit = "character" if unit.startswith(("char", "letter")) else unit.rstrip("s")
        out.append(Claim("count", f"{unit} of the {target}", True, target, lo=lo, hi=hi, said=m[0].strip()))
        if unit != "character":  # in characters too, generously, so words against characters clash only when far
            few, many = _CHARACTERS[unit]
            out.append(Claim("count", f"character of the {target}", True, target, lo=lo * few, hi=hi * many,
                             said=m[0].strip()))
    return out


def counts(text: str) -> list[Claim]:
    out = []
    for m in _COUNT.finditer(text):
        unit = next((u for key, u in _COUNT_UNITS.items() if m["unit"].startswith(key)), None)
        n, top = _count(m["n"]), _count(m["m"])
        if unit is None or n is None or negated(text[:m.start()]):
            continue
        q = m["q"] or ""
        if m["per"] and (n != 1 or q not in ("exactly", "only", "just", "a single", "one single")):
            if n == 1:
                continue  # "one fact per line" lays out, it does not count
        if q in ("at most", "no more than", "not more than", "up to", "maximum of") or q.startswith("limit"):
            lo, hi = 0.0, n
        elif q in ("fewer than", "less than"):
            lo, hi = 0.0, n - 1
        elif q in ("at least", "no fewer than", "no less than", "minimum of"):
            lo, hi = n, math.inf
        elif q == "more than":
            lo, hi = n + 1, math.inf
        elif top is not None:
            lo, hi = n, top
        elif q or re.search(r"\b(?:return|output|produce|give|write|list|generate|choose|emit|extract|keep)\w*\s+"
                            r"(?:\w+\s+){0,2}$", text[:m.start("n")]):
            lo, hi = n, n
        else:
            continue
        out.append(Claim("count", unit, True, lo=lo, hi=hi, said=m[0].strip()))
    for m in _MANY.finditer(text):
        word = m["unit"] or m["unit2"]
        unit = next((u for key, u in _COUNT_UNITS.items() if word.startswith(key)), None)
        if unit:
            out.append(Claim("count", unit, True, lo=2, said=m[0]))
    if _ALL.search(text):
        unit = next((u for key, u in _COUNT_UNITS.items() if re.search(rf"\b{key}", text)), "fact")
        out.append(Claim("count", unit, True, lo=math.inf, said=_ALL.search(text)[0]))  # type: ignore[index]
    m = _ONLY_THE.search(text)
    if m:
        unit = next(u for key, u in _COUNT_UNITS.items() if m["unit"].split()[-1].startswith(key))
        out.append(Claim("count", unit, True, lo=1, hi=1, said=m[0]))
    return out

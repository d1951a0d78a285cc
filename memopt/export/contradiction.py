"""Rules of one prompt that prescribe different actions for one condition: which one would the model follow?

`contradictions(text)` splits a prompt into rules (`memopt.export.rules`: sentences, bullets, numbered items, table
rows, JSON-ish rules, with their sections and labels), reads each as a condition and the prescriptions it makes
under it (`memopt.export.reading`; the prescriptions in `memopt.export.claims` and `memopt.export.quantities`, with
the vocabulary of `memopt.export.lexicon`), and reports two rules when

- their **prescriptions are incompatible**: opposite polarity on one action or object ("never record dates" /
  "begin with the session date"), two values of one dimension that exclude each other (JSON / plain prose, ISO /
  day-month-year, the question's language / always English, UPDATE / DELETE and ADD, keep the id / a fresh id), or
  ranges that cannot both hold (one word / at least two sentences, at most three facts / every fact however many);
- and their **conditions overlap**: both unconditional, or the same situation once its wording is made one
  ("the memories are silent" is "nothing in the memories answers it"), or one rule is universal ("always",
  "never", "every", "even when", "including") and covers the other's situation or object. A more specific rule
  beside a general one that is not universal reads as its exception ("Write numbers as digits" / "keep numbers in
  titles as written"), as do different situations ("no information" / "partial information");
- and **nothing links them**: neither states an exception or a priority ("except", "unless", "otherwise", "for all
  other questions", "by default", "takes precedence"), they do not sit in sections of different operations or
  under different memory-operation labels, and they are not about different fields or parts of the output.

It depends on no reader of instructions: the vocabulary is its own.
"""

from __future__ import annotations

from memopt.export.lexicon import EXCLUSIVE
from memopt.export.reading import Claim, Reading, Situation, read
from memopt.export.rules import split_rules

__all__ = ["contradictions", "readings"]

_SAME, _FIRST_BROADER, _SECOND_BROADER, _DIFFERENT = "same", "first broader", "second broader", "different"
_TARGETED = frozenset({"length", "format", "markdown", "reasoning"})  # dimensions whose target must be the same


def _by_inclusion(a: frozenset[str] | set[str], b: frozenset[str] | set[str]) -> str | None:
    """The same, or the one that names less broader; None when neither holds the other."""
    if a == b:
        return _SAME
    if a < b:
        return _FIRST_BROADER
    if b < a:
        return _SECOND_BROADER
    return None


def _alike(a: Situation, b: Situation) -> str:
    """How two situations relate: the same, one broader (it names less), or different."""
    ca, cb = {w for w in a if w.startswith("@")}, {w for w in b if w.startswith("@")}
    if ca or cb:
        if not ca or not cb:
            return _DIFFERENT  # plain words never name a situation the concepts name
        return _by_inclusion(ca, cb) or _DIFFERENT
    if (nested := _by_inclusion(a, b)) is not None:
        return nested
    shared = len(a & b)
    return _SAME if shared / min(len(a), len(b)) >= 0.6 and shared / max(len(a), len(b)) >= 0.5 else _DIFFERENT


def _object_alike(a: Situation, b: Situation) -> str:
    """Objects compare word for word: a qualifier ("the session date") makes an object narrower."""
    if (nested := _by_inclusion(a, b)) is not None:
        return nested
    shared = a & b
    if shared and {w for w in a if w.startswith("@")} == {w for w in b if w.startswith("@")} and \
            len(shared) / min(len(a), len(b)) >= 0.6:
        return _SAME
    return _DIFFERENT


def _meets(first: tuple[Situation, ...], u1: bool, second: tuple[Situation, ...], u2: bool,
           alike=_alike) -> bool:
    """Whether two rules' situations (or objects) meet: the same, or the broader rule universal."""
    if not first and not second:
        return True
    if not first or not second:
        return u1 if not first else u2
    for x in first:
        for y in second:
            relation = alike(x, y)
            if relation == _SAME or relation == _FIRST_BROADER and u1 or relation == _SECOND_BROADER and u2:
                return True
    return False


def _covers(widen: tuple[Situation, ...], condition: tuple[Situation, ...]) -> bool:
    return any(_alike(w, c) in (_SAME, _FIRST_BROADER) for w in widen for c in condition)


def _condition(reading: Reading, claim: Claim) -> tuple[Situation, ...]:
    """The situation a claim applies in: the rule's condition, within the memory operation its label names."""
    label = reading.rule.label
    if not label or claim.dim == "op":
        return reading.condition
    tag = frozenset({f"@op:{label}"})
    return tuple(c | tag for c in reading.condition) or (tag,)


def _overlap(a: Reading, ca: tuple[Situation, ...], b: Reading, cb: tuple[Situation, ...]) -> bool:
    return _meets(ca, a.universal, cb, b.universal) or _covers(a.widen, cb) or _covers(b.widen, ca)


def _range(claim: Claim) -> str:
    if claim.dim == "length":
        return claim.said
    return claim.said or f"{claim.lo:g}-{claim.hi:g} {claim.value}"


def _clash(x: Claim, rx: Reading, y: Claim, ry: Reading) -> str | None:
    """Why two claims cannot both be followed, or None."""
    if x.dim != y.dim:
        return None
    if x.target.startswith(("field:", "part:")) or y.target.startswith(("field:", "part:")) or x.dim in _TARGETED:
        if x.target != y.target:
            return None
    if x.dim in ("length", "count"):
        if x.value == y.value and max(x.lo, y.lo) > min(x.hi, y.hi):
            return f"{x.dim}: {_range(x)} / {_range(y)}"
        return None
    if x.dim == "op":
        xs, ys = set(x.value.split("+")), set(y.value.split("+"))
        if x.positive and y.positive and not xs & ys or x.positive != y.positive and (
                (ys if x.positive else xs) <= (xs if x.positive else ys)):
            return f"memory operation: {x.said} / {y.said}"
        return None
    if x.dim == "speakers":
        values = {x.value, y.value}
        if x.positive and y.positive and (values == {"first", "second"} or "both" in values and len(values) == 2) or \
                x.positive != y.positive and ("both" in values and len(values) == 2 or x.value == y.value):
            return f"speakers: {x.said} / {y.said}"
        return None
    if x.dim in ("include", "missing") and x.value == y.value:
        if x.positive != y.positive and _meets(x.objects, rx.universal, y.objects, ry.universal, _object_alike):
            return f"{'kept / left out' if x.dim == 'include' else x.value}: {x.said.strip()} / {y.said.strip()}"
        return None
    if x.value == y.value and x.positive != y.positive:
        return f"{x.dim}: {x.said} / {'not ' if not y.positive else ''}{y.said}"
    if x.value != y.value and x.positive and y.positive and x.dim in EXCLUSIVE:
        return f"{x.dim}: {x.said} / {y.said}"
    return None


def readings(text: str) -> list[Reading]:
    """Every rule of ``text`` read (`memopt.export.reading.read`), "them" taken from the clause before."""
    out: list[Reading] = []
    sentence, antecedent = None, ()
    for rule in split_rules(text):
        if rule.sentence != sentence:
            sentence, antecedent = rule.sentence, ()
        reading = read(rule, antecedent)
        found = next((c.objects for c in reading.claims if c.dim == "include" and c.objects), ())
        antecedent = antecedent or found
        out.append(reading)
    return out


def contradictions(text: str) -> list[tuple[str, str, str]]:
    """Each pair of rules of ``text`` that conflict, as ``(first, second, why)`` (the sentences as written)."""
    rules = [r for r in readings(text) if r.claims and not r.excepts]
    found: dict[tuple[str, str], list[str]] = {}
    for i, a in enumerate(rules):
        for b in rules[i + 1:]:
            if a.rule.sentence == b.rule.sentence or a.rule.section and b.rule.section and \
                    a.rule.section != b.rule.section:
                continue
            for x in a.claims:
                for y in b.claims:
                    if x.dim != y.dim:
                        continue
                    if x.dim == "op" and (a.rule.label and not a.condition or b.rule.label and not b.condition):
                        continue  # "UPDATE: update an existing memory" defines the label, it prescribes nothing
                    why = _clash(x, a, y, b)
                    if why and _overlap(a, _condition(a, x), b, _condition(b, y)):
                        reasons = found.setdefault((a.rule.sentence, b.rule.sentence), [])
                        if why not in reasons:
                            reasons.append(why)
    return [(first, second, "; ".join(why)) for (first, second), why in found.items()]

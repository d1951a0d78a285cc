"""What one sentence says about a directive: its cues read over the sentence's clauses, in their polarity.

A `Cue` names concepts (`memopt.simlm.concepts`) that, found together, speak for (+1) or against (-1) a
directive; a carrier under a negation or contrast flips the sign (`memopt.simlm.instructions` marks them). A
concept in a condition only qualifies the main clause; a situation described in an "if / when" clause
instructs nothing.
An exception to a rule does not revoke it: a sentence that opens "Exception:" and the act in "the only thing you may
drop is X" speak neither way. An act restricted by "only" ("delete is only for the fact the user denied") takes its
object from its own clause, not from another one. A carrier under "without" says what the clause's act must keep
("condense the log without losing a name"): it outweighs the act's own cue.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from memopt.simlm.concepts import CONCEPTS
from memopt.simlm.instructions import Clause, Match, Sentence
from memopt.simlm.words import COPULAS

__all__ = ["Cue", "sentence_stance"]


@dataclass(frozen=True)
class Cue:
    """Concepts that speak for (``sign`` +1) or against (-1) a directive when they occur together.

    The polarity of the ``carriers`` decides: a carrier under a negation or contrast ("do not
    convert", "rather than converting") flips the sign; two carriers under two different negations
    flip it twice. Each entry of ``requires`` must also occur ("A|B": either; "A-": negated; "!A": no quoted A). With
    ``negated_only`` the cue reads only negated carriers ("avoid vague time references").
    """

    sign: int
    carriers: tuple[str, ...]
    requires: tuple[str, ...] = ()
    negated_only: bool = False


@lru_cache(maxsize=65536)
def _find(clause: Clause, concept: str) -> tuple[Match, ...]:
    return clause.find(CONCEPTS[concept].pattern)


def _explains(clause: Clause, k: int) -> bool:
    """Does word ``k`` stand in a "because ..." / "since ..." clause (not an imagined setting, whose topic carries on:
    "in a calendar app you would convert relative dates; here they stay as spoken")?"""
    while k >= 0 and clause.words[k].rationale:
        if clause.words[k].text in ("because", "since"):
            return True
        k -= 1
    return False


def _required(requirement: str, context: Clause) -> frozenset[int] | None:
    """None when the requirement is missing; else the negation scopes that cover every match of it (empty when one
    match stands outside any: "same topic is not enough to update" denies the topic, not the update)."""
    if requirement.startswith("!"):  # no quoted example of it: an answer that is 'Not mentioned' guesses nothing
        return None if any(context.words[m.start].quoted for m in _find(context, requirement[1:])) else frozenset()
    scopes: set[int] = set()
    for option in requirement.split("|"):
        negated = option.endswith("-")
        # a requirement met only in a "because ..." clause is not met: the reason explains, it does not instruct
        found = [m for m in _find(context, option.rstrip("-")) if not _explains(context, m.start)]
        # a contrast opposes acts, not topics: "don't just forward the question; widen it" widens the question
        # (a requirement asking for the act negated, "OVERWRITE-", still reads the contrast: "added rather than merged")
        found = [Match(m.start, 0, m.rationale) if context.words[m.start].contrast and not negated else m
                 for m in found]
        if any(m.scope != 0 for m in found) if negated else found:
            if negated or any(m.scope == 0 for m in found):
                return frozenset()
            scopes.update(m.scope for m in found)
    return frozenset(scopes) if scopes else None


_SHORT_OF = re.compile(r"\b(?:not|never) (?:enough|sufficient|adequate)\b|\binsufficient\b|\binadequate\b")


def _falls_short(clause: Clause) -> bool:
    """Does the clause say its subject falls short ("X is not enough")? What it negates is a requirement denied."""
    return bool(_SHORT_OF.search(clause.text))


def _nearest(found: tuple[Match, ...], start: int) -> Match:
    return min(found, key=lambda m: abs(m.start - start))


def _main(found: list[Match], clause: Clause) -> list[Match]:
    """The matches outside conditions ("unless ...", "if ...") when there are any: the instruction is in the main
    clause, and a concept repeated in its condition only qualifies it."""
    main = [m for m in found if not clause.words[m.start].condition]
    return main or found


_HYPOTHESES = frozenset({"if", "when", "whenever", "once"})


def _in_hypothesis(clause: Clause, k: int) -> bool:
    """Is word ``k`` in a condition that states a situation ("if the answer is not mentioned, ...") rather than an
    exception that states a requirement ("don't summarise unless every name survives")?"""
    while k >= 0 and clause.words[k].condition:
        if clause.words[k].text in _HYPOTHESES and not clause.words[k].quoted:
            return True
        if clause.words[k].text in ("unless", "except", "until"):
            return False
        k -= 1
    return False


# what a condition can name for the main clause to take up: people and things, not the condition's own verb
_TOPICS = frozenset({"OTHER_PARTY", "ALL_PARTIES", "ROLES", "EVERYONE", "RELATIVE", "DETAIL", "DETAILS", "ITEM",
                     "ALL_ITEMS", "TERMS"})
_ANAPHORS = frozenset({"those", "these", "that", "them", "it", "both"})
_ADDITIVES = frozenset({"too", "also", "both"})


def _takes_up(clause: Clause) -> bool:
    """Does the main clause take up what its condition names, with an anaphor and an additive ("when the guest talks
    about her work, keep those facts as well")? Then the people or things the condition names are the instruction's
    object, not a situation."""
    main = [w.text for w in clause.words if not w.condition and not w.quoted]
    additive = bool(_ADDITIVES & set(main)) or any(main[k:k + 2] == ["as", "well"] for k in range(len(main) - 1))
    return additive and bool(_ANAPHORS & set(main))


_EXCEPTION_LEADS = (("exception",), ("exceptions",), ("one", "exception"), ("the", "only", "exception"),
                    ("the", "one", "exception"), ("the", "sole", "exception"), ("an", "exception"))
_SPARED = frozenset({"thing", "things", "word", "words", "part", "parts", "bit", "bits", "detail", "details"})


def _opens_exception(clause: Clause) -> bool:
    """Does the clause open with "Exception:", "One exception", "The only exception"?"""
    return any(tuple(w.text for w in clause.words[:len(lead)]) == lead for lead in _EXCEPTION_LEADS)


def _excepted(clause: Clause, k: int) -> bool:
    """Does word ``k`` name what a rule lets through rather than the rule: in a clause that opens with "Exception:" /
    "the one exception is", or in "the only thing you may drop" before its "is" (the act is allowed for what follows
    the "is" alone: the rule it excepts from stands)?"""
    texts = [w.text for w in clause.words]
    if _opens_exception(clause):
        return True
    for j in range(k - 1, max(k - 8, 0), -1):
        if texts[j] in COPULAS or clause.words[j].quoted:
            return False
        if texts[j] in _SPARED and texts[j - 1] in ("only", "sole"):
            return True
    return False


_RESTRICTIONS = frozenset({"ONLY_THAT", "LIMIT"})


def _restricted(clause: Clause, k: int) -> bool:
    """Is the act at word ``k`` restricted by an "only" right after it ("delete is only for the fact the user denied",
    "remove only what was retracted")? Then its object is the one it names, not one borrowed from another clause."""
    return any(w.text in ("only", "solely", "exclusively") and not w.quoted for w in clause.words[k + 1:k + 4])


def _evidence(cue: Cue, clause: Clause, context: Clause) -> int | None:
    """The cue's verdict on ``clause`` (requirements and second carriers read in ``context``), or None."""
    primary = [m for m in _find(clause, cue.carriers[0]) if not m.rationale and (m.scope or not cue.negated_only)
               and (not clause.words[m.start].quoted or cue.negated_only) and not _excepted(clause, m.start)]
    if context is not clause and cue.carriers[0] not in _RESTRICTIONS and primary and \
            all(_restricted(clause, m.start) for m in primary):
        return None  # "keep the others of the same person; delete is only for X": X is what goes, not the others
    required = [_required(r, context) for r in cue.requires]
    if not primary or any(r is None for r in required):
        return None
    # a requirement that only a negation outside the carrier's holds ("same topic is not enough to update", "drop
    # filler, but never the names") is denied: the cue speaks the other way
    gapped = context is not clause and all(_required(r, clause) is None for r in cue.requires)
    denied = (gapped or _falls_short(clause)) and any(r and not r & {m.scope for m in primary} for r in required)
    primary = _main(primary, clause)
    if all(_in_hypothesis(clause, m.start) for m in primary) and not all(w.condition for w in clause.words) \
            and not (cue.carriers[0] in _TOPICS and _takes_up(clause)):
        return None  # a situation described, not an instruction: the instruction is in the main clause
    others: list[tuple[Match, ...]] = []
    for name in cue.carriers[1:]:
        found = _main([m for m in _find(clause, name) if not m.rationale], clause)
        if not found:
            # borrowed from another clause: what it says counts, not that clause's negation
            found = _main([Match(m.start, 0, m.rationale) for m in _find(context, name) if not m.rationale], context)
        if not found:
            return None
        others.append(tuple(found))
    # each second carrier speaks with the primary match nearest to it ("draw on several memories than rely on one")
    paired = [m for m in primary if all(_nearest(tuple(primary), _nearest(o, m.start).start) is m for o in others)]
    votes = [cue.sign * (-1) ** (denied + len({m.scope, *(_nearest(o, m.start).scope for o in others)} - {0}))
             for m in paired or primary]
    total = sum(votes)
    return (1 if total > 0 else -1) if total else votes[-1]


def _under_without(cue: Cue, clause: Clause) -> bool:
    """Do the cue's carriers in ``clause`` all stand in a scope that "without" opens ("condense it without losing a
    name")?"""
    found = _find(clause, cue.carriers[0])
    for m in found:
        first = m.start
        while first > 0 and clause.words[first - 1].scope == m.scope:
            first -= 1
        if not m.scope or first == 0 or clause.words[first - 1].text != "without":
            return False
    return bool(found)


def _clause_vote(cues: tuple[Cue, ...], clause: Clause, context: Clause) -> int | None:
    """The verdict of the first cue that applies to ``clause``, unless a later cue says the opposite from under a
    "without": "condense the log without losing a name" asks for the names, whatever "condense" says alone."""
    verdicts = ((cue, v) for cue in cues if (v := _evidence(cue, clause, context)) is not None)
    first = next(verdicts, None)
    if first is None:
        return None
    if not _under_without(first[0], clause):
        for cue, v in verdicts:
            if v != first[1] and _under_without(cue, clause):
                return v
    return first[1]


def sentence_stance(cues: tuple[Cue, ...], sentence: Sentence) -> int:
    """What one sentence says about a directive with these cues: +1, -1 or 0.

    In each clause the first cue that applies decides; read within the clause it weighs 2, needing
    concepts from the rest of the sentence 1; an aside in parentheses comments on the sentence and weighs half.
    The sign of the sum decides; a tie, the last clause.
    """
    if _opens_exception(sentence.whole):
        return 0  # "Exception: a street address may be shortened": the rule it excepts from decides
    votes = []
    for clause in sentence.clauses:
        vote = _clause_vote(cues, clause, clause)
        vote = 2 * vote if vote is not None else _clause_vote(cues, clause, sentence.whole)
        if vote:
            votes.append(vote / 2 if clause.aside else vote)
    total = sum(votes)
    if total:
        return 1 if total > 0 else -1
    return (1 if votes[-1] > 0 else -1) if votes else 0

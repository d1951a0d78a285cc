"""SimLM as the reflection LM: propose revised instructions from an instruction and feedback.

It reads only the `ProposeInstructions` inputs: ``operation`` (which operation the instruction
drives), ``current_instruction``, ``feedback`` and ``n_candidates``. Like a person, it looks for the
examples in the feedback, whatever their format (`memopt.simlm.examples`), compares their parts to
infer what was lost in each (`memopt.simlm.diagnosis`), and keeps only the losses the operation
being rewritten could have caused (its kind, read from the operation's description by
`operation_kind`). Each candidate is the current instruction *edited* with a few rules
(`memopt.simlm.edits.edit`): a rule replaces the sentences it contradicts in place (or widens them), else
it becomes the next item of the prompt's rule list; sections, examples and output format are kept.
Every edit comes with a one-line rationale (the candidate's ``changes``). The rules are:

- with probability (1 − ``UNGROUNDED_RATE``) × the *strength* of the evidence (the mean,
  over the examples, of the confidence that this operation caused the example's loss), fixes of the
  losses the examples show: one drawn in proportion to how much the examples show it, and each
  other one with probability (its summed confidence / the number of examples), as a person who
  sees several distinct failures in the examples fixes several at once. A fix is a catalogue
  phrasing of the directive that prevents the loss; it never quotes the examples (their names and
  words are user data: a prompt holds generic or invented examples only);
- otherwise a generic rewrite (`generic`): a tone or format sentence, or a directive of the
  operation picked without evidence, each directive at the same base rate
  ``DIRECTIVE_BASE_RATE``. This is the same for every feedback without a grounded signal (a bare
  score, nothing, examples of another operation): no rate depends on what kind of feedback it is,
  only on what can be read from it;
- and, with probability ``ADVICE_FOLLOW_RATE``, when the feedback gives general advice ("Facts should
  be short; drop names and places."), that advice as a last instruction sentence: how often a
  reflective LM follows explicit advice even when the examples say otherwise (as an edit, it
  replaces the rules it contradicts, so it hurts when it removes a capability). Advice without a
  verb ("Only part of them.") is a fragment of the feedback, not an instruction: it is not followed.

Seeded and deterministic per (seed, prompt).
"""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import dataclass, field
from typing import Any

from memopt.simlm.diagnosis import LOSSES, diagnose, fixable
from memopt.simlm.directives import IRRELEVANT, Directive, active_directives, directives_for
from memopt.simlm.edits import edit, is_fragment
from memopt.simlm.example_claims import claimed
from memopt.simlm.examples import read_feedback

__all__ = ["propose", "operation_kind", "read_evidence", "generic", "Evidence", "ADVICE_FOLLOW_RATE",
           "UNGROUNDED_RATE", "DIRECTIVE_BASE_RATE"]

ADVICE_FOLLOW_RATE = 0.35  # how often a reflective LM follows explicit advice in the feedback
UNGROUNDED_RATE = 0.2  # how often it writes a generic rewrite even when the examples show a loss
DIRECTIVE_BASE_RATE = 0.06  # how often a generic rewrite happens to state one given directive

_KINDS = (
    (r"\bextract", "extract"),
    (r"\bsegment|\bsplit|\bboundar", "segment"),
    (r"\bsummar", "summarize"),
    (r"\bdecid|\bupdat|\bmerg|\bconsolidat", "update"),
    (r"\brewrit|\breformulat|\bquery\b", "rewrite_query"),
    (r"\banswer|\brespond|\breplies\b", "answer"),
    (r"\bprofile|\bmaintain", "profile"),
)


def operation_kind(operation: str) -> str | None:
    """The SimLM operation an operation description is about: the verb it starts from (the name as fallback).

    ``"evermemos.facts: extracts atomic facts from each MemCell"`` → ``extract``: the description is read
    first, and within it the earliest verb wins, so a noun later in the sentence does not decide.
    """
    name, sep, description = operation.partition(":")
    for text in ((description, name) if sep else (operation,)):
        found = [(m.start(), kind) for pattern, kind in _KINDS if (m := re.search(pattern, text, re.I))]
        if found:
            return min(found)[1]
    return None


@dataclass
class Evidence:
    """What the feedback shows an operation of one kind could fix."""

    kind: str
    examples: int = 0
    strength: float = 0.0
    weights: dict[str, float] = field(default_factory=dict)
    advice: list[str] = field(default_factory=list)


def read_evidence(kind: str, feedback: str) -> Evidence:
    """Read the examples and advice of a feedback text, for an operation of this kind."""
    reading = read_feedback(feedback)
    ev = Evidence(kind, len(reading.examples), advice=[a for a in reading.advice if not is_fragment(a)])
    best = 0.0
    for example in reading.examples:
        found = fixable(kind, diagnose(example))  # what its parts as read show, and what its error type and
        for loss, claim in fixable(kind, claimed(example)).items():  # values claim where the parts were misread
            found[loss] = max(found.get(loss, claim), claim)
        best += max((confidence for confidence, _ in found.values()), default=0.0)
        for loss, (confidence, _) in found.items():  # the example's fragment is user data: never quoted
            directive = LOSSES[loss][0]
            ev.weights[directive] = ev.weights.get(directive, 0.0) + confidence
    ev.strength = best / ev.examples if ev.examples else 0.0
    return ev


def _rng(seed: int, *parts: str) -> random.Random:
    digest = hashlib.sha256("\x1f".join((str(seed), *parts)).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def generic(rng: random.Random, missing: list[Directive]) -> str:
    """A rewrite without evidence: a tone or format sentence, or a directive (each at the base rate)."""
    if missing and rng.random() < DIRECTIVE_BASE_RATE * len(missing):
        return rng.choice(rng.choice(missing).phrasings)
    return rng.choice(IRRELEVANT)


def _advice_sentence(advice: str) -> str:
    text = advice.strip().rstrip(".;! ")
    return text[:1].upper() + text[1:] + "."


def _candidate(rng: random.Random, kind: str, missing: list[Directive], ev: Evidence) -> list[str]:
    grounded = [d for d in missing if ev.weights.get(d.id, 0.0) > 0]
    if not grounded or rng.random() >= (1 - UNGROUNDED_RATE) * ev.strength:
        added = [generic(rng, missing)]
    else:
        first = rng.choices(grounded, weights=[ev.weights[d.id] for d in grounded])[0]
        chosen = [first] + [d for d in grounded if d is not first and rng.random() < ev.weights[d.id] / ev.examples]
        added = [rng.choice(d.phrasings) for d in chosen]  # a catalogue phrasing, never a quote
    if ev.advice and rng.random() < ADVICE_FOLLOW_RATE:
        return [*added, _advice_sentence(rng.choice(ev.advice))]
    return added


def _rewrite(instruction: str, rules: list[str], kind: str) -> tuple[str, list[str]]:
    """The instruction with each rule applied as an edit, and one rationale line per change."""
    text, changes = instruction, []
    for rule in rules:
        done = edit(text, rule, kind)
        if done.change:
            text, changes = done.prompt, [*changes, done.change]
    return text.strip(), changes


def propose(inputs: dict[str, Any], seed: int) -> dict[str, Any]:
    """``n_candidates`` rewritten prompts for the operation, from the feedback, each with its changes."""
    instruction = str(inputs.get("current_instruction", "")).strip()
    feedback = str(inputs.get("feedback", ""))
    try:
        n = max(1, min(int(str(inputs.get("n_candidates", "3")).strip()), 12))
    except ValueError:
        n = 3
    kind = operation_kind(str(inputs.get("operation", ""))) or "answer"
    active = active_directives(kind, instruction)
    missing = [d for d in directives_for(kind) if d.id not in active]
    ev = read_evidence(kind, feedback)
    rng = _rng(seed, kind, instruction, feedback)
    candidates: list[dict[str, Any]] = []
    for _ in range(4 * n):
        if len(candidates) == n:
            break
        text, changes = _rewrite(instruction, _candidate(rng, kind, missing, ev), kind)
        if changes and all(c["prompt"] != text for c in candidates):
            candidates.append({"prompt": text, "changes": changes})
    return {"proposals": candidates}

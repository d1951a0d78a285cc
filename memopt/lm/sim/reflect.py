"""SimLM as the reflection LM: propose revised instructions from an instruction and feedback.

Each candidate is the current instruction plus one or two directive sentences (worded from the
directive's `phrasings`) whose theme matches the feedback, or, sometimes, an irrelevant sentence.
The match is read off the feedback text: each missing directive of the operation scores the number
of its ``symptoms`` the feedback contains. Feedback with no symptom at all (a bare score) gives
no signal: themes are then drawn at random, and most candidates are generic rewrites (an
irrelevant sentence, ``IRRELEVANT_RATE_NO_SIGNAL``) — as an LM told only "the score is low" mostly
rephrases; with a signal, ``IRRELEVANT_RATE``. Seeded, so the same prompt always gets the same
candidates.
"""

from __future__ import annotations

import hashlib
import random
from typing import Any

from memopt.lm.directives import IRRELEVANT, Directive, directives_for

__all__ = ["propose", "operation_kind", "IRRELEVANT_RATE", "IRRELEVANT_RATE_NO_SIGNAL"]

IRRELEVANT_RATE = 0.2
IRRELEVANT_RATE_NO_SIGNAL = 0.6
_KINDS = (
    ("rewrite_query", ("rewrite_query", "query rewrit", "search query", "rewrite the question")),
    ("update", ("update", "add/update/delete", "memory decision")),
    ("summarize", ("summar", "episode")),
    ("segment", ("segment", "boundar", "memcell")),
    ("profile", ("profile",)),
    ("extract", ("extract", "facts")),
    ("answer", ("answer",)),
)


def operation_kind(description: str) -> str | None:
    """Which SimLM operation an operation description talks about (first keyword match)."""
    low = description.lower()
    for kind, keys in _KINDS:
        if any(k in low for k in keys):
            return kind
    return None


def _rng(seed: int, *parts: str) -> random.Random:
    digest = hashlib.sha256("\x1f".join((str(seed), *parts)).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _scores(feedback: str, missing: list[Directive]) -> dict[str, int]:
    low = feedback.lower()
    return {d.id: sum(low.count(s) for s in d.symptoms) for d in missing}


def _pick(rng: random.Random, missing: list[Directive], scores: dict[str, int]) -> Directive:
    total = sum(scores.values())
    if total == 0:
        return rng.choice(missing)
    ranked = sorted(missing, key=lambda d: -scores[d.id])
    if rng.random() < 0.6:
        return ranked[0]
    return rng.choices(missing, weights=[scores[d.id] + 0.5 for d in missing])[0]


def propose(inputs: dict[str, Any], seed: int) -> dict[str, Any]:
    """``n_candidates`` revised instructions for the operation, from the feedback."""
    instruction = str(inputs.get("current_instruction", "")).strip()
    feedback = str(inputs.get("feedback", ""))
    try:
        n = max(1, min(int(str(inputs.get("n_candidates", "3")).strip()), 12))
    except ValueError:
        n = 3
    kind = operation_kind(str(inputs.get("operation", ""))) or "answer"
    missing = [d for d in directives_for(kind) if not d.present(instruction)]
    scores = _scores(feedback, missing)
    irrelevant = IRRELEVANT_RATE if sum(scores.values()) else IRRELEVANT_RATE_NO_SIGNAL
    rng = _rng(seed, kind, instruction, feedback)
    candidates: list[str] = []
    for _ in range(4 * n):
        if len(candidates) == n:
            break
        added: list[str] = []
        if not missing or rng.random() < irrelevant:
            added.append(rng.choice(IRRELEVANT))
        else:
            first = _pick(rng, missing, scores)
            added.append(rng.choice(first.phrasings))
            others = [d for d in missing if d is not first]
            if others and rng.random() < 0.3:
                added.append(rng.choice(_pick(rng, others, scores).phrasings))
        candidate = "\n".join([instruction, *added]).strip()
        if candidate not in candidates:
            candidates.append(candidate)
    return {"proposals": candidates}

"""LoCoMo's answer metrics: normalisation, token F1, exact match, per-category F1, and summaries.

The rules follow LoCoMo's official evaluation (snap-research/locomo, ``task_eval/evaluation.py``):

- category 1 (multi-hop): gold and prediction are split on ',' into sub-answers; each gold
  sub-answer scores its best token F1 against the prediction's sub-answers; the mean is the score;
- category 3 (open-domain): only the gold's first ';'-separated part counts;
- category 5 (adversarial, gold "Not mentioned"): 1.0 when the prediction abstains, else 0.0;
- every other category: token F1.

Two deliberate differences: stems come from PyStemmer's ``porter`` (via `memopt.core.text.stem`), not
NLTK's ``PorterStemmer`` whose default mode adds NLTK's own extensions, so a few rare words stem
differently; and abstention is recognised by `is_abstention` (a few more phrasings than LoCoMo's
"not mentioned" / "no information available"). `exact_match` compares normalised strings; LoCoMo
compares the sets of normalised tokens.

>>> round(token_f1("on 7 May 2023", "7 May 2023"), 4)
0.8571
"""

from __future__ import annotations

import re
import string
from collections import Counter
from dataclasses import dataclass
from statistics import fmean
from typing import Any

from memopt.core.text import stem

__all__ = ["normalize_answer", "token_f1", "exact_match", "locomo_f1", "is_abstention", "CaseScore", "summarize"]

_ARTICLES = re.compile(r"\b(a|an|the|and)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)
_ABSTAIN = re.compile(r"\b(not mentioned|no information|not enough information|unknown|cannot be answered|"
                      r"can't be answered|does not say|doesn't say|not stated|no mention)\b", re.I)


def normalize_answer(s: str) -> str:
    """LoCoMo's normalisation: drop commas, lowercase, drop punctuation, drop a/an/the/and, squeeze spaces."""
    text = s.replace(",", "").lower().translate(_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def _tokens(text: str) -> list[str]:
    return [stem(w) for w in normalize_answer(text).split()]


def token_f1(prediction: str, gold: str) -> float:
    """Token F1 between the Porter-stemmed normalised tokens of ``prediction`` and ``gold``."""
    predicted, expected = _tokens(prediction), _tokens(gold)
    same = sum((Counter(predicted) & Counter(expected)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(predicted), same / len(expected)
    return 2 * precision * recall / (precision + recall)


def exact_match(prediction: str, gold: str) -> float:
    """1.0 when the normalised prediction equals the normalised gold, else 0.0."""
    return float(normalize_answer(prediction) == normalize_answer(gold))


def is_abstention(text: str) -> bool:
    """Whether an answer declines to answer ("Not mentioned", "no information", ...)."""
    return bool(_ABSTAIN.search(text or ""))


def _multi_hop_f1(prediction: str, gold: str) -> float:
    predictions = [p.strip() for p in prediction.split(",")]
    return fmean(max(token_f1(p, g.strip()) for p in predictions) for g in gold.split(","))


def locomo_f1(prediction: str, gold: str, category: int) -> float:
    """The F1 LoCoMo's evaluation gives ``prediction`` for a question of ``category`` (see the module doc)."""
    if category == 1:
        return _multi_hop_f1(prediction, gold)
    if category == 3:
        return token_f1(prediction, gold.split(";")[0].strip())
    if category == 5:
        return 1.0 if is_abstention(prediction) else 0.0
    return token_f1(prediction, gold)


@dataclass(frozen=True)
class CaseScore:
    """The scores of one answered case; ``correct`` is the judge's verdict (None when not judged)."""

    case_id: str
    category: int
    f1: float
    em: float
    correct: bool | None = None


def _aggregate(scores: list[CaseScore]) -> dict[str, Any]:
    judged = [float(s.correct) for s in scores if s.correct is not None]
    return {
        "f1": round(fmean(s.f1 for s in scores), 4) if scores else 0.0,
        "em": round(fmean(s.em for s in scores), 4) if scores else 0.0,
        "judge": round(fmean(judged), 4) if judged else None,
        "n": len(scores),
    }


def summarize(scores: list[CaseScore]) -> dict[str, Any]:
    """Mean F1, EM and judge accuracy (4 decimals; F1 and EM 0.0 when empty) overall and per category."""
    categories = sorted({s.category for s in scores})
    return {
        **_aggregate(scores),
        "by_category": {str(c): _aggregate([s for s in scores if s.category == c]) for c in categories},
    }

"""Judging an answer: LoCoMo's F1 and exact match, the lexical rules, and the judges (lexical, LM, registered).

What it may import: `memopt.core`, `memopt.registry`, `memopt.taxonomy` and `memopt.lm` (the LM judge).
SimLM reads the lexical rules from here when it plays the judge, so nothing here imports SimLM.

- `metrics`: ``token_f1``, ``exact_match``, ``locomo_f1``, ``is_abstention``, summaries;
- `rules`: the lexical rules shared by `LexicalJudge` and SimLM as a judge LM;
- `judges`: the `Judge` protocol, `LexicalJudge`, `LMJudge`, the registry of named judges (``@judge``).
"""

from __future__ import annotations

from memopt.core.lazy import lazy_names

__all__ = ["Judge", "LexicalJudge", "LMJudge", "make_judge", "quote_data", "judge", "judges", "named_judge",
           "JUDGE_GROUP"]

_HOME = dict.fromkeys(__all__, "memopt.judge.judges")

__getattr__ = lazy_names("memopt.judge", _HOME, globals())


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])

"""The catalogue oracle: the best subset of catalogue directives per LLM op, chosen on val, reported on test.

SimLM's directive catalogue is public (`memopt.simlm.directives`), so what adding directive sentences
can reach is known without optimizing. Since several directives trade one thing for another on some
data (docs/simlm.md, "Trade-offs": abstaining costs recall where the evidence is paraphrased,
combining hurts single-hop questions, expanding the query brings in distractors at a small ``top_k``,
keeping every detail costs reply tokens), turning every directive on is *not* the ceiling: the
oracle appends to each op's seed instruction one phrasing of each directive of a **subset** of the
directives it lacks (its SimLM kind is read off its signature's output fields, as SimLM does), and
chooses the subsets and the knobs of ``optimizer.search`` on the val split. No optimizer runs.

The search is exhaustive within an op (every subset of its missing directives) and coordinate-wise
across ops and the knob grid: starting from the all-on prompt with its best knobs, it tries every
subset of one op (or every knob setting) with the rest fixed, keeps a strictly better val F1, and
sweeps until a sweep changes nothing (at most ``MAX_SWEEPS``). Directives the seed
already grants stay on. Its test F1 is the *ceiling* optimizer results are reported against, and an
optimizer's share of the ceiling's gain is ``(after − before) / (oracle − before)`` (`share_of_gain`).
The all-on prompt is reported beside it. It means something only with SimLM as task LM: a real LM
does not follow the catalogue.
"""

from __future__ import annotations

import itertools
from typing import Any

from memopt.optimize.experiment import Experiment
from memopt.systems.base import MemorySystem

__all__ = ["oracle_instructions", "subset_instructions", "directives_on", "missing_directives", "catalogue_oracle",
           "share_of_gain", "MAX_KNOB_COMBINATIONS", "MAX_SWEEPS"]

MAX_KNOB_COMBINATIONS = 12
MAX_SWEEPS = 4


def _kind(system: MemorySystem, op: str) -> str | None:
    from memopt.simlm import OPERATIONS

    signature = system.op_spec(op).signature
    outputs = frozenset(name for name in (signature.output_fields if signature else {}) if name != "reasoning")
    entry = OPERATIONS.get(outputs)
    return entry[0] if entry else None


def _readings(system: MemorySystem) -> dict[str, tuple[tuple[str, ...], frozenset[str]]]:
    """For every LLM op SimLM knows: its catalogue's directive ids, in catalogue order, and those its instruction
    grants (as SimLM reads the text: no LM call)."""
    from memopt.simlm import active_directives, directives_for

    out = {}
    for op, text in system.instructions().items():
        kind = _kind(system, op)
        if kind is not None:
            out[op] = (tuple(d.id for d in directives_for(kind)), active_directives(kind, text))
    return out


def directives_on(system: MemorySystem) -> dict[str, tuple[str, ...]]:
    """For every LLM op SimLM knows, the ids of the catalogue directives its instruction grants, in catalogue
    order."""
    return {op: tuple(d for d in ids if d in active) for op, (ids, active) in _readings(system).items()}


def missing_directives(system: MemorySystem) -> dict[str, tuple[str, ...]]:
    """For every LLM op SimLM knows, the ids of the catalogue directives its instruction does not grant."""
    return {op: tuple(d for d in ids if d not in active) for op, (ids, active) in _readings(system).items()}


def subset_instructions(system: MemorySystem, subsets: dict[str, tuple[str, ...]]) -> dict[str, str]:
    """Every LLM op's instruction with the first phrasing of each directive of its subset appended."""
    from memopt.simlm import CATALOGUE

    phrasing = {d.id: d.phrasings[0] for d in CATALOGUE}
    out = {}
    for op, text in system.instructions().items():
        added = [phrasing[i] for i in subsets.get(op, ())]
        out[op] = "\n".join([text.rstrip(), *added]).strip() if added else text
    return out


def oracle_instructions(system: MemorySystem) -> dict[str, str]:
    """The all-on prompt: every LLM op's instruction with one phrasing of each catalogue directive it lacks."""
    return subset_instructions(system, missing_directives(system))


def share_of_gain(before: float | None, after: float | None, oracle: float | None) -> float | None:
    """``(after − before) / (oracle − before)``; None when the oracle gains nothing over ``before``."""
    if before is None or after is None or oracle is None or oracle - before <= 1e-9:
        return None
    return round((after - before) / (oracle - before), 3)


Choice = tuple[tuple[tuple[str, tuple[str, ...]], ...], tuple[tuple[str, int], ...]]


class _Search:
    """Val F1 of (subsets, knobs) choices, each evaluated once."""

    def __init__(self, seed_system: MemorySystem, scorer: Any, valset: list[Any]) -> None:
        self.seed_system, self.scorer, self.valset = seed_system, scorer, valset
        self.scores: dict[Choice, float] = {}

    def system(self, choice: Choice) -> MemorySystem:
        subsets, knobs = dict(choice[0]), dict(choice[1])
        system = self.seed_system.with_instructions(subset_instructions(self.seed_system, subsets))
        return system.with_knobs(**knobs) if knobs else system

    def score(self, choice: Choice) -> float:
        if choice not in self.scores:
            self.scores[choice] = self.scorer.report(self.system(choice), {"val": self.valset})["val"]["f1"]
        return self.scores[choice]

    def better(self, a: Choice, b: Choice) -> bool:
        """Whether ``a`` has a strictly higher val F1 than ``b``."""
        return self.score(a) > self.score(b) + 1e-9


def _subsets(ids: tuple[str, ...]) -> list[tuple[str, ...]]:
    return [combo for r in range(len(ids) + 1) for combo in itertools.combinations(ids, r)]


def _best_subset(search: _Search, missing: dict[str, tuple[str, ...]], grid: list[dict[str, int]],
                 start: Choice) -> Choice:
    current = start
    for _ in range(MAX_SWEEPS):
        changed = False
        for op, ids in missing.items():
            for subset in _subsets(ids):
                candidate = (tuple((o, subset if o == op else s) for o, s in current[0]), current[1])
                if search.better(candidate, current):
                    current, changed = candidate, True
        for knobs in grid:
            candidate = (current[0], tuple(sorted(knobs.items())))
            if search.better(candidate, current):
                current, changed = candidate, True
        if not changed:
            break
    return current


def _measure(scorer: Any, system: MemorySystem, splits: dict[str, list[Any]]) -> tuple[dict[str, Any], int]:
    """Metrics of each split, and the task LM's output tokens, ingestion included (the ingestion cache is cleared)."""
    from memopt.systems import clear_ingest_cache

    clear_ingest_cache()
    before = scorer.usage_by_meter()["report_task"].output_tokens
    report = scorer.report(system, splits)
    return report, scorer.usage_by_meter()["report_task"].output_tokens - before


def catalogue_oracle(experiment: Experiment) -> dict[str, Any]:
    """The best-subset oracle and the all-on prompt of an experiment: their val and test F1, judge and choices.

    The top-level ``instructions``, ``knobs``, ``val_f1``, ``test_f1``, ``test_judge`` are the best subset's
    (the ceiling); ``all_on`` holds the same for every directive on; ``seed_test_f1`` the seed's.
    """
    from memopt.optimize.loop import make_scorer, splits_of
    from memopt.systems import make_system

    _, _, valset, testset = splits_of(experiment)
    scorer = make_scorer(experiment)
    seed_system = make_system(experiment.pipeline, prompts=experiment.prompts, **experiment.knobs)
    missing = missing_directives(seed_system)
    search_knobs = experiment.optimizer.search
    grid = [dict(zip(search_knobs, values, strict=True)) for values in itertools.product(*search_knobs.values())]
    if not grid or len(grid) > MAX_KNOB_COMBINATIONS:
        grid = [{}]
    search = _Search(seed_system, scorer, valset)
    all_on_subsets = tuple(missing.items())
    all_on = max(((all_on_subsets, tuple(sorted(k.items()))) for k in grid), key=search.score)
    best = _best_subset(search, missing, grid, all_on)
    splits = {"val": valset, **({"test": testset} if testset else {})}
    out: dict[str, Any] = {}
    for name, choice in (("best", best), ("all_on", all_on)):
        system = search.system(choice)
        report, tokens = _measure(scorer, system, splits)
        test = report.get("test", {})
        out[name] = {"instructions": system.instructions(), "knobs": {**seed_system.knobs, **dict(choice[1])},
                     "directives": {op: list(ids) for op, ids in choice[0]}, "val_f1": search.score(choice),
                     "test_f1": test.get("f1"), "test_judge": test.get("judge"), "output_tokens": tokens}
    seed, seed_tokens = _measure(scorer, seed_system, splits)
    return {**out["best"], "all_on": out["all_on"], "seed_val_f1": seed["val"]["f1"],
            "seed_test_f1": seed.get("test", {}).get("f1"), "seed_output_tokens": seed_tokens,
            "choices_evaluated": len(search.scores), "report_lm_calls": scorer.usage().calls,
            "choices": [{"directives": {op: list(ids) for op, ids in subsets}, "knobs": dict(knobs), "val_f1": f1}
                        for (subsets, knobs), f1 in search.scores.items()]}

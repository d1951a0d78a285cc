"""The catalogue oracle: the seed prompts with every catalogue directive of each LLM op appended.

SimLM's directive catalogue is public (`memopt.simlm.directives`), so what adding directive sentences
can reach is known without optimizing: append one phrasing of every directive each LLM operation
responds to (its SimLM kind is read off its signature's output fields, as SimLM does). No
optimizer runs; the knobs of ``optimizer.search`` are chosen on the val split, as optimizers may do.
Its test F1 is the *ceiling* every optimizer result is reported against, and an optimizer's share
of the ceiling's gain is ``(after − before) / (oracle − before)`` (`share_of_gain`). It means
something only with SimLM as task LM: a real LM does not follow the catalogue.
"""

from __future__ import annotations

import itertools
from typing import Any

from memopt.experiment import Experiment
from memopt.systems.base import MemorySystem

__all__ = ["oracle_instructions", "catalogue_oracle", "share_of_gain", "MAX_KNOB_COMBINATIONS"]

MAX_KNOB_COMBINATIONS = 12


def _kind(system: MemorySystem, op: str) -> str | None:
    from memopt.simlm import OPERATIONS

    signature = system.op_spec(op).signature
    outputs = frozenset(name for name in (signature.output_fields if signature else {}) if name != "reasoning")
    entry = OPERATIONS.get(outputs)
    return entry[0] if entry else None


def oracle_instructions(system: MemorySystem) -> dict[str, str]:
    """Every LLM op's instruction with one phrasing of each catalogue directive it lacks appended."""
    from memopt.simlm import active_directives, directives_for

    out = {}
    for op, text in system.instructions().items():
        kind = _kind(system, op)
        if kind is None:
            out[op] = text
            continue
        active = active_directives(kind, text)
        added = [d.phrasings[0] for d in directives_for(kind) if d.id not in active]
        out[op] = "\n".join([text.rstrip(), *added]).strip()
    return out


def share_of_gain(before: float | None, after: float | None, oracle: float | None) -> float | None:
    """``(after − before) / (oracle − before)``; None when the oracle gains nothing over ``before``."""
    if before is None or after is None or oracle is None or oracle - before <= 1e-9:
        return None
    return round((after - before) / (oracle - before), 3)


def catalogue_oracle(experiment: Experiment) -> dict[str, Any]:
    """Score the catalogue oracle of an experiment: val and test F1 / judge of the seed and the oracle prompts."""
    from memopt.optimize.run import make_scorer, splits_of
    from memopt.systems import make_system

    _, _, valset, testset = splits_of(experiment)
    scorer = make_scorer(experiment)
    seed_system = make_system(experiment.pipeline, prompts=experiment.prompts, **experiment.knobs)
    oracle = seed_system.with_instructions(oracle_instructions(seed_system))
    search = experiment.optimizer.search
    grid = [dict(zip(search, values, strict=True)) for values in itertools.product(*search.values())]
    if not grid or len(grid) > MAX_KNOB_COMBINATIONS:
        grid = [{}]
    scored = []
    for knobs in grid:
        candidate = oracle.with_knobs(**knobs) if knobs else oracle
        scored.append((scorer.report(candidate, {"val": valset})["val"]["f1"], candidate, knobs))
    val_f1, best, knobs = max(scored, key=lambda s: s[0])
    test = scorer.report(best, {"test": testset})["test"] if testset else {}
    before = scorer.report(seed_system, {"test": testset})["test"] if testset else {}
    return {"instructions": best.instructions(), "knobs": {**seed_system.knobs, **knobs}, "val_f1": val_f1,
            "test_f1": test.get("f1"), "test_judge": test.get("judge"), "seed_test_f1": before.get("f1"),
            "report_lm_calls": scorer.usage().calls}

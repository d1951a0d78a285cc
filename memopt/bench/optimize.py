"""`memopt bench optimize`: the optimizers side by side at an equal LM-call budget.

For each experiment file, each variant — ``memtrace``, ``gepa``, ``gepa_outcome`` (dspy.GEPA with
outcome feedback: question, gold, prediction and F1, no attribution), ``score_only`` and
``blame_response`` (the memtrace optimizer with every failure blamed on the answer op) — runs with
the same budget and rounds, untracked; the row reports test F1 before and after, the gain, the
share of the catalogue oracle's gain (`memopt.bench.oracle`), the LM calls spent, the gain per
1,000 LM calls, and the wall time. Each experiment also gets the oracle row (all catalogue
directives appended to the seed prompts, no optimizer): the ceiling.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

__all__ = ["bench_optimize", "VARIANTS"]

VARIANTS: dict[str, dict[str, str]] = {
    "memtrace": {"optimizer.name": "memtrace", "optimizer.feedback": "attribution", "attribution.method": "memtrace"},
    "gepa": {"optimizer.name": "gepa", "optimizer.feedback": "attribution", "attribution.method": "memtrace"},
    "gepa_outcome": {"optimizer.name": "gepa", "optimizer.feedback": "outcome"},
    "score_only": {"optimizer.name": "score_only", "optimizer.feedback": "score"},
    "blame_response": {"optimizer.name": "memtrace", "optimizer.feedback": "attribution",
                       "attribution.method": "blame_response"},
}


def bench_optimize(experiments: list[str | Path], *, budget: int, rounds: int | None = None,
                   variants: list[str] | None = None) -> list[dict[str, Any]]:
    """One row per (experiment, variant)."""
    from memopt.bench.oracle import catalogue_oracle, share_of_gain
    from memopt.errors import ConfigError
    from memopt.experiment import load_experiment
    from memopt.optimize.run import run_experiment
    from memopt.tracking import NullTracker

    unknown = sorted(set(variants or []) - set(VARIANTS))
    if unknown:
        raise ConfigError(f"--optimizers: unknown {', '.join(unknown)} (known: {', '.join(VARIANTS)}).")
    rows = []
    for path in experiments:
        started = time.perf_counter()
        oracle = catalogue_oracle(load_experiment(path, {"budget.max_lm_calls": budget, "rounds": rounds}))
        oracle_seconds = round(time.perf_counter() - started, 1)
        before = None
        for name in variants or list(VARIANTS):
            experiment = load_experiment(path, {**VARIANTS[name], "budget.max_lm_calls": budget, "rounds": rounds})
            started = time.perf_counter()
            summary = run_experiment(experiment, tracker=NullTracker())
            before, after = summary["baseline"]["test_f1"], summary["final"]["test_f1"]
            calls = summary["lm_calls"]
            rows.append({"experiment": experiment.name, "optimizer": name, "test_f1_before": before,
                         "test_f1_after": after, "gain": round(after - before, 4),
                         "share_of_oracle_gain": share_of_gain(before, after, oracle["test_f1"]), "lm_calls": calls,
                         "gain_per_1k_calls": round(1000 * (after - before) / max(calls, 1), 4),
                         "seconds": round(time.perf_counter() - started, 1)})
        before = oracle["seed_test_f1"] if before is None else before
        rows.append({"experiment": load_experiment(path).name, "optimizer": "oracle (best subset)",
                     "test_f1_before": before, "test_f1_after": oracle["test_f1"],
                     "gain": round(oracle["test_f1"] - before, 4), "share_of_oracle_gain": 1.0, "lm_calls": 0,
                     "gain_per_1k_calls": None, "seconds": oracle_seconds})
    return rows

"""`memopt bench optimize`: the optimizers side by side at an equal LM-call budget.

For each experiment file, each variant — ``memtrace``, ``gepa``, ``score_only`` and ``blame_response``
(the memtrace optimizer with every failure blamed on the answer op) — runs with the same budget and
rounds, untracked; the row reports test F1 before and after, the gain, the LM calls spent, the gain
per 1,000 LM calls, and the wall time.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

__all__ = ["bench_optimize", "VARIANTS"]

VARIANTS: dict[str, dict[str, str]] = {
    "memtrace": {"optimizer.name": "memtrace", "attribution.method": "memtrace"},
    "gepa": {"optimizer.name": "gepa", "attribution.method": "memtrace"},
    "score_only": {"optimizer.name": "score_only"},
    "blame_response": {"optimizer.name": "memtrace", "attribution.method": "blame_response"},
}


def bench_optimize(experiments: list[str | Path], *, budget: int, rounds: int | None = None,
                   variants: list[str] | None = None) -> list[dict[str, Any]]:
    """One row per (experiment, variant)."""
    from memopt.experiment import load_experiment
    from memopt.optimize.run import run_experiment
    from memopt.tracking import NullTracker

    rows = []
    for path in experiments:
        for name in variants or list(VARIANTS):
            experiment = load_experiment(path, {**VARIANTS[name], "budget.max_lm_calls": budget, "rounds": rounds})
            started = time.perf_counter()
            summary = run_experiment(experiment, tracker=NullTracker())
            before, after = summary["baseline"]["test_f1"], summary["final"]["test_f1"]
            calls = summary["lm_calls"]
            rows.append({"experiment": experiment.name, "optimizer": name, "test_f1_before": before,
                         "test_f1_after": after, "gain": round(after - before, 4), "lm_calls": calls,
                         "gain_per_1k_calls": round(1000 * (after - before) / max(calls, 1), 4),
                         "seconds": round(time.perf_counter() - started, 1)})
    return rows

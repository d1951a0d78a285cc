"""Throughput of the pipelines, and SimLM's own cost per call.

`bench_pipelines` runs every pipeline on a synthetic set with SimLM and reports cases/s and LM
calls per case (ingestion included; the ingestion cache is cleared first). `bench_simlm` records
the prompts of such a run and times `SimLM.respond` alone on them, per operation.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

__all__ = ["bench_pipelines", "bench_simlm"]


def bench_pipelines(data: str = "synthetic:conversations=20,sessions=8,seed=0", *, concurrency: int | None = None,
                    pipelines: list[str] | None = None) -> list[dict[str, Any]]:
    """One row per pipeline: cases, seconds, cases/s, task LM calls per case, F1."""
    from memopt.evaluate.pipeline import run_pipeline
    from memopt.systems import system_names
    from memopt.systems.base import clear_ingest_cache

    rows = []
    for name in pipelines or system_names():
        clear_ingest_cache()
        result = run_pipeline(name, data, judge_lm=None, concurrency=concurrency)
        calls = result.usage["task"]["calls"]
        rows.append({"pipeline": name, "cases": len(result.cases), "seconds": round(result.seconds, 2),
                     "cases_per_s": round(len(result.cases) / result.seconds, 1),
                     "lm_calls_per_case": round(calls / len(result.cases), 2), "f1": result.metrics["f1"]})
    return rows


def bench_simlm(data: str = "synthetic:conversations=4,sessions=8,seed=0", repeat: int = 5) -> list[dict[str, Any]]:
    """One row per SimLM operation: calls timed, median and p95 microseconds per `SimLM.respond`."""
    import dspy

    from memopt.data.source import load_data
    from memopt.evaluate.run import evaluate
    from memopt.lm.build import make_lm
    from memopt.simlm import SimLM, operation_of, parse_prompt
    from memopt.systems import make_system, system_names
    from memopt.systems.base import clear_ingest_cache

    _, conversations = load_data(data)
    lm = make_lm("sim")
    with dspy.context(lm=lm):
        for name in system_names():
            clear_ingest_cache()
            evaluate(make_system(name), conversations, lm=lm)
    prompts = [(m[0]["content"], m[-1]["content"]) for m in (e["messages"] for e in lm.history)]
    sim = SimLM()
    timings: dict[str, list[float]] = {}
    for system, user in prompts:
        op = operation_of(parse_prompt(system, user)) or "other"
        for _ in range(repeat):
            start = time.perf_counter()
            sim.respond(system, user)
            timings.setdefault(op, []).append((time.perf_counter() - start) * 1e6)
    return [{"operation": op, "calls": len(t) // repeat, "median_us": round(statistics.median(t), 1),
             "p95_us": round(sorted(t)[int(0.95 * (len(t) - 1))], 1)} for op, t in sorted(timings.items())]

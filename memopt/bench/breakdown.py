"""Where the client's CPU goes per LM call: `memopt bench latency --breakdown`.

The experiment of the latency bench runs once more under yappi (CPU clock, every thread: the worker
threads do the calls, so a main-thread profiler sees only lock waits). Each function's own CPU time
(not its callees') is put in one bucket by the file it lives in (`BUCKETS`, first match wins); the
shares are scaled to the CPU per request of the unprofiled run, so the figures add up to it.
yappi's hooks cost more in code made of many small calls (LiteLLM, pydantic) than in code made of
few long ones, so the shares are estimates; the unprofiled total is measured. Needs ``yappi``
(in the ``dev`` extra).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

__all__ = ["BUCKETS", "bucket", "breakdown"]

BUCKETS: list[tuple[str, str]] = [
    ("LiteLLM: cost calculation", r"litellm/(cost_calculator|litellm_core_utils/llm_cost_calc/|.*cost)"),
    ("LiteLLM: logging and callbacks", r"litellm/(litellm_core_utils/(litellm_logging|logging_)|integrations/)"),
    ("LiteLLM: request and response mapping", r"litellm/"),
    ("OpenAI SDK, httpx (HTTP)", r"(openai|httpx|httpcore|h11|anyio)/|/(ssl|socket|selectors|http/client)\.py"),
    ("DSPy adapter: format and parse", r"dspy/adapters/"),
    ("DSPy LM, engine and reply cache", r"dspy/clients/|diskcache/|/(sqlite3|pickle|cloudpickle)"),
    ("DSPy other", r"dspy/"),
    ("pydantic", r"pydantic"),
    ("memopt: LM calls (usage meter, slots, retries)", r"memopt/lm/"),
    ("memopt: tracing and events", r"memopt/(trace/|events\.py|ops\.py)"),
    ("memopt: store and retrieval", r"memopt/store\.py|bm25s/|Stemmer|numpy/|scipy/"),
    ("memopt: judge, attribution, feedback", r"memopt/(judge|feedback|attribution/)"),
    ("memopt: pipelines, evaluation, optimizer", r"memopt/|pipelines/"),
    ("Python: threads, locks, json, re, other", r""),
]


def bucket(path: str) -> str:
    """The `BUCKETS` label of a function defined in ``path``."""
    normalised = path.replace("\\", "/")
    for label, pattern in BUCKETS:
        if re.search(pattern, normalised):
            return label
    return BUCKETS[-1][0]


def breakdown(run: Callable[[], tuple[int, float]]) -> list[dict[str, Any]]:
    """Rows (bucket, share, ms per request) from one profiled ``run`` returning (requests, unprofiled CPU ms/req)."""
    try:
        import yappi
    except ImportError:
        from memopt.core.errors import ConfigError

        raise ConfigError("--breakdown needs yappi: pip install -e '.[dev]' (or pip install yappi)") from None
    yappi.clear_stats()
    yappi.set_clock_type("cpu")
    yappi.start(builtins=False, profile_threads=True)
    try:
        requests, cpu_ms = run()
    finally:
        yappi.stop()
    totals: dict[str, float] = {}
    for stat in yappi.get_func_stats():
        label = bucket(stat.module or "")
        totals[label] = totals.get(label, 0.0) + stat.tsub
    yappi.clear_stats()
    whole = sum(totals.values()) or 1.0
    rows = [{"where": label, "share": round(seconds / whole, 3),
             "cpu_ms_per_request": round(cpu_ms * seconds / whole, 2)}
            for label, seconds in sorted(totals.items(), key=lambda item: -item[1])]
    rows.append({"where": f"total (unprofiled run, {requests} requests)", "share": 1.0, "cpu_ms_per_request": cpu_ms})
    return rows

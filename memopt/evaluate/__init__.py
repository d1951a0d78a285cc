"""Evaluating a memory system: run it over data, score every answer, and keep the results (``results.json``).

What it may import: the stages below it (`memopt.data`, `memopt.lm`, `memopt.judge`, `memopt.systems`,
`memopt.trace`) and `memopt.core`; never attribution, feedback or the optimizer.

- `run`: `evaluate` (a system over conversations → `RunResult`), `CaseResult`, the results file;
- `pipeline`: `run_pipeline`, data → memory system → scores (→ graphs), the API behind ``memopt run``.
"""

from __future__ import annotations

from memopt.core.lazy import lazy_names

__all__ = ["CaseResult", "RunResult", "evaluate", "case_metrics", "select_cases", "SCHEMA_VERSION", "ERROR_LIMIT",
           "MALFORMED", "run_pipeline"]

_HOME = {**dict.fromkeys(__all__, "memopt.evaluate.run"), "run_pipeline": "memopt.evaluate.pipeline"}

__getattr__ = lazy_names("memopt.evaluate", _HOME, globals())


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])

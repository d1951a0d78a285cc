"""`attribute_run`: attribute every failed case of a traced run (the API behind `memopt attribute`).

Cases are attributed ``workers`` at a time (each in a copy of the caller's context, `memopt.parallel`);
the attributions come back in the order of the graph files and their cases, as a serial run gives them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memopt.attribution.case import failed_cases
from memopt.attribution.methods import attribute
from memopt.attribution.types import Attribution
from memopt.errors import DataError
from memopt.evaluate import RunResult
from memopt.judge import Judge
from memopt.parallel import map_ordered
from memopt.trace.io import load_graph

__all__ = ["attribute_run", "graph_files", "summarize_attributions"]


def graph_files(trace_dir: str | Path) -> list[Path]:
    """The graph files of a trace directory (``*.json`` and ``*.json.gz``), sorted."""
    trace_dir = Path(trace_dir)
    if not trace_dir.is_dir():
        raise DataError(f"{trace_dir}: no such trace directory (write one with `memopt run --trace {trace_dir}`).")
    files = sorted([*trace_dir.glob("*.json"), *trace_dir.glob("*.json.gz")])
    if not files:
        raise DataError(f"{trace_dir}: no graph files (*.json) in it; run `memopt run ... --trace {trace_dir}`.")
    return files


def attribute_run(results: RunResult, trace_dir: str | Path, judge: Judge, *, method: str = "memtrace",
                  verify: bool = False, on_case: Callable[[Attribution], None] | None = None,
                  workers: int = 1) -> list[Attribution]:
    """Blame every failed case of ``results`` on the graphs in ``trace_dir`` (``workers`` cases at a time)."""
    by_id = {c.case_id: c.to_dict() for c in results.cases}
    cases = []
    for path in graph_files(trace_dir):
        G = load_graph(path)
        if G.graph.get("pipeline") != results.pipeline:
            raise DataError(f"{path}: a graph of pipeline {G.graph.get('pipeline')!r}, but the results are of "
                            f"{results.pipeline!r}; pass the trace directory of the same run.")
        cases += failed_cases(G, by_id)
    found = map_ordered(lambda case: attribute(case, judge, method, verify=verify), cases, workers=workers)
    for attribution in found:
        if on_case is not None:
            on_case(attribution)
    if not cases and any(c.correct is False for c in results.cases):
        raise DataError(f"{trace_dir}: none of its graphs holds the failed cases of the results; "
                        "pass the trace directory written by the same `memopt run`.")
    return found


def summarize_attributions(attributions: list[Attribution]) -> dict[str, Any]:
    """Counts by error type and by operation, mean judge calls, share verified."""
    n = len(attributions)
    verified = [a.verified for a in attributions if a.verified is not None]
    return {
        "n": n,
        "by_error_type": dict(Counter(a.error_type for a in attributions).most_common()),
        "by_operation": dict(Counter(a.operation for a in attributions).most_common()),
        "judge_calls_per_case": round(sum(a.judge_calls for a in attributions) / n, 2) if n else 0.0,
        "verified": round(sum(verified) / len(verified), 3) if verified else None,
    }

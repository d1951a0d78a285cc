"""`run_pipeline`: the Python API behind `memopt run` (load data, build, run, score, trace).

It sits above the stages it uses (data, pipelines, evaluation, tracing) so none of them has to
import a later one. When the task LM carries its own adapter (the ``local`` LM), the adapter's
reply counts (parsed, repaired, malformed) are kept in ``usage["task"]["replies"]``.

Every run gets a ``run_id`` (a UUID), written in ``results.json`` and in the graph attributes of
every traced graph, so `memopt attribute` can check that results and graphs belong together.
Graph files are named by `memopt.files.safe_name` of the sample id and stay inside ``trace_dir``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from memopt.evaluate import CaseResult, RunResult, evaluate, select_cases
from memopt.files import inside, safe_name

__all__ = ["run_pipeline"]


def run_pipeline(pipeline: str, data: str, *, prompts: str | Path | None = None, lm: str = "sim",
                 judge_lm: str | None = "sim", limit: int | None = None, conversations: list[str] | None = None,
                 workers: int = 1, seed: int = 0, knobs: dict[str, int] | None = None,
                 on_case: Callable[[CaseResult], None] | None = None,
                 on_plan: Callable[[int], None] | None = None, trace_dir: str | Path | None = None) -> RunResult:
    """Load data, build the pipeline, run and score it (tracing one graph per conversation into ``trace_dir``)."""
    from memopt.data.source import load_data, select
    from memopt.files import check_writable
    from memopt.judge import LMJudge
    from memopt.lm.adapter import preferred_adapter
    from memopt.lm.config import UsageMeter, make_lm, parse_lm_spec
    from memopt.systems import make_system
    from memopt.trace import save_graph, trace

    if trace_dir is not None:
        check_writable(trace_dir, option="--trace", directory=True)

    run_id = uuid.uuid4().hex
    task_spec = parse_lm_spec(lm)
    judge_spec = parse_lm_spec(judge_lm) if judge_lm else None
    system = make_system(pipeline, prompts=prompts, **(knobs or {}))
    name, loaded = load_data(data)
    chosen = select(loaded, conversations)
    if on_plan is not None:
        on_plan(sum(len(cases) for _, cases in select_cases(chosen, limit)))
    task_meter, judge_meter = UsageMeter(), UsageMeter()
    task_lm = make_lm(task_spec, seed=seed, callbacks=[task_meter])
    judge = LMJudge(make_lm(judge_spec, seed=seed, callbacks=[judge_meter])) if judge_spec else None
    if trace_dir is None:
        results, metrics, seconds = evaluate(system, chosen, lm=task_lm, judge=judge, limit=limit,
                                             workers=workers, on_case=on_case)
    else:
        with trace(system) as tracer:
            results, metrics, seconds = evaluate(system, chosen, lm=task_lm, judge=judge, limit=limit,
                                                 workers=workers, on_case=on_case)
        tracer.record_cases(case for _, cases in select_cases(chosen, limit) for case in cases)
        for sample_id, graph in tracer.graphs.items():
            graph.graph["run_id"] = run_id
            save_graph(graph, inside(trace_dir, safe_name(sample_id, ".json")))
    usage = {"task": asdict(task_meter.total()), "judge": asdict(judge_meter.total())}
    if (adapter := preferred_adapter(task_lm)) is not None:
        usage["task"]["replies"] = adapter.stats()
    return RunResult(pipeline, task_spec.raw, task_spec.simulated, name, system.prompt_versions(), system.knobs,
                     metrics, results, usage, seconds, judge_spec.raw if judge_spec else None, run_id=run_id)

"""`run_pipeline`: the Python API behind `memopt run` (load data, build, run, score, trace).

It sits above the stages it uses (data, pipelines, evaluation, tracing) so none of them has to
import a later one. When the task LM carries its own adapter (the ``local`` LM), the adapter's
reply counts (parsed, repaired, malformed) are kept in ``usage["task"]["replies"]``. ``concurrency``
(one number, or None for each role's default, see `memopt.lm.pool`) bounds the LM calls in flight
per role; ``cache`` uses the on-disk reply cache for real LMs; ``usage`` says calls made and served
from the cache, tokens and cost per role.

Every run gets a ``run_id`` (a UUID), written in ``results.json`` and in the graph attributes of
every traced graph, so `memopt attribute` can check that results and graphs belong together.
Graph files are named by `memopt.core.files.safe_name` of the sample id and stay inside ``trace_dir``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from memopt.core.errors import DataError
from memopt.core.files import distinct_names, inside, safe_name
from memopt.evaluate.run import CaseResult, RunResult, evaluate, select_cases

if TYPE_CHECKING:
    from memopt.lm.spec import SpecInput

__all__ = ["run_pipeline"]


def _refuse_graphs_in(trace_dir: Path) -> None:
    """A `DataError` when ``trace_dir`` holds graphs already (of an earlier run): no graph ever overwrites another,
    and graphs of two runs in one folder could not be told apart by `memopt attribute`."""
    held = sorted(p.name for pattern in ("*.json", "*.json.gz") for p in trace_dir.glob(pattern)) \
        if trace_dir.is_dir() else []
    if held:
        raise DataError(f"--trace {trace_dir}: it holds {len(held)} graph file(s) of an earlier run ({held[0]}"
                        f"{', ...' if len(held) > 1 else ''}); a run never writes over another's graphs. Pass a new "
                        "folder to --trace, or move those graphs away first.")


def run_pipeline(pipeline: str, data: str, *, prompts: str | Path | None = None, lm: SpecInput = "sim",
                 judge_lm: SpecInput | None = "sim", limit: int | None = None,
                 conversations: list[str] | None = None, concurrency: int | None = None, seed: int = 0,
                 knobs: dict[str, int] | None = None, on_case: Callable[[CaseResult], None] | None = None,
                 on_plan: Callable[[int], None] | None = None, trace_dir: str | Path | None = None,
                 cache: bool = False, timeout: float | None = 120.0, num_retries: int = 3,
                 parse_retries: int = 2, engine: str = "litellm") -> RunResult:
    """Load data, build the pipeline, run and score it (tracing one graph per conversation into ``trace_dir``).

    ``lm`` and ``judge_lm`` are parsed specs (as `memopt run` passes them) or spec strings, parsed once here."""
    from memopt.core.files import check_writable
    from memopt.data.source import load_data, select
    from memopt.judge.judges import LMJudge
    from memopt.lm.adapter import SchemaJSONAdapter, preferred_adapter
    from memopt.lm.build import make_lm
    from memopt.lm.costs import usage_report
    from memopt.lm.pool import LMSlots, role_concurrency, threads_for
    from memopt.lm.spec import parse_lm_specs
    from memopt.lm.usage import UsageMeter
    from memopt.systems import make_system
    from memopt.trace import save_graph, trace

    if trace_dir is not None:
        check_writable(trace_dir, option="--trace", directory=True)
        _refuse_graphs_in(Path(trace_dir))

    run_id = uuid.uuid4().hex
    task_specs = parse_lm_specs(lm)
    judge_specs = parse_lm_specs(judge_lm) if judge_lm else None
    limits = role_concurrency(concurrency, {"task": task_specs, **({"judge": judge_specs} if judge_specs else {})})
    system = make_system(pipeline, prompts=prompts, **(knobs or {}))
    name, loaded = load_data(data)
    chosen = select(loaded, conversations)
    graph_files = distinct_names([c.sample_id for c in chosen], ".json") if trace_dir is not None else {}
    if on_plan is not None:
        on_plan(sum(len(cases) for _, cases in select_cases(chosen, limit)))
    task_meter, judge_meter = UsageMeter(), UsageMeter()
    calls = {"seed": seed, "cache": cache, "timeout": timeout, "num_retries": num_retries,
             "parse_retries": parse_retries, "engine": engine}
    task_lm = make_lm(task_specs, callbacks=[LMSlots(limits["task"]), task_meter], **calls)
    judge = LMJudge(make_lm(judge_specs, callbacks=[LMSlots(limits["judge"]), judge_meter], **calls)) \
        if judge_specs else None
    workers = threads_for(*limits.values())
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
            save_graph(graph, inside(trace_dir, graph_files.get(sample_id) or safe_name(sample_id, ".json")))
    usage = {"task": usage_report(task_meter.total(), task_specs),
             "judge": usage_report(judge_meter.total(), judge_specs or [])}
    if isinstance(adapter := preferred_adapter(task_lm), SchemaJSONAdapter):
        usage["task"]["replies"] = adapter.stats()
    return RunResult(pipeline, _raw(task_specs), any(s.simulated for s in task_specs), name, system.prompt_versions(),
                     system.knobs, metrics, results, usage, seconds, _raw(judge_specs) if judge_specs else None,
                     run_id=run_id)


def _raw(specs: list) -> str:
    return ", ".join(s.raw for s in specs)

"""`memopt bench attribution`: accuracy, judge calls and speed of every attribution method.

Builds (or reloads with ``cases``) the fault-injection bench of `memopt.attribution.bench`, scores
every method on it, optionally measures seconds per case on the graph of one very long synthetic
conversation, and optionally scores methods on MemTraceBench-format files (``memtracebench``).
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

__all__ = ["bench_attribution", "bench_long_graph", "score_memtracebench"]

SCORED = ("memtrace", "counterfactual", "all_at_once", "step_by_step", "binary_search", "blame_response")


def _counts(cases: list[Any]) -> dict[str, dict[str, int]]:
    out: dict[str, Counter] = defaultdict(Counter)
    for case in cases:
        out[case.pipeline][case.error_type] += 1
    return {p: dict(c) for p, c in out.items()}


def bench_attribution(*, pipelines: list[str], data: str, cases_dir: str | Path, methods: list[str] | None = None,
                      cases_file: str | Path | None = None) -> dict[str, Any]:
    """Build or load the bench and score methods: ``{"results": [...], "cases": path, "counts": {...}}``."""
    from memopt.attribution.bench import build_bench, load_bench, score_bench
    from memopt.judge import LexicalJudge

    if cases_file is None:
        cases, path = build_bench(pipelines, data, cases_dir, LexicalJudge())
    else:
        path = Path(cases_file)
        cases = [c for c in load_bench(path) if c.pipeline in pipelines]
    rows = score_bench(cases, list(methods or SCORED), LexicalJudge, path.parent)
    return {"results": rows, "cases": str(path), "counts": _counts(cases)}


def bench_long_graph(sessions: int = 1000, questions: int = 6, methods: tuple[str, ...] = (
        "memtrace", "all_at_once", "step_by_step", "binary_search", "blame_response")) -> list[dict[str, Any]]:
    """Seconds and judge calls per case on injected faults in one ``sessions``-session mem0 conversation."""
    import dspy

    from memopt.attribution.bench import case_view, grounded
    from memopt.attribution.case import Probe
    from memopt.attribution.inject import effective, injections
    from memopt.attribution.methods import METHODS
    from memopt.data.synth import SynthSpec, synthetic_conversations
    from memopt.judge import LexicalJudge
    from memopt.lm.config import make_lm
    from memopt.systems import make_system
    from memopt.trace import replay, trace

    [conversation] = synthetic_conversations(SynthSpec(conversations=1, sessions=sessions, seed=1))
    judge = LexicalJudge()
    system = make_system("mem0")
    with dspy.context(lm=make_lm("sim")), trace(system) as tracer:
        system.ingest(conversation)
        answered = {c.case_id: system.answer_case(c).answer for c in conversation.cases}
        tracer.record_cases(conversation.cases)
    G = tracer.graph
    faulted = []
    for case in G.graph["cases"]:
        if len(faulted) >= questions:
            break
        if not judge.correct(case["question"], case["gold"], answered[case["case_id"]]):
            continue
        view = case_view(G, case, answered[case["case_id"]])
        if not grounded(view, Probe(view, judge)):
            continue
        for injection in injections(view, Probe(view, judge))[:2]:
            result = replay(G, injection.overrides, cases=[view.key])
            broken = case_view(result.graph, case, result.answers[view.key])
            if not judge.correct(case["question"], case["gold"], broken.prediction) and effective(
                    injection, broken, Probe(broken, judge)):
                faulted.append((broken, injection))
    rows = []
    for method in methods:
        right = calls = 0
        seconds = 0.0
        for view, injection in faulted:
            started = time.perf_counter()
            found = METHODS[method](view, LexicalJudge())
            seconds += time.perf_counter() - started
            right += (found.error_type, found.op_id) == (injection.error_type, injection.op_id)
            calls += found.judge_calls
        n = max(1, len(faulted))
        rows.append({"method": method, "sessions": sessions, "graph_nodes": G.number_of_nodes(), "n": len(faulted),
                     "accuracy": round(right / n, 3), "judge_calls_per_case": round(calls / n, 2),
                     "ms_per_case": round(1000 * seconds / n, 1)})
    return rows


def score_memtracebench(directory: str | Path, methods: list[str] | None = None) -> dict[str, Any]:
    """Score methods (all but counterfactual, which needs replay) on MemTraceBench-format graph files."""
    from memopt.attribution.case import FailedCase
    from memopt.attribution.methods import METHODS
    from memopt.errors import DataError
    from memopt.judge import LexicalJudge
    from memopt.trace.graph import answer_of
    from memopt.trace.memtrace import load_memtrace

    directory = Path(directory)
    files = sorted(directory.glob("*.json")) if directory.is_dir() else []
    if not files:
        raise DataError(f"{directory}: no MemTraceBench JSON files (*.json) in it.")
    labelled, skipped = [], 0
    for path in files:
        G, annotations = load_memtrace(path)
        for a in annotations:
            key = str(a.query_id).split(":")[-1]
            if a.final_error_type is None or a.final_op_id is None or answer_of(G, key) is None:
                skipped += 1
                continue
            gold = a.golden_answers[0] if a.golden_answers else ""
            case = FailedCase(G, f"{G.graph.get('conversation')}:{key}", a.query, gold, tuple(a.source_evidence_ids),
                              a.prediction or "")
            labelled.append((case, a.final_error_type, a.final_op_id))
    rows = []
    for method in [m for m in (methods or SCORED) if m != "counterfactual"]:
        right_type = right_op = 0
        for case, error_type, op_id in labelled:
            found = METHODS[method](case, LexicalJudge())
            right_type += found.error_type == error_type
            right_op += found.op_id == op_id
        n = max(1, len(labelled))
        rows.append({"pipeline": "memtracebench", "method": method, "n": len(labelled),
                     "type_accuracy": round(right_type / n, 3), "op_accuracy": round(right_op / n, 3)})
    return {"results": rows, "skipped": skipped, "files": len(files)}

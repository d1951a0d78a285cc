"""`memopt bench attribution`: accuracy, judge calls and speed of every attribution method.

Builds (or reloads with ``cases``) the fault-injection bench of `memopt.attribution.fault_bench`, scores
every method on it, optionally measures seconds per case on the graph of one very long synthetic
conversation; `score_memtracebench` scores methods on MemTraceBench files (smartcomment graphs, one
directory per split), with the benchmark's own metrics.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

__all__ = ["MEMTRACEBENCH_SPLITS", "bench_attribution", "bench_long_graph", "score_memtracebench", "scored_methods"]

MEMTRACEBENCH_SPLITS = ("rag", "mem0", "evermemos", "long_context")


def scored_methods(methods: list[str] | tuple[str, ...] | None = None, *, replay: bool = True) -> list[str]:
    """The methods to score: those asked for, else every registered one (`memopt.attribution.registry`); without
    ``replay``, those that need replay (a foreign or very long graph cannot give it) are left out."""
    from memopt.attribution.registry import get_method, method_names

    chosen = [get_method(m).name for m in (methods or method_names())]
    return [m for m in chosen if replay or not get_method(m).needs_replay]


def _counts(cases: list[Any]) -> dict[str, dict[str, int]]:
    out: dict[str, Counter] = defaultdict(Counter)
    for case in cases:
        out[case.pipeline][case.error_type] += 1
    return {p: dict(c) for p, c in out.items()}


def bench_attribution(*, pipelines: list[str], data: str, cases_dir: str | Path, methods: list[str] | None = None,
                      cases_file: str | Path | None = None) -> dict[str, Any]:
    """Build or load the bench and score methods: ``{"results": [...], "cases": path, "counts": {...}}``."""
    from memopt.attribution.fault_bench import build_bench, load_bench, score_bench
    from memopt.judge.judges import LexicalJudge

    if cases_file is None:
        cases, path = build_bench(pipelines, data, cases_dir, LexicalJudge())
    else:
        path = Path(cases_file)
        cases = [c for c in load_bench(path) if c.pipeline in pipelines]
    rows = score_bench(cases, scored_methods(methods), LexicalJudge, path.parent)
    return {"results": rows, "cases": str(path), "counts": _counts(cases)}


def bench_long_graph(sessions: int = 1000, questions: int = 6, methods: tuple[str, ...] | None = None
                     ) -> list[dict[str, Any]]:
    """Seconds and judge calls per case on injected faults in one ``sessions``-session mem0 conversation
    (default: every registered method that needs no replay)."""
    import dspy

    from memopt.attribution.case import Probe
    from memopt.attribution.fault_bench import case_view, grounded
    from memopt.attribution.inject import effective, injections
    from memopt.attribution.registry import get_method
    from memopt.data.synth import SynthSpec, synthetic_conversations
    from memopt.judge.judges import LexicalJudge
    from memopt.lm.build import make_lm
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
    for method in scored_methods(methods, replay=False):
        right = calls = 0
        seconds = 0.0
        for view, injection in faulted:
            started = time.perf_counter()
            found = get_method(method)(view, LexicalJudge())
            seconds += time.perf_counter() - started
            right += (found.error_type, found.op_id) == (injection.error_type, injection.op_id)
            calls += found.judge_calls
        n = max(1, len(faulted))
        rows.append({"method": method, "sessions": sessions, "graph_nodes": G.number_of_nodes(), "n": len(faulted),
                     "accuracy": round(right / n, 3), "judge_calls_per_case": round(calls / n, 2),
                     "ms_per_case": round(1000 * seconds / n, 1)})
    return rows


def _split_files(directory: Path) -> dict[str, list[Path]]:
    """MemTraceBench's layout, ``DIR/<split>/*.json`` (splits in the dataset's order); loose files: split ``other``."""
    from memopt.core.errors import DataError

    if not directory.is_dir():
        raise DataError(f"{directory}: not a directory; pass the MemTraceBench root (DIR/<split>/*.json).")
    found = {d.name: sorted(d.glob("*.json")) for d in sorted(directory.iterdir()) if d.is_dir()}
    found = {k: v for k, v in found.items() if v}
    if loose := sorted(directory.glob("*.json")):
        found[directory.name or "other"] = loose
    if not found:
        raise DataError(f"{directory}: no MemTraceBench files (expected {'/, '.join(MEMTRACEBENCH_SPLITS)}/ "
                        "directories of *.json graphs).")
    order = [s for s in MEMTRACEBENCH_SPLITS if s in found] + [s for s in found if s not in MEMTRACEBENCH_SPLITS]
    return {s: found[s] for s in order}


def score_memtracebench(directory: str | Path, methods: list[str] | None = None,
                        evidence: tuple[str, ...] = ("gold",)) -> dict[str, Any]:
    """Score methods on MemTraceBench files per split with the official metrics (error-type and exact op_id accuracy),
    each with the annotations' gold evidence and with evidence retrieved as for a trace without it (``evidence``).

    As the official loader does, annotations whose label is not one of the five memory errors are
    skipped and counted. A case memopt cannot rebuild (no prediction in its graph) stays in the count
    as a miss. ``counterfactual`` needs replay, which a foreign graph cannot give, so it is left out.
    """
    from memopt.attribution.case import FailedCase
    from memopt.attribution.evidence import seed_evidence
    from memopt.judge.judges import LexicalJudge
    from memopt.trace.graph import answer_of
    from memopt.trace.memtracebench import load_memtrace
    from memopt.trace.turn_refs import turn_refs

    chosen = scored_methods(methods, replay=False)
    rows, skipped, labels, files = [], {}, {}, {}
    for split, paths in _split_files(Path(directory)).items():
        cases: dict[str, list[tuple[Any, str, str]]] = {e: [] for e in evidence}
        skipped[split], labels[split], files[split] = 0, Counter(), len(paths)
        for path in paths:
            G, annotations = load_memtrace(path, split=split)
            dates = {c["key"]: c.get("date") for c in G.graph.get("cases") or []}
            for a in annotations:
                if not a.memory_error:
                    skipped[split] += 1
                    continue
                labels[split][a.final_error_type] += 1
                for source in evidence:
                    if a.case_key is None or answer_of(G, a.case_key) is None:
                        cases[source].append((None, a.final_error_type, a.final_op_id))
                        continue
                    gold = a.gold  # several golden answers: the items the answer needs
                    given = turn_refs(G, a.source_evidence_ids)
                    seeded, pseudo = seed_evidence(G, a.query, gold, given if source == "gold" else ())
                    case = FailedCase(G, f"{G.graph['conversation']}:{a.case_key}", a.query, gold, seeded,
                                      a.prediction or "", 0, pseudo, dates.get(a.case_key) or a.question_date)
                    cases[source].append((case, a.final_error_type, a.final_op_id))
        for method in chosen:
            for source in evidence:
                rows.append({"split": split, "method": method, "evidence": source,
                             **_score(cases[source], method, LexicalJudge)})
    return {"results": rows, "skipped_non_memory": skipped, "labels": {k: dict(v) for k, v in labels.items()},
            "files": files}


def _score(cases: list[tuple[Any, str, str]], method: str, judge: Any) -> dict[str, Any]:
    """n, type and op accuracy and judge calls per case of one method on labelled cases ((case, type, sc op id))."""
    from memopt.attribution.registry import get_method

    right_type = right_op = calls = 0
    for case, error_type, op_id in cases:
        if case is None:
            continue
        found = get_method(method)(case, judge())
        right_type += found.error_type == error_type
        right_op += case.G.nodes[found.op_id].get("sc_op_id", found.op_id) == op_id
        calls += found.judge_calls
    n = max(1, len(cases))
    return {"n": len(cases), "type_accuracy": round(right_type / n, 3), "op_accuracy": round(right_op / n, 3),
            "judge_calls_per_case": round(calls / n, 2)}

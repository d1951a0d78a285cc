"""The attribution bench: labelled failures, and how often each method blames the right operation.

Building (`build_bench`): every pipeline runs traced on a data set; for each case answered
correctly from its evidence (its context holds the information, which came from the evidence turns;
flukes answered from other turns are skipped), every applicable fault (`memopt.attribution.inject`)
is injected and the conversation replayed — a case that now fails, the fault having had the effect
its label names, becomes a bench case labelled with the fault's (error type, op id); for each case
that failed on its own, the ``counterfactual`` oracle labels it when its verdict
is clean (the earliest op that lost the information is also the one whose correction rescues the
answer). Scoring (`score_bench`) runs methods on the saved cases.

Saved layout (``cases.json`` + ``graphs/``)::

    {"schema": "memopt.attribution_bench", "schema_version": 1, "data": "...",
     "cases": [{"id", "pipeline", "source": "injected" | "natural", "fault", "graph": "graphs/<file>.json.gz",
                "case_id", "question", "gold", "evidence", "category", "prediction",
                "error_type", "op_id"}]}

Each graph is the (faulted, replayed) evolution graph the case is to be attributed on, in memopt's
graph JSON (`memopt.trace.load_graph`), so anyone can re-score a method on the saved cases.
"""

from __future__ import annotations

import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import networkx as nx

from memopt.attribution.case import FailedCase, Probe, text_of
from memopt.attribution.counterfactual import counterfactual
from memopt.attribution.inject import effective, injections
from memopt.core.errors import DataError
from memopt.core.files import read_json, safe_name, write_json
from memopt.judge.judges import Judge
from memopt.trace import load_graph, replay, save_graph

__all__ = ["BenchCase", "build_bench", "load_bench", "score_bench", "case_view", "grounded", "SCHEMA"]

SCHEMA = "memopt.attribution_bench"


@dataclass(frozen=True)
class BenchCase:
    """One labelled failure."""

    id: str
    pipeline: str
    source: str
    fault: str | None
    graph: str
    case_id: str
    question: str
    gold: str
    evidence: tuple[str, ...]
    category: int
    prediction: str
    error_type: str
    op_id: str

    def failed_case(self, G: nx.DiGraph) -> FailedCase:
        """The case on its graph, ready for an attribution method."""
        return FailedCase(G, self.case_id, self.question, self.gold, self.evidence, self.prediction, self.category)


def case_view(G: nx.DiGraph, case: dict[str, Any], prediction: str) -> FailedCase:
    """A graph's recorded case (``G.graph["cases"]`` entry) as a `FailedCase` with this prediction."""
    return FailedCase(G, case["case_id"], case["question"], case["gold"], tuple(case.get("evidence") or ()),
                      prediction, int(case.get("category") or 0))


def grounded(case: FailedCase, probe: Probe) -> bool:
    """Whether a correct answer rests on the evidence: its context holds the information, which came
    from the evidence turns (raw, or through a store unit derived from them)."""
    context = case.context_var
    if context is None or not probe.holds(context):
        return False
    return probe.raw_holds(text_of(case.G.nodes[context]["value"])) or any(probe.holds(u) for u in case.stored())


def _bench_cases_of(pipeline: str, G: nx.DiGraph, results: dict[str, dict[str, Any]], judge: Judge,
                    graphs: Path, limit: int | None) -> list[BenchCase]:
    out: list[BenchCase] = []
    conversation = G.graph["conversation"]
    base = None
    for case in G.graph["cases"]:
        result = results.get(case["case_id"])
        if result is None or result.get("error") or not case.get("evidence"):
            continue
        view = case_view(G, case, result["prediction"])
        if result.get("correct"):
            if not grounded(view, Probe(view, judge)):
                continue
            for injection in injections(view, Probe(view, judge)):
                replayed = replay(G, injection.overrides, cases=[view.key])
                answer = replayed.answers[view.key]
                faulted = case_view(replayed.graph, case, answer)
                if judge.correct(view.question, view.gold, answer) or not effective(injection, faulted,
                                                                                    Probe(faulted, judge)):
                    continue
                name = safe_name(f"{pipeline}-{conversation}-{view.key}-{injection.fault}")
                save_graph(replayed.graph, graphs / f"{name}.json.gz")
                out.append(BenchCase(name, pipeline, "injected", injection.fault, f"graphs/{name}.json.gz",
                                     view.case_id, view.question, view.gold, view.evidence, view.category, answer,
                                     injection.error_type, injection.op_id))
        else:
            label = counterfactual(view, judge)
            if not label.details.get("clean"):
                continue
            if base is None:
                base = f"graphs/{safe_name(f'{pipeline}-{conversation}', '.json.gz')}"
                save_graph(G, graphs.parent / base)
            out.append(BenchCase(f"{pipeline}-{conversation}-{view.key}-natural", pipeline, "natural", None, base,
                                 view.case_id, view.question, view.gold, view.evidence, view.category,
                                 view.prediction, label.error_type, label.op_id))
        if limit is not None and len(out) >= limit:
            break
    return out


def build_bench(pipelines: list[str], data: str, out_dir: str | Path, judge: Judge, *,
                limit_per_conversation: int | None = None,
                on_progress: Callable[[str], None] | None = None) -> tuple[list[BenchCase], Path]:
    """Run each pipeline traced on ``data``, inject faults, label failures; save under ``out_dir``."""
    from memopt.evaluate.pipeline import run_pipeline

    out_dir = Path(out_dir)
    graphs = out_dir / "graphs"
    graphs.mkdir(parents=True, exist_ok=True)
    cases: list[BenchCase] = []
    for pipeline in pipelines:
        with tempfile.TemporaryDirectory() as tmp:
            result = run_pipeline(pipeline, data, trace_dir=tmp, judge_lm="sim")
            results = {c.case_id: c.to_dict() for c in result.cases}
            for path in sorted(Path(tmp).glob("*.json")):
                if on_progress is not None:
                    on_progress(f"{pipeline}: {path.stem}")
                cases += _bench_cases_of(pipeline, load_graph(path), results, judge, graphs, limit_per_conversation)
    document = {"schema": SCHEMA, "schema_version": 1, "data": data, "cases": [_to_json(c) for c in cases]}
    return cases, write_json(out_dir / "cases.json", document)


def _to_json(case: BenchCase) -> dict[str, Any]:
    out = asdict(case)
    out["evidence"] = list(case.evidence)
    return out


def load_bench(path: str | Path) -> list[BenchCase]:
    """Read the cases of a saved bench (graph paths stay relative to the file's folder)."""
    document = read_json(path, missing="no such bench cases file (write one with `memopt bench attribution`).")
    if not isinstance(document, dict) or document.get("schema") != SCHEMA:
        raise DataError(f"{path}: not an attribution bench file (expected \"schema\": \"{SCHEMA}\").")
    try:
        return [BenchCase(**{**c, "evidence": tuple(c["evidence"])}) for c in document["cases"]]
    except (KeyError, TypeError) as e:
        raise DataError(f"{path}: malformed bench case ({type(e).__name__}: {e}).") from None


def score_bench(cases: list[BenchCase], methods: list[str], judge_factory: Callable[[], Judge], base_dir: str | Path,
                ) -> list[dict[str, Any]]:
    """One row per (pipeline, method): n, type and op accuracy, judge calls and seconds per case."""
    from memopt.attribution.registry import get_method

    graphs: dict[str, nx.DiGraph] = {}
    rows = []
    by_pipeline: dict[str, list[BenchCase]] = defaultdict(list)
    for case in cases:
        by_pipeline[case.pipeline].append(case)
    for pipeline, group in by_pipeline.items():
        for method in methods:
            judge = judge_factory()
            right_type = right_op = calls = 0
            seconds = 0.0
            for case in group:
                if case.graph not in graphs:
                    graphs[case.graph] = load_graph(Path(base_dir) / case.graph)
                started = time.perf_counter()
                found = get_method(method)(case.failed_case(graphs[case.graph]), judge)
                seconds += time.perf_counter() - started
                right_type += found.error_type == case.error_type
                right_op += found.op_id == case.op_id
                calls += found.judge_calls
            n = len(group)
            rows.append({"pipeline": pipeline, "method": method, "n": n, "type_accuracy": round(right_type / n, 3),
                         "op_accuracy": round(right_op / n, 3), "judge_calls_per_case": round(calls / n, 2),
                         "seconds_per_case": round(seconds / n, 4)})
    return rows

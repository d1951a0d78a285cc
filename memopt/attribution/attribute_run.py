"""The API behind `memopt attribute`: attribute every failed case of a trace.

- `attribute_run`: a run memopt made (``memopt run``): its results file says which cases failed.
- `attribute_trace`: any trace directory (`memopt.trace.readers.open_trace`: memopt's graphs, a tapped Mem0's
  recording, smartcomment / MemTraceBench graphs with or without annotations); which cases failed comes from a
  cases file (`memopt.attribution.cases`), else from the judge ops the graphs hold; a system prior
  (`memopt.attribution.prior`) names the stages of foreign ops.

Cases are attributed ``workers`` at a time (each in a copy of the caller's context, `memopt.core.parallel`);
the attributions come back in the order of the graph files and their cases, as a serial run gives them. Each
carries the question, the graph's own op id and op name, and where its evidence came from (`finish`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import networkx as nx

from memopt.attribution.case import FailedCase, failed_cases, is_failed
from memopt.attribution.evidence import EvidenceSettings
from memopt.attribution.methods import attribute
from memopt.attribution.prior import SystemPrior
from memopt.attribution.types import Attribution
from memopt.core.errors import DataError
from memopt.core.parallel import map_ordered
from memopt.evaluate.run import RunResult
from memopt.judge.judges import Judge
from memopt.trace.graph import answer_of
from memopt.trace.io import load_graph

__all__ = ["attribute_run", "attribute_trace", "check_same_run", "finish", "graph_files", "summarize_attributions"]


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
                  verify: bool = False, masked: bool = False, on_case: Callable[[Attribution], None] | None = None,
                  source: str = "the results", workers: int = 1, flagged: frozenset[str] = frozenset()
                  ) -> list[Attribution]:
    """Blame every failed case of ``results`` on the graphs in ``trace_dir``, ``workers`` cases at a time; with
    ``masked``, each failure blamed upstream is followed by the answer op's fault behind it, when there is one
    (`memopt.attribution.masked`; replayed on the LM the graph recorded). Cases in ``flagged`` (labelled as no
    memory failure, `memopt.attribution.labels`) are left out.

    Before any judge call, the graphs are checked to belong to the run of the results (`check_same_run`;
    ``source`` names the results file in its errors).
    """
    from memopt.attribution.masked import masked_faults

    graphs = [(path, load_graph(path)) for path in graph_files(trace_dir)]
    check_same_run(results, graphs, source=source, trace_dir=trace_dir)
    attached = next((path for path, G in graphs if G.graph.get("source")), None)
    replays = [flag for flag, on in (("--verify", verify), ("--masked", masked)) if on]
    if replays and attached is not None:
        raise DataError(f"{attached}: a graph recorded from a real system ({attached.parent} was written by memopt "
                        f"attach); {' and '.join(replays)} {'replays' if len(replays) == 1 else 'replay'} memopt's own "
                        f"pipeline, not that system: leave out {' and '.join(replays)}.")
    by_id = {c.case_id: c.to_dict() for c in results.cases}
    unanswered = [(path, c["case_id"]) for path, G in graphs for c in G.graph["cases"]
                  if c["case_id"] in by_id and is_failed(by_id[c["case_id"]]) and answer_of(G, c.get("key")) is None]
    if unanswered:
        path, case_id = unanswered[0]
        raise DataError(f"{path}: case {case_id} failed in {source}, but the graph holds no answer to it "
                        f"({len(unanswered)} failed case(s) so); the graph is damaged: write it again with "
                        "`memopt run --trace DIR`.")
    cases = [case for _, G in graphs for case in failed_cases(G, by_id) if case.case_id not in flagged]

    def one(case: FailedCase) -> Attribution:
        attribution = finish(case, attribute(case, judge, method, verify=verify))
        if on_case is not None:
            on_case(attribution)
        return attribution

    firsts = map_ordered(one, cases, workers=workers)
    if not masked:
        return firsts
    behind = {k: (c, finish(c, a)) for k, (c, a) in
              masked_faults(list(zip(cases, firsts, strict=True)), judge, workers=workers).items()}
    if on_case is not None:
        for _, attribution in behind.values():
            on_case(attribution)
    return [a for first in firsts for a in (first, *([behind[first.case_id][1]] if first.case_id in behind else []))]


def finish(case: FailedCase, attribution: Attribution) -> Attribution:
    """An attribution as `memopt attribute` writes it: the question, the graph's own op id (a smartcomment graph's
    ``op-…``; memopt's node kept as ``node_id``), the op's own name, where the evidence came from."""
    node = attribution.node
    d = case.G.nodes[node] if node in case.G else {}
    own = d.get("sc_op_id")
    return replace(attribution, question=case.question, op_id=own or node, node_id=node if own else "",
                   op_name=str(d.get("sc_op_name") or attribution.operation),
                   evidence="retrieved" if case.pseudo_evidence else "gold")


def attribute_trace(trace_dir: str | Path, judge: Judge, *, cases_file: str | Path | None = None,
                    method: str = "memtrace", prior: SystemPrior | None = None, gold_evidence: bool = True,
                    settings: EvidenceSettings | None = None, on_case: Callable[[Attribution], None] | None = None,
                    workers: int = 1, flagged: frozenset[str] = frozenset()) -> list[Attribution]:
    """Blame every failed case of any trace directory (see the module docstring): the cases of ``cases_file``,
    else those the graphs' judge ops judged wrong. ``gold_evidence`` False ignores the gold evidence a graph
    holds (evidence is retrieved, as for a graph without it). Cases in ``flagged`` (labelled as no memory
    failure, `memopt.attribution.labels`) are left out."""
    from memopt.attribution.cases import cases_from_file, cases_from_judges, load_cases
    from memopt.attribution.prior import apply_prior
    from memopt.trace.readers import open_trace

    lines = load_cases(cases_file) if cases_file is not None else None
    graphs = open_trace(trace_dir)
    if prior is not None:
        for traced in graphs:
            apply_prior(traced.graph, prior)
    if lines is not None:
        cases = cases_from_file(graphs, lines, source=str(cases_file), gold_evidence=gold_evidence, settings=settings)
    else:
        cases = cases_from_judges(graphs, gold_evidence=gold_evidence, settings=settings)
        if not cases:
            raise DataError(f"{trace_dir}: no failed case to attribute: the graphs hold no judge op that judged an "
                            "answer wrong; name the failures with --cases FILE (JSON lines: question, expected, "
                            "optional prediction, date, graph), or pass --results of a `memopt run`.")
    cases = [case for case in cases if case.case_id not in flagged]

    def one(case: FailedCase) -> Attribution:
        attribution = finish(case, attribute(case, judge, method))
        if on_case is not None:
            on_case(attribution)
        return attribution

    return map_ordered(one, cases, workers=workers)


def check_same_run(results: RunResult, graphs: list[tuple[Path, nx.DiGraph]], *, source: str,
                   trace_dir: str | Path) -> None:
    """Refuse graphs of another run: a different run id, pipeline or question, or failed cases without a graph.

    Results and graphs must carry the same run id, or neither one: results without a run id are never
    paired with graphs that have one (nor the other way round). Files written before run ids existed
    carry none; they are checked by content only (pipeline, case ids and questions, every failed case
    present).
    """
    answered: dict[str, str] = {}
    for path, G in graphs:
        if G.graph.get("pipeline") != results.pipeline:
            raise DataError(f"{path}: a graph of pipeline {G.graph.get('pipeline')!r}, but {source} are of "
                            f"{results.pipeline!r}; pass the trace directory of the same run.")
        run_id = G.graph.get("run_id") or None
        if run_id != (results.run_id or None):
            graph_run = f"a graph of run {run_id}" if run_id else "a graph without a run id (an older memopt)"
            their_run = f"are of run {results.run_id}" if results.run_id else "carry no run id"
            raise DataError(f"{path}: {graph_run}, but {source} {their_run}; pass the results.json and the "
                            "--trace directory written by the same `memopt run`.")
        cases = G.graph.get("cases")
        if not isinstance(cases, list) or not all(isinstance(c, dict) and "case_id" in c for c in cases):
            raise DataError(f"{path}: graph attribute 'cases' is not a list of cases; the file is damaged.")
        answered.update((str(c["case_id"]), str(c.get("question"))) for c in cases)
    failed = [c for c in results.cases if is_failed(c.to_dict())]
    wrong = [c.case_id for c in failed if c.case_id in answered and answered[c.case_id] != c.question]
    missing = [c.case_id for c in failed if c.case_id not in answered]
    if wrong or missing:
        what = (f"{len(wrong)} failed case(s) ask other questions in the graphs (e.g. {wrong[0]})" if wrong else
                f"{len(missing)} of {len(failed)} failed case(s) have no graph (e.g. {missing[0]})")
        raise DataError(f"{source}: {what} in {trace_dir}; results and trace come from different runs (other "
                        "data or --limit): pass the results.json and the --trace directory of the same `memopt run`.")


def summarize_attributions(attributions: list[Attribution]) -> dict[str, Any]:
    """Counts by error type and by operation (first faults; ``behind``: the answer-op faults found behind them),
    mean judge calls per failure, share verified."""
    firsts = [a for a in attributions if not a.masked_by]
    n = len(firsts)
    verified = [a.verified for a in attributions if a.verified is not None]
    return {
        "n": n,
        "behind": len(attributions) - n,
        "by_error_type": dict(Counter(a.error_type for a in firsts).most_common()),
        "by_operation": dict(Counter(a.op_name or a.operation for a in firsts).most_common()),
        "judge_calls_per_case": round(sum(a.judge_calls for a in attributions) / n, 2) if n else 0.0,
        "verified": round(sum(verified) / len(verified), 3) if verified else None,
    }

"""`memopt bench evidence`: recall@k of the evidence retrieved without gold, wherever the data has gold evidence.

The source is a directory of MemTraceBench-format graphs (each annotation's ``source_evidence_ids``, else the
query node's evidence names), or data `memopt.data.source.load_data` reads (a LoCoMo file: each question's
``evidence`` dia_ids; a LongMemEval file: its ``has_answer`` turns; a ``synthetic`` spec). For every question
with gold evidence, the turns of its conversation are ranked as attribution ranks them
(`memopt.attribution.evidence.TurnIndex`): BM25 alone, dense alone (the ``embedding`` role), and fused (what
attribution uses), each over the query variants with the expected answer, and fused over the question alone.
recall@k is the share of a question's gold evidence turns in the top k, averaged over questions; hit@k the
share of questions with at least one.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memopt.attribution.evidence import TurnIndex, graph_index
from memopt.lm.embedding import Embedder, LocalEmbedder

__all__ = ["bench_evidence", "KS", "RANKINGS"]

KS = (1, 2, 4, 8, 16)
RANKINGS = (("bm25", "bm25", True), ("dense", "dense", True), ("fused", "fused", True),
            ("fused, question only", "fused", False))


def _from_graphs(directory: Path, embedder: Embedder) -> Iterator[tuple[TurnIndex, str, str, set[str]]]:
    from memopt.trace.memtracebench import load_memtrace

    for path in sorted(directory.rglob("*.json")):
        G, annotations = load_memtrace(path)
        index = graph_index(G, embedder)
        by_sc = {d.get("sc_id"): n for n, d in G.nodes(data=True) if d.get("kind") == "turn"}
        by_name = {d["name"].removeprefix("turn:"): n for n, d in G.nodes(data=True) if d.get("kind") == "turn"}
        asked = set()
        for a in annotations:
            gold = {by_sc.get(e) or by_name.get(e.rpartition("@")[0]) for e in a.source_evidence_ids} - {None}
            if gold and a.golden_answers:
                asked.add(a.case_key)
                yield index, a.query, a.golden_answers[0], gold
        for case in G.graph.get("cases") or []:
            gold = {by_name[e] for e in case.get("evidence") or [] if e in by_name}
            if case["key"] not in asked and gold and case.get("gold"):
                yield index, case["question"], case["gold"], gold


def _from_data(spec: str, embedder: Embedder) -> Iterator[tuple[TurnIndex, str, str, set[str]]]:
    from memopt.data.source import load_data

    _, conversations = load_data(spec)
    for conversation in conversations:
        turns = conversation.turns
        dates = {s.index: s.date_time for s in conversation.sessions}
        index = TurnIndex.build([t.dia_id for t in turns],
                                [f"{t.speaker}: {t.text} ({dates.get(t.session, '')})" for t in turns], embedder)
        for case in conversation.cases:
            gold = set(case.evidence) & set(index.ids)
            if gold:
                yield index, case.question, case.gold, gold


def bench_evidence(source: str | Path, *, ks: tuple[int, ...] = KS, embedder: Embedder | None = None,
                   limit: int | None = None) -> dict[str, Any]:
    """recall@k and hit@k of each ranking over the questions of ``source`` (see the module docstring)."""
    embedder = embedder if embedder is not None else LocalEmbedder()
    path = Path(str(source))
    items = _from_graphs(path, embedder) if path.is_dir() else _from_data(str(source), embedder)
    top = max(ks)
    sums = {name: {k: [0.0, 0] for k in ks} for name, _, _ in RANKINGS}
    questions = 0
    for index, question, expected, gold in items:
        if limit is not None and questions >= limit:
            break
        questions += 1
        for name, how, with_expected in RANKINGS:
            ranked = index.rank(question, expected if with_expected else "", k=top, how=how)
            for k in ks:
                found = len(gold & set(ranked[:k]))
                sums[name][k][0] += found / len(gold)
                sums[name][k][1] += found > 0
    rows = [{"ranking": name, "questions": questions,
             **{f"recall@{k}": round(sums[name][k][0] / questions, 3) if questions else 0.0 for k in ks},
             **{f"hit@{k}": round(sums[name][k][1] / questions, 3) if questions else 0.0 for k in ks}}
            for name, _, _ in RANKINGS]
    return {"source": str(source), "embedding": embedder.spec, "questions": questions, "rows": rows}

"""`memopt bench attribution --labels FILE`: every attribution method scored against a team's own labels.

The labels are `memopt label`'s (`memopt.attribution.labels`): each accepted or corrected case is a failure
whose faulty op and error type a person settled; flagged cases (a wrong expected answer, a wrong judge verdict,
not a memory error) are no memory failures and are left out, as MemTraceBench's loader leaves out its
non-memory labels. Each case is rebuilt from its graph (the file the label names, relative to the labels file,
and never outside its folder) and every method blames it again; the metrics are MemTraceBench's: error-type
accuracy and exact op accuracy (a MemTraceBench graph's op counts through its smartcomment ``op_id``).
Methods that need replay are scored only when every graph is one `memopt run` wrote (a recording or a
MemTraceBench file cannot be replayed).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

__all__ = ["score_labels"]


def _replayable(G: Any) -> bool:
    return not G.graph.get("source") and not G.graph.get("graph_id") and "memtrace_document" not in G.graph


def score_labels(path: str | Path, methods: list[str] | None = None) -> dict[str, Any]:
    """Score methods on the labelled cases of a labels file: ``{"results": [...], "decisions": {...}, ...}``."""
    from memopt.attribution.case import FailedCase
    from memopt.attribution.evidence import seed_evidence
    from memopt.attribution.labels import load_labels
    from memopt.attribution.registry import get_method
    from memopt.bench.attribution import scored_methods
    from memopt.core.errors import DataError
    from memopt.core.files import inside
    from memopt.judge.judges import LexicalJudge
    from memopt.trace.memtracebench import open_graph

    labels = load_labels(path)
    folder = Path(path).parent
    kept = [label for label in labels.labels.values() if not label.flagged]
    graphs: dict[str, Any] = {}
    cases = []
    for label in kept:
        if label.graph not in graphs:
            graphs[label.graph] = open_graph(inside(folder, label.graph))
        G = graphs[label.graph]
        recorded = next((c for c in G.graph.get("cases") or [] if c.get("case_id") == label.case_id), None)
        if recorded is None:
            raise DataError(f"{path}: case {label.case_id} is not a case of {folder / label.graph}; label the graphs "
                            "of that folder, or move the labels file back beside them.")
        gold = label.golden_answers[0] if label.golden_answers else str(recorded.get("gold", ""))
        evidence, pseudo = seed_evidence(G, recorded["question"], gold, tuple(recorded.get("evidence") or ()))
        category = recorded.get("category")
        cases.append((FailedCase(G, label.case_id, recorded["question"], gold, evidence, label.prediction or "",
                                 category if isinstance(category, int) else 0, pseudo), label))
    chosen = scored_methods(methods, replay=bool(graphs) and all(_replayable(G) for G in graphs.values()))
    rows = []
    for method in chosen:
        right_type = right_op = calls = 0
        for case, label in cases:
            found = get_method(method)(case, LexicalJudge())
            right_type += found.error_type == label.final_error_type
            right_op += case.G.nodes[found.op_id].get("sc_op_id", found.op_id) == label.final_op_id
            calls += found.judge_calls
        n = max(1, len(cases))
        rows.append({"method": method, "n": len(cases), "type_accuracy": round(right_type / n, 3),
                     "op_accuracy": round(right_op / n, 3), "judge_calls_per_case": round(calls / n, 2)})
    reviewed = Counter(label.attributed.get("method") or "?" for label in kept)
    return {"results": rows, "decisions": labels.counts(), "left_out": len(labels.flagged),
            "flags": dict(Counter(f for label in labels.labels.values() for f in label.flags)),
            "reviewed_methods": dict(reviewed), "labels": str(path)}

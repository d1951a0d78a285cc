"""The cases a reviewer walks through, and their labels: what the labelling page shows and saves.

`ReviewSet.open` reads a directory once (its graphs and ``attributions.jsonl``, `memopt.report.sources`; its
labels, ``labels.jsonl``, `memopt.attribution.labels`). Every attributed first fault is one `ReviewItem`, in the
order of the attributions; a case labelled earlier whose attribution is gone (flagged cases leave a later
`memopt attribute`) is shown from its label. Nothing is read from outside the directory: graphs are found by
`memopt.report.sources.graph_files_under`, which keeps only files that resolve inside it.

Damage never costs a label: a graph that cannot be read is an error shown for the directory (and for each
case on it, which cannot be labelled until it is repaired); a labels file that cannot be read is an error too,
and then nothing is saved — the file is never written over — until it reads again (`ReviewSet.recheck`).
`ReviewSet.decide` validates a decision, saves the whole file atomically, and returns the new label.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import networkx as nx

from memopt.attribution.labels import FLAGS, Label, LabelSet, labels_beside, load_labels
from memopt.core.errors import ConfigError, DataError, MemoptError
from memopt.report.sources import DiagnosedCase, load_diagnosis
from memopt.taxonomy import ERROR_TYPES
from memopt.trace.explain import plain_reason

__all__ = ["ReviewItem", "ReviewSet", "describe"]


@dataclass
class ReviewItem:
    """One attributed failure to review (``case`` None when only its label is left, or its graph is damaged)."""

    case_id: str
    graph: str
    case: DiagnosedCase | None = None
    error: str | None = None
    attributed: dict[str, Any] = field(default_factory=dict)


class ReviewSet:
    """The review of one directory (see the module docstring); thread-safe."""

    def __init__(self, directory: Path, items: list[ReviewItem], graphs: dict[str, nx.DiGraph],
                 damaged: dict[str, str], labels: LabelSet, label_error: str | None) -> None:
        self.directory, self.items, self.graphs, self.damaged = directory, items, graphs, damaged
        self.labels, self.label_error = labels, label_error
        self._lock = threading.Lock()

    @classmethod
    def open(cls, directory: str | Path, *, attributions: str | Path | None = None) -> ReviewSet:
        """Read a directory's graphs, attributions and labels (see the module docstring)."""
        directory = Path(directory)
        diagnosis = load_diagnosis(directory, attributions=attributions)
        path = labels_beside(directory)
        try:
            labels, label_error = load_labels(path, missing_ok=True), None
        except DataError as e:
            labels, label_error = LabelSet(path), str(e)
        items = [ReviewItem(c.case_id, c.graph, c, attributed=_attributed(c)) for c in diagnosis.cases]
        seen = {i.case_id for i in items}
        damaged = ", ".join(diagnosis.damaged)
        for case_id in diagnosis.unplaced:
            items.append(ReviewItem(case_id, "", error=f"its graph is not among those that read ({damaged} cannot "
                                                       "be read: see the error above)"))
            seen.add(case_id)
        items += [ReviewItem(k, v.graph, attributed=dict(v.attributed)) for k, v in labels.labels.items()
                  if k not in seen]
        if not items:
            raise DataError(f"{directory}: no attributed failures to review (its attributions are empty).")
        return cls(directory, items, diagnosis.graphs, diagnosis.damaged, labels, label_error)

    def recheck(self) -> None:
        """Read a damaged labels file again (the reviewer may have repaired it); labelling resumes once it reads."""
        with self._lock:
            if self.label_error is None:
                return
            try:
                self.labels, self.label_error = load_labels(self.labels.path, missing_ok=True), None
            except DataError as e:
                self.label_error = str(e)

    def progress(self) -> dict[str, int]:
        """How many cases are reviewed, of how many."""
        return {"reviewed": sum(i.case_id in self.labels.labels for i in self.items), "total": len(self.items)}

    def errors(self) -> list[str]:
        """What the page must say is damaged (graphs, the labels file)."""
        return [*self.damaged.values(), *([self.label_error] if self.label_error else [])]

    def item(self, index: int) -> ReviewItem:
        """The item at ``index``; a `ConfigError` when there is none."""
        if not 0 <= index < len(self.items):
            raise ConfigError(f"no case {index}: there are {len(self.items)}.")
        return self.items[index]

    def graph(self, item: ReviewItem) -> nx.DiGraph | None:
        """The graph of an item (None when it cannot be read)."""
        return self.graphs.get(item.graph) if item.case is not None else None

    def ops(self, item: ReviewItem) -> list[dict[str, str]]:
        """The operations an item's answer can be blamed on: every op of its graph before its answer, newest last."""
        G = self.graph(item)
        if G is None or item.case is None:
            return []
        from memopt.trace.graph import answer_of, ops_in_order

        answer = answer_of(G, item.case.key)
        limit = G.nodes[answer].get("created", float("inf")) if answer is not None else float("inf")
        others = {c.get("key") for c in G.graph.get("cases") or []} - {item.case.key}
        found = []
        for op in ops_in_order(G):
            key = op.rsplit(":", 1)[-1]
            if G.nodes[op].get("start", 0) <= limit and key not in others:
                found.append({"id": op, "operation": str(G.nodes[op].get("operation")), "key": key})
        return found

    def decide(self, index: int, decision: str | None, *, error_type: str | None = None, op_id: str | None = None,
               flags: list[str] | None = None, note: str = "") -> Label | None:
        """Record a reviewer's decision on item ``index`` (None clears its label) and save the file atomically."""
        with self._lock:
            if self.label_error is not None:
                raise DataError(f"labels are not saved while the labels file is damaged — {self.label_error}")
            item = self.item(index)
            if decision is None:
                labels = LabelSet(self.labels.path, {k: v for k, v in self.labels.labels.items() if k != item.case_id})
                labels.save()
                self.labels = labels
                return None
            label = self._label(item, decision, error_type, op_id, list(flags or []), note)
            labels = self.labels.with_label(label)
            labels.save()
            self.labels = labels
            return labels.labels[item.case_id]

    def _label(self, item: ReviewItem, decision: str, error_type: str | None, op_id: str | None, flags: list[str],
               note: str) -> Label:
        if item.case is None:
            raise ConfigError(f"case {item.case_id} cannot be labelled: {item.error or 'its attribution is gone'}.")
        a, G = item.case.attribution, self.graph(item)
        if G is None:
            raise ConfigError(f"case {item.case_id} cannot be labelled: its graph {item.graph} cannot be read.")
        if decision == "accepted":
            error_type, op_id, flags = a.error_type, a.op_id, []
        elif decision == "corrected":
            if error_type not in ERROR_TYPES:
                raise ConfigError(f"error type {error_type!r}: pick one of {', '.join(ERROR_TYPES)}.")
            if op_id not in {o["id"] for o in self.ops(item)}:
                raise ConfigError(f"op {op_id!r} is not an operation of case {item.case_id}'s graph before its "
                                  "answer; pick one in the graph or the list.")
        elif decision == "flagged":
            unknown = [f for f in flags if f not in FLAGS]
            if not flags or unknown:
                raise ConfigError(f"flag {unknown[0] if unknown else None!r}: pick one of {', '.join(FLAGS)}.")
            error_type = op_id = None
        else:
            raise ConfigError(f"decision {decision!r}: accepted, corrected or flagged.")
        bench_op = G.nodes[op_id].get("sc_op_id", op_id) if op_id in G else op_id
        c = item.case
        try:
            return Label(item.case_id, decision, error_type, bench_op, op_id, tuple(flags), note[:2000], item.graph,
                         c.question, (c.expected,), c.prediction, c.evidence, item.attributed)
        except ValueError as e:
            raise ConfigError(f"case {item.case_id}: {e}.") from None


def _attributed(case: DiagnosedCase) -> dict[str, Any]:
    a = case.attribution
    return {"error_type": a.error_type, "op_id": a.op_id, "operation": a.operation, "method": a.method,
            "confidence": a.confidence}


def describe(review: ReviewSet, index: int) -> dict[str, Any]:
    """What the page shows of item ``index``: the case, the attribution in words, its label, the ops to pick."""
    item = review.item(index)
    label = review.labels.labels.get(item.case_id)
    out: dict[str, Any] = {"index": index, "case_id": item.case_id, "graph": item.graph, "error": item.error,
                           "attributed": item.attributed, "label": label.to_annotation() if label else None,
                           "ops": review.ops(item)}
    if item.case is not None:
        c, G = item.case, review.graph(item)
        try:
            reason = plain_reason(c.attribution, G)
        except MemoptError as e:
            reason = f"{c.attribution.reason} ({e})"
        out |= {"question": c.question, "expected": c.expected, "prediction": c.prediction, "date": c.date,
                "reason": reason, "evidence": list(c.evidence)}
    elif label is not None:
        out |= {"question": label.query, "expected": "; ".join(label.golden_answers), "prediction": label.prediction,
                "date": "", "reason": "", "evidence": list(label.source_evidence_ids)}
    return out

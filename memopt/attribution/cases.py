"""Which cases failed, for a trace memopt did not run: a cases file, or the judge ops a graph already holds.

**A cases file** (``memopt attribute TRACE --cases FILE``) is JSON lines, one failed case each::

    {"question": "...", "expected": "the answer, or the user's correction", "prediction": "what the system said",
     "date": "2023-05-28", "graph": "conv-26.json"}

``question`` and ``expected`` are required (``expected`` may be a list: every item is needed); ``prediction``
defaults to the answer the graph recorded; ``date`` (the day the question was asked) to the graph's; ``graph``
names the graph (its file name, with or without ``.json``, its conversation or user id), else every graph is
searched for the question. A question is found in a
graph by its text (spaces and case aside), else by words (80 % of the question's words). Every line names one
failure; a line that names a graph the trace does not hold is one error naming the file and line. A question no
graph asks is one warning naming the file and line, and that line is skipped (left unattributed: a bench counts it
as a miss), so one question a reader cannot find does not stop the rest; when no line's question is found at all
(the wrong cases file or trace), that is one error.

**Judge ops**: a graph traced with a judge (MemBase's ``llm-judge``: score 0/1 directly or through a
``judge_response``) says which of its answers were wrong (`memopt.trace.memtracebench` reads the verdicts).

Either way, evidence is the gold evidence the graph holds when ``gold_evidence`` (the question node's evidence
names), else retrieved (`memopt.attribution.evidence`).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memopt.attribution.case import FailedCase
from memopt.attribution.evidence import EvidenceSettings, seed_evidence
from memopt.core.errors import DataError
from memopt.core.files import loads_json
from memopt.core.text import overlap
from memopt.trace.graph import answer_of
from memopt.trace.readers import TracedGraph
from memopt.trace.roles import question_text

__all__ = ["CaseLine", "load_cases", "cases_from_file", "cases_from_judges", "failed_case"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class CaseLine:
    """One line of a cases file."""

    question: str
    expected: str
    prediction: str | None = None
    date: str | None = None
    graph: str | None = None
    line: int = 0


def load_cases(path: str | Path) -> list[CaseLine]:
    """The lines of a cases file; a damaged line is one `DataError` naming the file, the line and the key."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"--cases {path}: no such file (JSON lines: question, expected, optional prediction, date, "
                        "graph).")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise DataError(f"--cases {path}: not UTF-8 text (JSON lines).") from None
    out = []
    for number, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            row = loads_json(raw)
        except json.JSONDecodeError as e:
            raise DataError(f"--cases {path}:{number}: not valid JSON ({e.msg}).") from None
        if not isinstance(row, dict):
            raise DataError(f"--cases {path}:{number}: expected an object, got {type(row).__name__}.")
        if isinstance(row.get("expected"), list):
            row["expected"] = _items(row["expected"], f"--cases {path}:{number}")
        for key in ("question", "expected"):
            if not isinstance(row.get(key), str | int | float) or not str(row[key]).strip():
                raise DataError(f"--cases {path}:{number}: {key!r} is missing or empty (every line needs question "
                                "and expected).")
        for key in ("prediction", "date", "graph"):
            if row.get(key) is not None and not isinstance(row[key], str | int | float):
                raise DataError(f"--cases {path}:{number}: {key!r} must be text, got {type(row[key]).__name__}.")
        out.append(CaseLine(str(row["question"]).strip(), str(row["expected"]).strip(),
                            None if row.get("prediction") is None else str(row["prediction"]),
                            None if row.get("date") is None else str(row["date"]),
                            None if row.get("graph") is None else str(row["graph"]), number))
    if not out:
        raise DataError(f"--cases {path}: no cases in it.")
    return out


def _items(items: list[Any], where: str) -> str:
    """An ``expected`` list (every item needed) as one gold: its items between "; " (`memopt.attribution.need`
    reads them back as items)."""
    if not items or not all(isinstance(i, str | int | float) and str(i).strip() for i in items):
        raise DataError(f"{where}: 'expected' as a list needs one or more items, each text (every item is needed).")
    texts = [str(i).strip() for i in items]
    return "; ".join(texts) if not any(";" in t for t in texts) else json.dumps(texts, ensure_ascii=False)


def _names(traced: TracedGraph) -> set[str]:
    G = traced.graph
    names = {traced.name, traced.path.name, traced.path.name.removesuffix(".gz"), traced.path.stem,
             str(G.graph.get("conversation")), str(G.graph.get("graph_id")), str(G.graph.get("file"))}
    return {n.removesuffix(".json") for n in names if n and n != "None"} | names


def _asked(traced: TracedGraph, question: str) -> dict[str, Any] | None:
    cases = [c for c in traced.graph.graph.get("cases") or [] if answer_of(traced.graph, c.get("key")) is not None]
    exact = [c for c in cases if question_text(str(c.get("question"))) == question_text(question)]
    if exact:
        return exact[-1]
    close = [(overlap(question, str(c.get("question"))), c) for c in cases]
    best = max(close, key=lambda p: p[0], default=(0.0, None))
    return best[1] if best[0] >= 0.8 else None


def failed_case(traced: TracedGraph, case: dict[str, Any], expected: str, prediction: str | None, date: str | None,
                *, gold_evidence: bool = True, settings: EvidenceSettings | None = None) -> FailedCase:
    """The failed case of one question of a graph (evidence: gold when there is and ``gold_evidence``, else
    retrieved)."""
    G = traced.graph
    if prediction is None:
        answer = answer_of(G, case["key"])
        prediction = str(G.nodes[answer].get("value") or "") if answer else ""
    given = tuple(case.get("evidence") or ()) if gold_evidence else ()
    evidence, retrieved = seed_evidence(G, case["question"], expected, given, settings)
    category = case.get("category")
    return FailedCase(G, case["case_id"], case["question"], expected, evidence, prediction,
                      category if isinstance(category, int) else 0, retrieved,
                      date or case.get("date") or case.get("question_date"))


def cases_from_file(graphs: list[TracedGraph], lines: list[CaseLine], *, source: str, gold_evidence: bool = True,
                    settings: EvidenceSettings | None = None) -> list[FailedCase]:
    """The failed cases a cases file names, each on the graph that asks its question; a question no graph asks is
    a warning and its line skipped, unless no line's question is found (see the module doc)."""
    out: list[FailedCase] = []
    unfound: list[str] = []
    for line in lines:
        where = graphs
        if line.graph is not None:
            where = [g for g in graphs if line.graph in _names(g) or line.graph.removesuffix(".json") in _names(g)]
            if not where:
                known = ", ".join(sorted({g.path.name for g in graphs})[:6])
                raise DataError(f"--cases {source}:{line.line}: graph {line.graph!r} is not in the trace directory "
                                f"(it holds {known}{', ...' if len(graphs) > 6 else ''}).")
        found = next(((g, c) for g in where if (c := _asked(g, line.question)) is not None), None)
        if found is None:
            unfound.append(f"--cases {source}:{line.line}: no graph{' ' + repr(line.graph) if line.graph else ''} "
                           f"asks {line.question!r}; check the question's text and the graph named.")
            continue
        traced, case = found
        out.append(failed_case(traced, case, line.expected, line.prediction, line.date,
                               gold_evidence=gold_evidence, settings=settings))
    if unfound and not out:
        raise DataError(unfound[0] if len(unfound) == 1 else f"{unfound[0]} (and no other line's question is asked "
                        f"by any graph either: {len(unfound)} lines)")
    for message in unfound:
        logger.warning("%s This case is skipped (left unattributed).", message)
    return out


def cases_from_judges(graphs: list[TracedGraph], *, gold_evidence: bool = True,
                      settings: EvidenceSettings | None = None) -> list[FailedCase]:
    """The cases the graphs' own judge ops judged wrong (expected: the gold the judge read)."""
    out = []
    for traced in graphs:
        for case in traced.graph.graph.get("cases") or []:
            if case.get("judged") is False and answer_of(traced.graph, case.get("key")) is not None:
                out.append(failed_case(traced, case, str(case.get("gold") or ""), None, None,
                                       gold_evidence=gold_evidence, settings=settings))
    return out

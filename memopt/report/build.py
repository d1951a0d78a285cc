"""`build_report`: the data of a diagnostic report, from a `Diagnosis` (views render it: `memopt.report.page`).

The report is plain, versioned data (`SCHEMA`), so the HTML page, the Markdown and an MLflow artifact all show
the same thing, and a report logged by `memopt optimize` can be rendered again later:

- ``counts``: failures by error type and by operation, and the type × operation matrix — the figures
  `memopt attribute` prints (first faults; faults found behind them, ``behind``, are counted apart);
- ``rounds``: failures by error type per round, for an optimize run;
- ``evidence``: where each failure's evidence came from (gold turns, or found by words), and how far the gold
  evidence got: into memory, into the store at question time, into the answer's context;
- ``groups``: the recurring mechanisms (`memopt.report.mechanisms`), largest first, each with its cases,
  `REPRESENTATIVES` representative cases (distinct conversations first) linking to their graph views, the
  sentences of the blamed op's prompt that bear on it, what to change first, and — with a writer LM
  (`memopt.report.writer`) — a paragraph; with a writer, an overall ``summary`` too;
- ``cost``: what the diagnosis took: attributions, judge calls, seconds, the writer's LM calls.
"""

from __future__ import annotations

import datetime as dt
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from memopt.core.errors import ConfigError, MemoptError, one_line
from memopt.core.files import safe_name
from memopt.report.mechanisms import Mechanism, bearing_sentences, instructions_of, mechanism_of
from memopt.report.sources import DiagnosedCase, Diagnosis
from memopt.taxonomy import ERROR_TYPES
from memopt.trace.explain import plain_reason

__all__ = ["SCHEMA", "REPRESENTATIVES", "build_report", "case_link", "system_overview", "read_overview"]

SCHEMA = "memopt.report/1"
REPRESENTATIVES = 3


def case_link(case_id: str) -> str:
    """Where a case's graph view is written, relative to the report: ``cases/<case id>.html``."""
    return f"cases/{safe_name(case_id, '.html')}"


def read_overview(path: str | Path) -> str:
    """The ``overview`` of a system prior file (YAML or JSON); a file without one is a `ConfigError` naming it."""
    from memopt.core.files import load_yaml, read_text

    try:
        value = load_yaml(read_text(path, missing="no such system prior file."))
    except MemoptError:
        raise
    except Exception as e:  # noqa: BLE001 — YAML's own errors, in one message naming the file
        raise ConfigError(f"--system-prior {path}: not YAML or JSON ({one_line(e)}).") from None
    overview = value.get("overview") if isinstance(value, dict) else None
    if not isinstance(overview, str) or not overview.strip():
        raise ConfigError(f"--system-prior {path}: no 'overview' text in it (a few lines on what the system is and "
                          "what each operation does).")
    return overview


def system_overview(diagnosis: Diagnosis, prior: str | None = None) -> str:
    """The system in a few lines: ``prior`` (a system prior's overview) when given, else its declared operations."""
    if prior:
        return prior.strip()
    G = next(iter(diagnosis.graphs.values()), None)
    operations = (G.graph.get("operations") or {}) if G is not None else {}
    lines = [f"- {name} ({', '.join(spec.get('stages') or []) or 'no stage'}): {spec.get('description', '')}"
             for name, spec in operations.items() if isinstance(spec, dict)]
    head = f"Memory system `{diagnosis.pipeline}`" if diagnosis.pipeline else "The memory system"
    return f"{head}, operations in data-flow order:\n" + "\n".join(lines) if lines else head + "."


def _counts(cases: list[DiagnosedCase]) -> dict[str, Any]:
    types = Counter(c.attribution.error_type for c in cases)
    ops = Counter(c.attribution.operation for c in cases)
    matrix: dict[str, dict[str, int]] = defaultdict(dict)
    for (op, error_type), n in Counter((c.attribution.operation, c.attribution.error_type) for c in cases).items():
        matrix[op][error_type] = n
    return {"by_error_type": dict(types.most_common()), "by_operation": dict(ops.most_common()),
            "matrix": {op: {t: matrix[op][t] for t in ERROR_TYPES if t in matrix[op]} for op, _ in ops.most_common()}}


def _evidence(cases: list[DiagnosedCase], mechanisms: dict[str, Mechanism]) -> dict[str, Any]:
    gold = [c for c in cases if c.evidence and not c.pseudo_evidence and
            mechanisms[c.case_id].loss != "no_abstention"]
    reached = {"memory": sum(c.attribution.error_type != "ExtractionError" for c in gold),
               "question_time": sum(c.attribution.error_type in ("RetrievalError", "ResponseError") for c in gold),
               "context": sum(c.attribution.error_type == "ResponseError" for c in gold)}
    recall = [float(r) for c in cases if isinstance(r := c.extras.get("evidence_recall",
                                                                     c.attribution.details.get("evidence_recall")),
                                                    (int, float))]
    return {"gold": sum(bool(c.evidence) and not c.pseudo_evidence for c in cases),
            "found_by_words": sum(c.pseudo_evidence for c in cases), "none": sum(not c.evidence for c in cases),
            "funnel_cases": len(gold), "reached": reached,
            "retrieval_recall": round(sum(recall) / len(recall), 3) if recall else None}


def _representatives(members: list[DiagnosedCase]) -> list[DiagnosedCase]:
    ranked = sorted(members, key=lambda c: -c.attribution.confidence)
    chosen: list[DiagnosedCase] = []
    for c in ranked:  # one per conversation first, then the rest by confidence
        if len(chosen) < REPRESENTATIVES and all(c.graph != o.graph for o in chosen):
            chosen.append(c)
    chosen += [c for c in ranked if c not in chosen][:REPRESENTATIVES - len(chosen)]
    return chosen


def _case_entry(diagnosis: Diagnosis, c: DiagnosedCase) -> dict[str, Any]:
    a = c.attribution
    return {"case_id": a.case_id, "question": c.question, "expected": c.expected, "prediction": c.prediction,
            "date": c.date, "op_id": a.op_id, "confidence": a.confidence, "method": a.method,
            "reason": plain_reason(a, diagnosis.graph_of(c)), "link": case_link(a.case_id), "graph": c.graph}


def _groups(diagnosis: Diagnosis, mechanisms: dict[str, Mechanism]) -> list[dict[str, Any]]:
    members: dict[str, list[DiagnosedCase]] = defaultdict(list)
    for c in diagnosis.cases:
        members[mechanisms[c.case_id].key].append(c)
    n = len(diagnosis.cases)
    out = []
    for key, cases in sorted(members.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        mechanism = mechanisms[cases[0].case_id]
        G = diagnosis.graph_of(cases[0])
        prompt = instructions_of(G, mechanism.operation)
        out.append({"key": key, "operation": mechanism.operation, "error_type": mechanism.error_type,
                    "loss": mechanism.loss, "title": mechanism.title, "n": len(cases),
                    "share": round(len(cases) / n, 3) if n else 0.0, "cases": [c.case_id for c in cases],
                    "conversations": len({c.graph for c in cases}),
                    "representatives": [_case_entry(diagnosis, c) for c in _representatives(cases)],
                    "has_prompt": bool(prompt), "sentences": bearing_sentences(prompt, mechanism.loss),
                    "prompt_version": (G.graph.get("prompt_versions") or {}).get(mechanism.operation),
                    "advice": mechanism.advice(G), "paragraph": None})
    return out


def build_report(diagnosis: Diagnosis, *, title: str | None = None, overview: str | None = None,
                 writer: Any = None) -> dict[str, Any]:
    """The report's data (see the module docstring); ``writer`` (a `memopt.report.writer.GroupWriter`) adds a
    paragraph per group and a summary."""
    started = time.perf_counter()
    mechanisms = {c.case_id: mechanism_of(c.attribution, diagnosis.graph_of(c), question=c.question,
                                          evidence=c.evidence) for c in diagnosis.cases}
    cases = diagnosis.cases
    report: dict[str, Any] = {
        "schema": SCHEMA, "title": title or f"Why {diagnosis.pipeline or 'the memory system'} answered wrong",
        "source": diagnosis.source, "kind": diagnosis.kind, "pipeline": diagnosis.pipeline,
        "written": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "n": len(cases),
        "behind": diagnosis.behind, "flagged": len(diagnosis.flagged),
        "damaged": dict(diagnosis.damaged), "unplaced": list(diagnosis.unplaced),
        "simulated": any(bool(G.graph.get("simulated")) for G in diagnosis.graphs.values()),
        "overview": system_overview(diagnosis, overview), "counts": _counts(cases), "rounds": diagnosis.rounds,
        "evidence": _evidence(cases, mechanisms), "groups": _groups(diagnosis, mechanisms), "summary": None,
        "writer": None}
    cost = {"attributions": len(cases) + diagnosis.behind,
            "judge_calls": sum(c.attribution.judge_calls for c in cases) + int(diagnosis.cost.get("behind_calls", 0)),
            "attribution_seconds": round(sum(c.attribution.seconds for c in cases), 3),
            "methods": dict(Counter(c.attribution.method or "?" for c in cases)), **diagnosis.cost}
    if writer is not None:
        writer.write(report)
        cost |= {"writer_lm_calls": writer.calls, "writer_seconds": round(writer.seconds, 3)}
        report["writer"] = writer.spec
    cost["report_seconds"] = round(time.perf_counter() - started, 3)
    report["cost"] = cost
    return report

"""Run a memory system over conversations and score its answers: the ``results.json`` of a run.

`evaluate` ingests each conversation (in parallel over conversations, ``workers`` threads), asks
every selected question, scores the answer (LoCoMo F1, exact match, judge verdict) and returns a
`RunResult`. An LM failure on one case marks that case with ``error`` and the run goes on; a
failure while ingesting marks every case of that conversation. ``metrics["errored"]`` counts the
cases with an error, ``metrics["malformed"]`` those whose error is an LM reply no adapter could
parse (DSPy's ``AdapterParseError``).
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import dspy

from memopt.data.model import Case, Conversation
from memopt.errors import DataError
from memopt.files import read_json, write_json
from memopt.judge import Judge
from memopt.metrics import CaseScore, exact_match, locomo_f1, summarize
from memopt.system import MemorySystem

__all__ = ["CaseResult", "RunResult", "evaluate", "select_cases", "SCHEMA_VERSION", "ERROR_LIMIT", "MALFORMED"]

SCHEMA_VERSION = 1
ERROR_LIMIT = 0.2
MALFORMED = "AdapterParseError"


@dataclass
class CaseResult:
    """One answered (or failed) question."""

    case_id: str
    sample_id: str
    category: int
    question: str
    gold: str
    prediction: str
    f1: float
    em: float
    correct: bool | None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON form (``error`` only when the case failed)."""
        out = asdict(self)
        if out["error"] is None:
            del out["error"]
        return out


@dataclass
class RunResult:
    """Everything a run produced: configuration, metrics, and every case."""

    pipeline: str
    lm: str
    simulated: bool
    data: str
    prompts: dict[str, str]
    knobs: dict[str, int]
    metrics: dict[str, Any]
    cases: list[CaseResult]
    usage: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    judge_lm: str | None = None
    schema_version: int = SCHEMA_VERSION
    run_id: str | None = None

    @property
    def error_rate(self) -> float:
        """Share of cases that errored."""
        return self.metrics.get("errored", 0) / max(1, len(self.cases))

    def to_dict(self) -> dict[str, Any]:
        """The ``results.json`` document."""
        return {
            "schema_version": self.schema_version, "run_id": self.run_id, "pipeline": self.pipeline, "lm": self.lm,
            "simulated": self.simulated, "judge_lm": self.judge_lm, "data": self.data, "prompts": self.prompts,
            "knobs": self.knobs, "metrics": self.metrics, "usage": self.usage, "seconds": round(self.seconds, 3),
            "cases": [c.to_dict() for c in self.cases],
        }

    @classmethod
    def from_dict(cls, raw: dict[str, Any], *, source: str = "<results>") -> RunResult:
        """Read a ``results.json`` document back."""
        try:
            cases = [CaseResult(**{**{"error": None}, **c}) for c in raw["cases"]]
            run_id = raw.get("run_id")
            return cls(raw["pipeline"], raw["lm"], bool(raw["simulated"]), raw["data"], dict(raw["prompts"]),
                       dict(raw.get("knobs", {})), dict(raw["metrics"]), cases, dict(raw.get("usage", {})),
                       float(raw.get("seconds", 0.0)), raw.get("judge_lm"), int(raw.get("schema_version", 1)),
                       str(run_id) if run_id is not None else None)
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise DataError(f"{source}: not a memopt results file ({type(e).__name__}: {e}).") from None

    def save(self, path: str | Path) -> Path:
        """Write ``results.json`` atomically."""
        return write_json(path, self.to_dict())

    @classmethod
    def load(cls, path: str | Path) -> RunResult:
        """Read a ``results.json`` file."""
        raw = read_json(path, missing=f"no such results file (write one with `memopt run --out {path}`).")
        return cls.from_dict(raw, source=str(path))


def select_cases(conversations: list[Conversation], limit: int | None) -> list[tuple[Conversation, list[Case]]]:
    """The conversations to run and their cases, keeping at most ``limit`` cases in data order."""
    plan = []
    left = limit if limit is not None else None
    for conv in conversations:
        cases = list(conv.cases) if left is None else list(conv.cases)[:left]
        if left is not None:
            left -= len(cases)
        if cases:
            plan.append((conv, cases))
        if left is not None and left <= 0:
            break
    return plan


def _error(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}".strip()[:500]


def _score(system: MemorySystem, case: Case, judge: Judge | None) -> CaseResult:
    try:
        prediction = str(system.answer_case(case).answer)
    except Exception as e:  # one failing case never stops the run
        return CaseResult(case.case_id, case.sample_id, case.category, case.question, case.gold, "", 0.0, 0.0,
                          None, _error(e))
    correct = None
    error = None
    if judge is not None:
        try:
            correct = judge.correct(case.question, case.gold, prediction)
        except Exception as e:
            error = f"judge: {_error(e)}"
    return CaseResult(case.case_id, case.sample_id, case.category, case.question, case.gold, prediction,
                      round(locomo_f1(prediction, case.gold, case.category), 4),
                      exact_match(prediction, case.gold), correct, error)


def _run_conversation(system: MemorySystem, conv: Conversation, cases: list[Case], judge: Judge | None,
                      lm: dspy.LM, tick: Callable[[CaseResult], None]) -> list[CaseResult]:
    with dspy.context(lm=lm):
        try:
            system.ingest(conv)
        except Exception as e:  # the conversation's memory could not be built
            failed = [CaseResult(c.case_id, c.sample_id, c.category, c.question, c.gold, "", 0.0, 0.0, None,
                                 f"ingest: {_error(e)}") for c in cases]
            for r in failed:
                tick(r)
            return failed
        results = []
        for case in cases:
            result = _score(system, case, judge)
            tick(result)
            results.append(result)
        return results


def evaluate(system: MemorySystem, conversations: list[Conversation], *, lm: dspy.LM, judge: Judge | None = None,
             limit: int | None = None, workers: int = 1,
             on_case: Callable[[CaseResult], None] | None = None) -> tuple[list[CaseResult], dict[str, Any], float]:
    """Answer and score the selected cases; returns (case results in data order, metrics, seconds)."""
    plan = select_cases(conversations, limit)
    lock = threading.Lock()

    def tick(result: CaseResult) -> None:
        if on_case is not None:
            with lock:
                on_case(result)

    started = time.perf_counter()
    if workers <= 1 or len(plan) <= 1:
        chunks = [_run_conversation(system, conv, cases, judge, lm, tick) for conv, cases in plan]
    else:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            futures = [pool.submit(contextvars.copy_context().run, _run_conversation, system, conv, cases, judge,
                                   lm, tick) for conv, cases in plan]
            chunks = [f.result() for f in futures]
    results = [r for chunk in chunks for r in chunk]
    metrics = summarize([CaseScore(r.case_id, r.category, r.f1, r.em, r.correct) for r in results])
    metrics["errored"] = sum(r.error is not None for r in results)
    metrics["malformed"] = sum(MALFORMED in (r.error or "") for r in results)
    return results, metrics, time.perf_counter() - started


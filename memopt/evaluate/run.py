"""Run a memory system over conversations and score its answers: the ``results.json`` of a run.

`evaluate` ingests each conversation, asks every selected question, scores the answer (LoCoMo F1,
exact match, judge verdict) and returns the case results and their metrics. With ``workers`` > 1
the work runs on that many threads: conversations in parallel, and within a conversation its
ingestion in order (memory systems need it), then its questions in parallel, each as soon as its
conversation is ingested. Results come back in data order and are the same as a serial run's for a
deterministic LM. An LM failure on one case marks that case with ``error`` and the run goes on (a
failed judge call too: F1 is kept, the verdict is missing); a failure while ingesting marks every
case of that conversation. ``metrics["errored"]`` counts the cases with an error,
``metrics["malformed"]`` those whose error is an LM reply no adapter could parse (DSPy's
``AdapterParseError``); judge accuracy counts errored cases as failures (`case_metrics`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import dspy

from memopt.core.errors import DataError
from memopt.core.files import read_json, write_json
from memopt.core.parallel import allow_ahead, submit_in_context, worker_pool
from memopt.data.model import Case, Conversation
from memopt.judge.judges import Judge
from memopt.judge.metrics import CaseScore, exact_match, locomo_f1, summarize
from memopt.systems.base import MemorySystem

__all__ = ["CaseResult", "RunResult", "evaluate", "case_metrics", "select_cases", "SCHEMA_VERSION", "ERROR_LIMIT",
           "MALFORMED"]

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
        version = raw.get("schema_version", 1) if isinstance(raw, dict) else 1
        if isinstance(version, int) and version > SCHEMA_VERSION:
            raise DataError(f"{source}: results schema_version {version}; this memopt reads version {SCHEMA_VERSION} "
                            "(the file is of a newer memopt: upgrade memopt to read it).")
        try:
            cases = [CaseResult(**{**{"error": None}, **c}) for c in raw["cases"]]
            for i, case in enumerate(cases):
                _check_case(case, f"cases[{i}]")
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


def _check_case(case: CaseResult, where: str) -> None:
    """Raise `TypeError` naming ``where`` and the field when a read-back case has a field of the wrong type."""
    for name, types in (("case_id", str), ("sample_id", str), ("question", str), ("gold", str), ("prediction", str),
                        ("category", int), ("f1", (int, float)), ("em", (int, float))):
        value = getattr(case, name)
        if not isinstance(value, types) or isinstance(value, bool):
            raise TypeError(f"{where}.{name} is {value!r:.60}")
    if case.correct is not None and not isinstance(case.correct, bool):
        raise TypeError(f"{where}.correct is {case.correct!r:.60} (expected true, false or null)")
    if case.error is not None and not isinstance(case.error, str):
        raise TypeError(f"{where}.error is {case.error!r:.60}")


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


def _ingest_error(system: MemorySystem, conv: Conversation, lm: dspy.LM) -> str | None:
    """Ingest one conversation; the error text when its memory could not be built."""
    with dspy.context(lm=lm):
        try:
            system.ingest(conv)
        except Exception as e:
            return f"ingest: {_error(e)}"
    return None


def _failed(case: Case, error: str) -> CaseResult:
    return CaseResult(case.case_id, case.sample_id, case.category, case.question, case.gold, "", 0.0, 0.0, None,
                      error)


def _answer(system: MemorySystem, case: Case, judge: Judge | None, lm: dspy.LM,
            tick: Callable[[CaseResult], None]) -> CaseResult:
    with dspy.context(lm=lm):
        result = _score(system, case, judge)
    tick(result)
    return result


def _run_conversation(system: MemorySystem, conv: Conversation, cases: list[Case], judge: Judge | None,
                      lm: dspy.LM, tick: Callable[[CaseResult], None]) -> list[CaseResult]:
    error = _ingest_error(system, conv, lm)
    if error is not None:
        failed = [_failed(c, error) for c in cases]
        for r in failed:
            tick(r)
        return failed
    return [_answer(system, case, judge, lm, tick) for case in cases]


def _run_concurrently(system: MemorySystem, plan: list[tuple[Conversation, list[Case]]], judge: Judge | None,
                      lm: dspy.LM, workers: int, tick: Callable[[CaseResult], None]) -> list[CaseResult]:
    """Ingest conversations in parallel; submit a conversation's questions as soon as it is ingested."""
    done: dict[str, CaseResult] = {}
    answers: dict[str, Future[CaseResult]] = {}
    with worker_pool(workers) as pool, allow_ahead(workers):
        ingests = {submit_in_context(pool, _ingest_error, system, conv, lm): cases for conv, cases in plan}
        for finished in as_completed(ingests):
            error = finished.result()
            for case in ingests[finished]:
                if error is not None:
                    done[case.case_id] = _failed(case, error)
                    tick(done[case.case_id])
                else:
                    answers[case.case_id] = submit_in_context(pool, _answer, system, case, judge, lm, tick)
    done.update({case_id: future.result() for case_id, future in answers.items()})
    return [done[case.case_id] for _, cases in plan for case in cases]


def case_metrics(results: list[CaseResult], *, judged: bool) -> dict[str, Any]:
    """F1 / EM / judge accuracy overall and per category, errored and malformed counts.

    When ``judged``, a case that errored (no answer, or no verdict) counts as a failure in judge accuracy.
    """
    metrics = summarize([CaseScore(r.case_id, r.category, r.f1, r.em,
                                   (False if r.error is not None else r.correct) if judged else r.correct)
                         for r in results])
    metrics["errored"] = sum(r.error is not None for r in results)
    metrics["malformed"] = sum(MALFORMED in (r.error or "") for r in results)
    return metrics


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
    if workers <= 1:
        results = [r for conv, cases in plan for r in _run_conversation(system, conv, cases, judge, lm, tick)]
    else:
        results = _run_concurrently(system, plan, judge, lm, workers, tick)
    return results, case_metrics(results, judged=judge is not None), time.perf_counter() - started

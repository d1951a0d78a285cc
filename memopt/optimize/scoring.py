"""Scoring systems on splits while keeping count of the LM calls an optimization spends.

`Scorer` owns the task, judge and reflection LMs of an optimization, each with its own usage meter,
so every call is counted against the budget; reporting (val and test scores with the judge, which
choose nothing) uses separate LM instances and is counted apart.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from memopt.data.model import Conversation
from memopt.evaluate import CaseResult, evaluate
from memopt.judge import LMJudge
from memopt.lm.config import ModelUsage, UsageMeter, make_lm
from memopt.system import MemorySystem

__all__ = ["Scorer", "Scored", "BudgetExhausted"]


class BudgetExhausted(Exception):
    """The optimization spent its LM-call budget."""


@dataclass
class Scored:
    """A system's results on a split."""

    results: list[CaseResult]
    metrics: dict[str, Any]
    graphs: dict[str, Any]


class Scorer:
    """Evaluates systems and counts LM calls (task + judge + reflection) against ``budget``."""

    def __init__(self, task: str, judge: str, reflection: str, *, budget: int, seed: int = 0) -> None:
        self.meters = {role: UsageMeter() for role in ("task", "judge", "reflection", "report")}
        self.task_lm = make_lm(task, seed=seed, callbacks=[self.meters["task"]])
        self.judge = LMJudge(make_lm(judge, seed=seed, callbacks=[self.meters["judge"]]))
        self.reflection_lm = make_lm(reflection, seed=seed, callbacks=[self.meters["reflection"]])
        self.report_lm = make_lm(task, seed=seed, callbacks=[self.meters["report"]])
        self.report_judge = LMJudge(make_lm(judge, seed=seed, callbacks=[self.meters["report"]]))
        self.budget = budget
        self.spent_before = 0
        self.tokens_before = 0

    def usage(self) -> ModelUsage:
        """LM usage of the optimization itself (not the reports), including earlier runs before a resume."""
        total = sum((self.meters[r].total() for r in ("task", "judge", "reflection")), ModelUsage())
        return ModelUsage(total.calls + self.spent_before, total.errors, total.input_tokens + self.tokens_before,
                          total.output_tokens)

    def remaining(self) -> int:
        """LM calls left in the budget."""
        return self.budget - self.usage().calls

    def check(self) -> None:
        """Raise `BudgetExhausted` when nothing is left."""
        if self.remaining() <= 0:
            raise BudgetExhausted(f"spent {self.usage().calls} of {self.budget} LM calls")

    def score(self, system: MemorySystem, conversations: list[Conversation], *, judged: bool,
              traced: bool = False) -> Scored:
        """Answer and score a split with the optimization's LMs (counted)."""
        with self._tracing(system, traced) as tracer:
            results, metrics, _ = evaluate(system, conversations, lm=self.task_lm,
                                           judge=self.judge if judged else None)
        graphs = {}
        if tracer is not None:
            tracer.record_cases(c for conv in conversations for c in conv.cases)
            graphs = tracer.graphs
        return Scored(results, metrics, graphs)

    def report(self, system: MemorySystem, conversations: list[Conversation]) -> dict[str, Any]:
        """Metrics of a split for the record (F1 and judge accuracy; not counted in the budget)."""
        _, metrics, _ = evaluate(system, conversations, lm=self.report_lm, judge=self.report_judge)
        return metrics

    @contextmanager
    def _tracing(self, system: MemorySystem, traced: bool) -> Iterator[Any]:
        if not traced:
            yield None
            return
        import dspy

        from memopt.trace import trace

        with dspy.context(lm=self.task_lm), trace(system) as tracer:
            yield tracer

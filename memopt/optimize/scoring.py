"""Scoring systems on splits while keeping count of every LM call an optimization spends.

`Scorer` owns the LMs of an optimization: task, judge and reflection, and the task and judge LMs
that report val and test scores (which choose nothing). Each has a usage meter, and **every** call
counts against the budget: ``budget.max_lm_calls`` covers task, judge, reflection and reporting
calls, replies served from the cache included (so a repeated run takes the same path), and
``budget.max_cost_usd`` (``--max-cost``) the dollars actually billed. `check` raises
`BudgetExhausted` once either is spent, keeping back as many calls as the last val/test report took
so that the round in flight can still be reported; it is called before each evaluation, proposal and
batch of trials, so a run may overshoot by the calls of the step in flight. The starting prompts are
always scored (round 0).

LM calls run concurrently up to each role's ``lm.concurrency`` (`memopt.lm.pool`), with a per-call
timeout and retries; an evaluation whose share of errored cases exceeds ``max_error_rate`` raises
`EvaluationFailed` (``check_errors``), except a trial's, which `errored` marks so it is never chosen.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from memopt.core.errors import ConfigError, EvaluationFailed
from memopt.data.model import Conversation
from memopt.evaluate.run import ERROR_LIMIT, CaseResult, case_metrics, evaluate
from memopt.judge.judges import LMJudge
from memopt.lm.build import make_lm
from memopt.lm.pool import LMSlots, role_concurrency, threads_for
from memopt.lm.usage import ModelUsage, UsageMeter
from memopt.systems.base import MemorySystem

__all__ = ["Scorer", "Scored", "LMSettings", "BudgetExhausted", "NullProgress", "METERS", "ROLE_OF"]

METERS = ("task", "judge", "reflection", "report_task", "report_judge")
ROLE_OF = {"task": "task", "judge": "judge", "reflection": "reflection", "report_task": "task",
           "report_judge": "judge"}


class BudgetExhausted(Exception):
    """The optimization spent its LM-call budget (or its cost limit)."""


@dataclass
class Scored:
    """A system's results on a split."""

    results: list[CaseResult]
    metrics: dict[str, Any]
    graphs: dict[str, Any]


@dataclass(frozen=True)
class LMSettings:
    """How an optimization calls its LMs (see `memopt.optimize.experiment.LMConfig`)."""

    concurrency: int | dict[str, int] | None = None
    timeout: float | None = 120.0
    num_retries: int = 3
    parse_retries: int = 2
    cache: bool = False
    engine: str = "litellm"


class NullProgress:
    """Progress that shows nothing (the default; `memopt.core.progress.RoundProgress` shows a live line)."""

    def phase(self, name: str, total: int) -> None:
        """Start a phase of ``total`` cases."""

    def grow(self, total: int) -> None:
        """Add ``total`` cases to the current phase."""

    def advance(self, n: int = 1) -> None:
        """Count ``n`` cases done."""


class Scorer:
    """Evaluates systems and counts every LM call (task, judge, reflection, reporting) against the budget."""

    def __init__(self, task: Any, judge: Any, reflection: Any, *, budget: int, seed: int = 0,
                 max_cost: float | None = None, lm: LMSettings | None = None,
                 max_error_rate: float = ERROR_LIMIT) -> None:
        settings = lm or LMSettings()
        self.concurrency = role_concurrency(settings.concurrency, {"task": task, "judge": judge,
                                                                   "reflection": reflection})
        self.slots = {role: LMSlots(n, f"lm.concurrency.{role}") for role, n in self.concurrency.items()}
        self.meters = {meter: UsageMeter() for meter in METERS}

        def build(spec: Any, role: str, meter: str) -> Any:
            try:
                return make_lm(spec, seed=seed, callbacks=[self.slots[role], self.meters[meter]],
                               timeout=settings.timeout, num_retries=settings.num_retries, cache=settings.cache,
                               parse_retries=settings.parse_retries, engine=settings.engine)
            except ConfigError as e:
                raise ConfigError(f"lm.{role}: {e}") from None

        self.task_lm = build(task, "task", "task")
        self.judge = LMJudge(build(judge, "judge", "judge"))
        self.reflection_lm = build(reflection, "reflection", "reflection")
        self.report_lm = build(task, "task", "report_task")
        self.report_judge = LMJudge(build(judge, "judge", "report_judge"))
        self.workers = threads_for(self.concurrency["task"], self.concurrency["judge"])
        self.budget = budget
        self.max_cost = max_cost
        self.max_error_rate = max_error_rate
        self.before: dict[str, ModelUsage] = {m: ModelUsage() for m in METERS}
        self.progress: Any = NullProgress()
        self.label = ""
        self.last_report_calls = 0
        self.last_report: dict[str, list[CaseResult]] = {}  # the last report's case results, per split

    # --- usage and budget ---------------------------------------------------------------------
    def usage_by_meter(self) -> dict[str, ModelUsage]:
        """Usage per meter (task, judge, reflection, and the task and judge LMs of reporting), including earlier
        runs before a resume."""
        return {m: self.meters[m].total() + self.before[m] for m in METERS}

    def usage(self) -> ModelUsage:
        """All LM usage of the optimization (reporting included), including earlier runs before a resume."""
        return sum(self.usage_by_meter().values(), ModelUsage())

    def resume_from(self, usage: dict[str, dict[str, Any]], calls: int, tokens: int) -> None:
        """Start counting from an earlier run's usage per meter (or, for older checkpoints, its totals)."""
        if usage:
            self.before = {m: ModelUsage(**usage[m]) if m in usage else ModelUsage() for m in METERS}
        else:
            self.before = {**{m: ModelUsage() for m in METERS}, "task": ModelUsage(calls=calls, input_tokens=tokens)}

    def add_usage(self, by_meter: dict[str, ModelUsage]) -> None:
        """Count usage spent elsewhere (by `memopt worker` processes) as this optimization's, per meter."""
        for meter, usage in by_meter.items():
            self.before[meter] = self.before[meter] + usage

    def remaining(self) -> int:
        """LM calls left in the budget."""
        return self.budget - self.usage().calls

    def check(self) -> None:
        """Raise `BudgetExhausted` when the call budget (less what the round's report will take, as much as the
        last report took) or the cost limit is spent."""
        usage = self.usage()
        if usage.calls + self.last_report_calls >= self.budget:
            reserved = f", keeping {self.last_report_calls} for the round's report" if self.last_report_calls else ""
            raise BudgetExhausted(f"spent {usage.calls} of {self.budget} LM calls{reserved}")
        if self.max_cost is not None and usage.cost >= self.max_cost:
            raise BudgetExhausted(f"spent ${usage.cost:.4f} of the --max-cost ${self.max_cost:g}")

    # --- evaluation -----------------------------------------------------------------------------
    def errored(self, metrics: dict[str, Any]) -> bool:
        """Whether more than ``max_error_rate`` of an evaluation's cases errored."""
        return metrics.get("errored", 0) > self.max_error_rate * max(1, metrics.get("n", 0))

    def _fail_if_errored(self, what: str, results: list[CaseResult], metrics: dict[str, Any]) -> None:
        if not self.errored(metrics):
            return
        first = next(r for r in results if r.error)
        raise EvaluationFailed(
            f"{self.label + ': ' if self.label else ''}{what}: {metrics['errored']} of {metrics['n']} cases errored "
            f"(more than {self.max_error_rate:.0%}); first, {first.case_id}: {first.error[:300]}. Check that the LM "
            "is reachable and answers in time (lm.timeout, lm.num_retries), or lower lm.concurrency.")

    def score(self, system: MemorySystem, conversations: list[Conversation], *, judged: bool, traced: bool = False,
              phase: str | None = None, check_errors: bool = False) -> Scored:
        """Answer and score a split with the optimization's LMs (counted); ``phase`` names it in the progress line."""
        total = sum(len(c.cases) for c in conversations)
        if phase is not None:
            self.progress.phase(f"{self.label} · {phase}" if self.label else phase, total)
        else:
            self.progress.grow(total)
        with self._tracing(system, traced) as tracer:
            results, metrics, _ = evaluate(system, conversations, lm=self.task_lm,
                                           judge=self.judge if judged else None, workers=self.workers,
                                           on_case=lambda _: self.progress.advance())
        if check_errors:
            self._fail_if_errored(phase or "evaluation", results, metrics)
        graphs = {}
        if tracer is not None:
            tracer.record_cases(c for conv in conversations for c in conv.cases)
            # In the order of the conversations, not of the first traced event (which concurrency reorders).
            order = {conv.sample_id: i for i, conv in enumerate(conversations)}
            graphs = dict(sorted(tracer.graphs.items(), key=lambda item: (order.get(item[0], len(order)), item[0])))
        return Scored(results, metrics, graphs)

    def report(self, system: MemorySystem, splits: dict[str, list[Conversation]]) -> dict[str, dict[str, Any]]:
        """Metrics of each split for the record (F1 and judge accuracy), all splits evaluated together (counted);
        the case results stay in ``last_report`` until the next report.

        Raises `EvaluationFailed` when a split errored beyond ``max_error_rate``.
        """
        conversations = [c for convs in splits.values() for c in convs]
        before = self.usage().calls
        self.progress.phase(f"{self.label} · report {' + '.join(splits)}".lstrip(" ·"),
                            sum(len(c.cases) for c in conversations))
        results, _, _ = evaluate(system, conversations, lm=self.report_lm, judge=self.report_judge,
                                 workers=self.workers, on_case=lambda _: self.progress.advance())
        self.last_report_calls = self.usage().calls - before
        out = {}
        self.last_report = {}
        for name, convs in splits.items():
            ids = {c.sample_id for c in convs}
            mine = self.last_report[name] = [r for r in results if r.sample_id in ids]
            out[name] = case_metrics(mine, judged=True)
            self._fail_if_errored(f"{name} report", mine, out[name])
        return out

    @contextmanager
    def _tracing(self, system: MemorySystem, traced: bool) -> Iterator[Any]:
        if not traced:
            yield None
            return
        import dspy

        from memopt.trace import trace

        with dspy.context(lm=self.task_lm), trace(system) as tracer:
            yield tracer

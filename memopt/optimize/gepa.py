"""The ``gepa`` optimizer: `dspy.GEPA` on the memory system, with attribution as per-predictor feedback.

The metric scores each answer by LoCoMo F1. When GEPA asks for feedback on one predictor
(``pred_name``), the failed case is run again traced with that candidate's instructions (carried
by the prediction, see `MemorySystem.forward`), attributed with memopt's method, and only the
predictor the failure is blamed on gets the specific feedback (`memopt.feedback.build`); the others are
told the failure lies elsewhere. With ``feedback="outcome"`` (the ``gepa_outcome`` peer) every
predictor gets the same outcome text instead — question, gold answer, prediction and F1, what a
GEPA user writes — and no case is run again. Proposals go through the same reflection signature as the
``memtrace`` optimizer (`FeedbackProposer`), so both optimizers read feedback the same way.
GEPA runs as one optimization: memopt logs it as a single round.
"""

from __future__ import annotations

import contextlib
import io
import logging
from dataclasses import dataclass, field
from typing import Any

from memopt.attribution.case import FailedCase
from memopt.attribution.evidence import seed_evidence
from memopt.attribution.methods import attribute
from memopt.data.model import Case, Conversation
from memopt.feedback.kinds import FeedbackRequest, get_kind
from memopt.judge.metrics import locomo_f1
from memopt.optimize.propose import Reflection, reflect
from memopt.optimize.reflective import RoundOutcome
from memopt.optimize.scoring import Scored, Scorer
from memopt.optimize.select import Choice
from memopt.systems.base import MemorySystem
from memopt.systems.prompts import prompt_hash

__all__ = ["AttributionFeedbackMetric", "FeedbackProposer", "GepaOptimizer", "examples_of", "run_gepa"]


def examples_of(conversations: list[Conversation]) -> list[Any]:
    """One `dspy.Example` per case: inputs ``conversation`` and ``question``; labels ``case``."""
    import dspy

    return [dspy.Example(conversation=conv, question=case.question, case=case).with_inputs("conversation", "question")
            for conv in conversations for case in conv.cases]


@dataclass
class AttributionFeedbackMetric:
    """GEPA metric: F1 as score; attribution-based feedback for the blamed predictor only."""

    system: MemorySystem
    scorer: Scorer
    method: str = "memtrace"
    feedback: str = "attribution"
    flagged: frozenset[str] = frozenset()  # cases a reviewer flagged as no memory failure: no attribution feedback
    _cache: dict[tuple[str, str], Any] = field(default_factory=dict)

    def __call__(self, gold: Any, pred: Any, trace: Any = None, pred_name: str | None = None,
                 pred_trace: Any = None) -> Any:
        """Score one prediction; with ``pred_name``, also the feedback for that predictor."""
        import dspy

        case: Case = gold.case
        score = locomo_f1(str(pred.answer), case.gold, case.category)
        if pred_name is None:
            return score
        kind = get_kind(self.feedback)
        if case.case_id in self.flagged:
            return dspy.Prediction(score=score, feedback="A reviewer flagged this case as no memory failure (a wrong "
                                                         "expected answer or judge verdict): no feedback from it.")
        if not kind.uses_attribution:
            return dspy.Prediction(score=score, feedback=(f"Question: {case.question}\nGold answer: {case.gold}\n"
                                                          f"Prediction: {pred.answer}\nScore: F1 {score:.2f}"))
        try:
            blamed = self._blame(gold.conversation, case, dict(getattr(pred, "instructions", {}) or {}))
        except Exception as e:  # an LM failure fails this case's feedback, never the optimization
            return dspy.Prediction(score=score, feedback=f"No feedback for this case: an LM call failed "
                                                         f"({type(e).__name__}).")
        if blamed is None:
            return dspy.Prediction(score=score, feedback="The answer was judged correct.")
        failed, attribution = blamed
        if pred_name not in self.system.prompt_ops(attribution.operation):
            return dspy.Prediction(score=score, feedback=(
                f"This failure ({attribution.error_type}) was blamed on the {attribution.operation} operation, "
                f"not on {pred_name}; keep this instruction unless other feedback says otherwise."))
        feedback = kind(FeedbackRequest([(failed, attribution)], {attribution.operation: (pred_name,)}, [], {}))
        return dspy.Prediction(score=score, feedback=feedback[pred_name].text())

    def _blame(self, conversation: Conversation, case: Case, instructions: dict[str, str]) -> Any:
        key = (prompt_hash(repr(sorted(instructions.items()))), case.case_id)
        if key not in self._cache:
            self._cache[key] = self._attribute(conversation, case, instructions)
        return self._cache[key]

    def _attribute(self, conversation: Conversation, case: Case, instructions: dict[str, str]) -> Any:
        import dspy

        from memopt.trace import trace

        system = self.system.with_instructions(instructions) if instructions else self.system
        if self.scorer.remaining() <= self.scorer.last_report_calls:
            return None
        with dspy.context(lm=self.scorer.task_lm), trace(system) as tracer:
            system.ingest(conversation)
            answer = str(system.answer_case(case).answer)
        if self.scorer.judge.correct(case.question, case.gold, answer):
            return None
        G = tracer.graph
        evidence, pseudo = seed_evidence(G, case.question, case.gold, case.evidence)
        failed = FailedCase(G, case.case_id, case.question, case.gold, evidence, answer, case.category, pseudo)
        return failed, attribute(failed, self.scorer.judge, self.method)


@dataclass
class FeedbackProposer:
    """GEPA instruction proposer: memopt's reflection signature over the collected feedback."""

    system: MemorySystem
    scorer: Scorer
    guard: Any = None
    rationales: dict[tuple[str, str], str] = field(default_factory=dict)
    rejected: list[str] = field(default_factory=list)
    reflections: list[Reflection] = field(default_factory=list)  # every call of the reflection LM, in order

    def __call__(self, candidate: dict[str, str], reflective_dataset: dict[str, list[dict[str, Any]]],
                 components_to_update: list[str]) -> dict[str, str]:
        """New instructions for the components GEPA chose to update (a proposal the prompt check blocks is
        dropped: the component keeps its instruction)."""
        out = {}
        for name in components_to_update:
            records = reflective_dataset.get(name) or []
            feedback = "\n\n".join(str(r.get("Feedback", "")) for r in records) or "No feedback."
            spec = self.system.op_spec(name)
            reflection = reflect(self.scorer.reflection_lm, op=name, operation=f"{self.system.name}.{name}: "
                                 f"{spec.description}", current=candidate[name], feedback=feedback, k=1)
            self.reflections.append(reflection)
            proposals = reflection.proposals
            blocked = self.guard.blocks(name, proposals[0].text, feedback) if proposals and self.guard else []
            self.rejected += [f"{name}: {issue.kind}: {issue.message}" for issue in blocked]
            if proposals and not blocked:
                out[name] = proposals[0].text
                self.rationales[(name, proposals[0].text)] = proposals[0].rationale
            else:
                out[name] = candidate[name]
        return out


def run_gepa(system: MemorySystem, scorer: Scorer, *, trainset: list[Conversation], valset: list[Conversation],
             method: str = "memtrace", seed: int = 0, calls_per_case: float = 2.0, feedback: str = "attribution",
             proposer: FeedbackProposer | None = None, flagged: frozenset[str] = frozenset()) -> MemorySystem:
    """Optimize with `dspy.GEPA` within the scorer's remaining LM-call budget; returns the best system.

    GEPA stops when the budget is spent (a stop callback) or after about ``remaining / calls_per_case``
    metric calls; every predictor is offered for update at each step (ingestion is cached, so a
    minibatch may hold no trace of an ingest op).
    """
    import dspy

    train, val = examples_of(trainset), examples_of(valset)
    left = scorer.remaining() - scorer.last_report_calls  # keep what the round's val/test report will take
    metric_calls = max(len(val) + 1, int(left / max(calls_per_case, 1.0)))
    optimizer = dspy.GEPA(metric=AttributionFeedbackMetric(system, scorer, method, feedback, flagged),
                          instruction_proposer=proposer or FeedbackProposer(system, scorer),
                          max_metric_calls=metric_calls,
                          reflection_minibatch_size=3, candidate_selection_strategy="pareto", use_merge=False,
                          component_selector="all", num_threads=scorer.workers, seed=seed, track_stats=False,
                          gepa_kwargs={"stop_callbacks": [lambda _: scorer.remaining() <= scorer.last_report_calls]})
    quiet = [logging.getLogger(name) for name in ("dspy.teleprompt.gepa", "gepa", "dspy.evaluate")]
    levels = [log.level for log in quiet]
    for log in quiet:
        log.setLevel(logging.ERROR)
    try:  # GEPA and DSPy draw progress bars on stdout and stderr; memopt reports per round instead
        with dspy.context(lm=scorer.task_lm), contextlib.redirect_stderr(io.StringIO()), \
                contextlib.redirect_stdout(io.StringIO()):
            return optimizer.compile(system, trainset=train, valset=val)
    finally:
        for log, level in zip(quiet, levels, strict=True):
            log.setLevel(level)


@dataclass
class GepaOptimizer:
    """`dspy.GEPA` as one memopt round (same ``step`` shape as `ReflectiveOptimizer`)."""

    scorer: Scorer
    method: str = "memtrace"
    seed: int = 0
    feedback: str = "attribution"
    guard: Any = None
    flagged: frozenset[str] = frozenset()  # cases labelled as no memory failure (`memopt.attribution.labels`)

    def step(self, system: MemorySystem, round_index: int, *, trainset: list[Conversation],
             valset: list[Conversation], current_val: float) -> RoundOutcome:
        """Run GEPA within the remaining budget; keep its best program if it beats ``current_val``."""
        before = self.scorer.usage().calls
        start = self.scorer.score(system, valset, judged=False, phase="val (start)", check_errors=True)
        per_case = (self.scorer.usage().calls - before) / max(1, len(start.results))
        proposer = FeedbackProposer(system, self.scorer, self.guard)
        best = run_gepa(system, self.scorer, trainset=trainset, valset=valset, method=self.method,
                        seed=self.seed + round_index, calls_per_case=per_case, feedback=self.feedback,
                        proposer=proposer, flagged=self.flagged)
        current = system.instructions()
        changed = {op: text for op, text in best.instructions().items() if text != current[op]}
        val_f1 = float(start.metrics["f1"])
        if changed:
            scored = self.scorer.score(system.with_instructions(changed), valset, judged=False,
                                       phase="val (GEPA's best)")
            val_f1 = -1.0 if self.scorer.errored(scored.metrics) else float(scored.metrics["f1"])
        choice = Choice(changed, dict(system.knobs), val_f1, trials=1)
        rationales = {op: proposer.rationales.get((op, text), "rewritten by GEPA") for op, text in changed.items()}
        return RoundOutcome(Scored([], {}, {}), [], {}, {op: [text] for op, text in changed.items()}, choice,
                            bool(changed) and val_f1 > current_val, rationales=rationales, rejected=proposer.rejected,
                            reflections=proposer.reflections)

    def describe(self) -> dict[str, Any]:
        """The optimizer's configuration, for logging."""
        return {"optimizer": "gepa", "feedback": self.feedback, "attribution": self.method}

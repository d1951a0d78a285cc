"""The ``memtrace`` optimizer and its feedback controls: reflective prompt rewriting, round by round.

Each round of `ReflectiveOptimizer.step` reads as: evaluate the current system on the train split
(traced) → attribute its failures → build feedback per blamed operation → ask the reflection LM for
``candidates`` revised instructions for the most blamed LLM ops (only those) → select among
candidates and knobs with Optuna on the val split → keep the best if it beats the current val F1.

``feedback`` chooses what the reflection LM reads (`memopt.feedback`) and which ops are rewritten:

- ``attribution`` (memopt's), ``misleading`` and ``empty`` rewrite memopt's blamed ops (the
  ``ops_per_round`` most blamed), so the comparison between them isolates the feedback *text*;
- ``outcome`` and ``score`` have no attribution: like a GEPA user, they take the LLM ops
  round-robin (``ops_per_round`` per round) and the train split is evaluated untraced.

The ``score_only`` optimizer name is this optimizer with ``feedback="score"``. The
``blame_response`` ablation is this optimizer with the ``blame_response`` attribution method
(every failure blamed on the answer op).

A blamed tool op has no prompt: its feedback goes to the LLM ops its `OpSpec` says steer it
(``retrieve`` → ``rewrite_query``); one only knobs steer (``truncate``, ``fuse``) is left to the
knob search (``search``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from memopt.attribution.case import FailedCase, failed_cases
from memopt.attribution.methods import attribute
from memopt.attribution.types import Attribution
from memopt.data.model import Conversation
from memopt.feedback import (
    Feedback,
    build_feedback,
    empty_feedback,
    misleading_feedback,
    outcome_feedback,
    score_feedback,
)
from memopt.optimize.propose import propose_instructions
from memopt.optimize.scoring import Scored, Scorer
from memopt.optimize.select import Choice, select
from memopt.system import MemorySystem

__all__ = ["ReflectiveOptimizer", "RoundOutcome", "BLAMED_OPS_FEEDBACK"]

BLAMED_OPS_FEEDBACK = ("attribution", "misleading", "empty")  # the rest go round-robin over the LLM ops


@dataclass
class RoundOutcome:
    """What one round found and decided."""

    train: Scored
    attributions: list[tuple[FailedCase, Attribution]]
    feedback: dict[str, Feedback]
    candidates: dict[str, list[str]]
    choice: Choice
    accepted: bool
    blamed_ops: dict[str, int] = field(default_factory=dict)
    failures_by_type: dict[str, int] = field(default_factory=dict)


@dataclass
class ReflectiveOptimizer:
    """Reflective rewriting of the blamed operations' prompts (see the module docstring)."""

    scorer: Scorer
    # proposals
    candidates: int = 4
    ops_per_round: int = 2
    feedback: Literal["attribution", "outcome", "score", "empty", "misleading"] = "attribution"
    # attribution
    attribution: str = "memtrace"
    verify: bool = False
    # selection
    trials: int = 8
    search: dict[str, list[int]] = field(default_factory=dict)
    min_gain: float = 0.0
    # reproducibility
    seed: int = 0

    def step(self, system: MemorySystem, round_index: int, *, trainset: list[Conversation],
             valset: list[Conversation], current_val: float) -> RoundOutcome:
        """One round: evaluate → attribute → feedback → propose → select (the caller logs and checkpoints)."""
        train = self._evaluate(system, trainset)
        blamed = self._attribute(train) if self.attributes else []
        feedback = self._feedback(system, train, blamed, round_index)
        candidates = self._propose(system, feedback)
        choice = self._select(system, candidates, valset, current_val, round_index)
        accepted = bool(choice.instructions or choice.knobs != system.knobs) and choice.val_f1 > current_val + \
            self.min_gain
        counts: dict[str, int] = {}
        types: dict[str, int] = {}
        for _, a in blamed:
            counts[a.operation] = counts.get(a.operation, 0) + 1
            types[a.error_type] = types.get(a.error_type, 0) + 1
        return RoundOutcome(train, blamed, feedback, candidates, choice, accepted, counts, types)

    # 1. evaluate
    def _evaluate(self, system: MemorySystem, trainset: list[Conversation]) -> Scored:
        self.scorer.check()
        return self.scorer.score(system, trainset, judged=True, traced=self.attributes)

    # 2. attribute
    def _attribute(self, train: Scored) -> list[tuple[FailedCase, Attribution]]:
        by_id = {r.case_id: r.to_dict() for r in train.results}
        out = []
        for G in train.graphs.values():
            for case in failed_cases(G, by_id):
                out.append((case, attribute(case, self.scorer.judge, self.attribution, verify=self.verify)))
        return out

    # 3. feedback
    @property
    def attributes(self) -> bool:
        """Whether this feedback kind needs the round's attributions (to choose the ops, or for its text)."""
        return self.feedback in BLAMED_OPS_FEEDBACK

    def _feedback(self, system: MemorySystem, train: Scored, blamed: list[tuple[FailedCase, Attribution]],
                  round_index: int) -> dict[str, Feedback]:
        versions = system.prompt_versions()
        if not self.attributes:
            ops = system.llm_operations()
            start = ((round_index - 1) * self.ops_per_round) % len(ops)
            chosen = [ops[(start + i) % len(ops)] for i in range(min(self.ops_per_round, len(ops)))]
            if self.feedback == "score":
                return {op: score_feedback(op, train.metrics, versions.get(op)) for op in chosen}
            return {op: outcome_feedback(op, train.results, versions.get(op), offset=round_index - 1)
                    for op in chosen}
        mapping = {spec.name: system.prompt_ops(spec.name) for spec in system.operations}
        if self.feedback == "misleading":
            found = misleading_feedback(blamed, mapping)
        else:
            found = build_feedback(blamed, mapping)
        if self.feedback == "empty":
            found = {op: empty_feedback(op, fb.prompt_version) for op, fb in found.items()}
        return dict(list(found.items())[: self.ops_per_round])

    # 4. propose
    def _propose(self, system: MemorySystem, feedback: dict[str, Feedback]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        current = system.instructions()
        for op, fb in feedback.items():
            self.scorer.check()
            spec = system.op_spec(op)
            out[op] = propose_instructions(self.scorer.reflection_lm,
                                           operation=f"{system.name}.{op}: {spec.description}",
                                           current=current[op], feedback=fb.text(), k=self.candidates)
        return out

    # 5. select
    def _select(self, system: MemorySystem, candidates: dict[str, list[str]], valset: list[Conversation],
                current_val: float, round_index: int) -> Choice:
        def score(instructions: dict[str, str], knobs: dict[str, int]) -> float:
            self.scorer.check()
            trial = system.with_instructions(instructions).with_knobs(**knobs)
            return float(self.scorer.score(trial, valset, judged=False).metrics["f1"])

        return select(candidates, self.search, dict(system.knobs), score, current_f1=current_val,
                      trials=self.trials, seed=self.seed + round_index)

    def describe(self) -> dict[str, Any]:
        """The optimizer's configuration, for logging."""
        return {"optimizer": "memtrace", "feedback": self.feedback,
                "ops_chosen_by": "attribution" if self.attributes else "round-robin",
                "attribution": self.attribution, "candidates": self.candidates, "ops_per_round": self.ops_per_round,
                "trials": self.trials, "search": self.search, "min_gain": self.min_gain, "verify": self.verify}

"""The state of an optimization, checkpointed after every round so a killed run can resume.

Plain, versioned data: `RoundRecord` (what one round measured and decided) and `OptimizeState`
(where the optimization stands: the current prompts and knobs, the best round so far, every record,
the data it runs on (its name and `memopt.optimize.loop.data_fingerprint`), the LM usage per meter
so far: task, judge, reflection, report, and the ``memory`` a resumed round needs to decide as the
uninterrupted one would: the optimizer's attribution cache and reusable training run, the scorer's
reserve for the round's report). Fields added later have defaults, so older checkpoints
still load; without a fingerprint, a resume compares the data name only.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["RoundRecord", "OptimizeState", "STATE_VERSION"]

STATE_VERSION = 1


@dataclass
class RoundRecord:
    """One round: scores, blame, the decision (and why), every candidate and trial, the prompt versions and knobs
    it ended with, the budget spent so far."""

    round: int
    train: dict[str, Any] | None
    val: dict[str, Any]
    test: dict[str, Any] | None
    blamed_ops: dict[str, int] = field(default_factory=dict)
    failures_by_type: dict[str, int] = field(default_factory=dict)
    accepted: bool = False
    changed_ops: list[str] = field(default_factory=list)
    candidates: int = 0
    trials: int = 0
    prompt_versions: dict[str, int] = field(default_factory=dict)
    feedback: dict[str, str] = field(default_factory=dict)
    lm_calls: int = 0
    tokens: int = 0
    seconds: float = 0.0
    usage: dict[str, dict[str, Any]] = field(default_factory=dict)
    trials_errored: int = 0
    attribution_errors: int = 0
    knobs: dict[str, Any] = field(default_factory=dict)
    decision: str = ""
    proposals: list[dict[str, Any]] = field(default_factory=list)
    trials_log: list[dict[str, Any]] = field(default_factory=list)
    commit_messages: dict[str, str] = field(default_factory=dict)
    attribution: dict[str, int] = field(default_factory=dict)  # failed, sampled, replayed, attributed,
    # judge_calls, masked
    inputs_digest: str = ""  # of the prompts, knobs and feedback the round saw (`stop_on_repeat` on --resume)
    warnings: list[str] = field(default_factory=list)  # what a person must know of this round (a judge that
    # failed its check under judge_check: warn)

    @property
    def errored(self) -> dict[str, int]:
        """Cases that errored in this round's train evaluation and val / test reports."""
        splits = {"train": self.train, "val": self.val, "test": self.test}
        return {name: int(m.get("errored", 0)) for name, m in splits.items() if m is not None}

    def summary(self) -> dict[str, Any]:
        """The round as `memopt optimize --out` reports it."""
        return {"round": self.round, "val_f1": self.val.get("f1"), "test_f1": (self.test or {}).get("f1"),
                "val_judge": self.val.get("judge"), "test_judge": (self.test or {}).get("judge"),
                "blamed_ops": self.blamed_ops, "accepted": self.accepted, "prompt_versions": self.prompt_versions,
                "errored": self.errored, "trials_errored": self.trials_errored,
                "attribution_errors": self.attribution_errors, "attribution": self.attribution,
                "lm_calls": self.lm_calls,
                "tokens": self.tokens, "seconds": round(self.seconds, 2), "knobs": self.knobs,
                "decision": self.decision, "commit_messages": self.commit_messages, "candidates": self.proposals,
                "trials": self.trials_log, "warnings": self.warnings}


@dataclass
class OptimizeState:
    """Where an optimization stands after its last completed round."""

    pipeline: str
    next_round: int
    instructions: dict[str, str]
    knobs: dict[str, int]
    current_val: float
    best_round: int = 0
    best_val: float = 0.0
    best_instructions: dict[str, str] = field(default_factory=dict)
    best_knobs: dict[str, int] = field(default_factory=dict)
    records: list[RoundRecord] = field(default_factory=list)
    lm_calls: int = 0
    tokens: int = 0
    run_id: str | None = None
    data: str | None = None
    data_fingerprint: str | None = None
    version: int = STATE_VERSION
    usage: dict[str, dict[str, Any]] = field(default_factory=dict)
    memory: dict[str, Any] = field(default_factory=dict)  # what the next round depends on beyond the records:
    # the optimizer's (`optimizer.memory()`: attribution cache, a reusable training run) and the scorer's

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return asdict(self)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> OptimizeState:
        """Read the JSON form back (records included)."""
        data = dict(raw)
        data["records"] = [RoundRecord(**r) for r in raw.get("records", [])]
        return cls(**data)

    @property
    def baseline(self) -> RoundRecord | None:
        """Round 0: the scores of the starting prompts."""
        return self.records[0] if self.records else None

"""`NullTracker`: a tracker that records nothing (benchmarks that compare optimizers, dry runs, ``--estimate``).

It hears a run's events like `memopt.tracking.Tracker` (through the same `RunRecorder`), so a run
untracked goes through the same steps: every prompt stays at version 0, checks refuse what MLflow
would refuse, and a subclass can keep what would be logged (override `log_text`, `log_dict`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memopt.core.errors import ConfigError
from memopt.tracking.prompts import check_prompts, prompt_name
from memopt.tracking.runs import recorder_of

__all__ = ["NullTracker"]


class NullTracker:
    """A tracker that records nothing (benchmarks that compare optimizers, and dry runs)."""

    run_id = "untracked"

    def open(self) -> NullTracker:
        """Nothing to open."""
        return self

    def start(self, run_name: str, params: Mapping[str, Any], tags: Mapping[str, str] | None = None) -> str:
        """Start nothing; returns ``"untracked"``."""
        return self.run_id

    def resume(self, run_id: str) -> None:
        """Nothing to resume from: always an error."""
        raise ConfigError("cannot resume without an MLflow store; run with a tracking URI.")

    @contextmanager
    def round(self, index: int, name: str | None = None) -> Iterator[NullTracker]:
        """A round that logs nothing."""
        yield self

    def end(self, status: str = "FINISHED") -> None:
        """Nothing."""

    def open_round(self, index: int, name: str | None = None) -> NullTracker:
        """A round that logs nothing."""
        return self

    def close(self, status: str = "FINISHED") -> None:
        """Nothing."""

    def on_event(self, event: Any) -> None:
        """Turn the event into the calls a tracker gets (`memopt.tracking.recorder`); they record nothing here."""
        recorder_of(self).on_event(event)

    def check_prompts(self, pipeline: str, instructions: Mapping[str, str]) -> None:
        """The same check as `Tracker.check_prompts`: what is refused in MLflow is refused untracked too."""
        check_prompts(pipeline, instructions)

    def run_params(self, run_id: str) -> dict[str, str]:
        """Nothing to resume from: always an error."""
        self.resume(run_id)
        return {}

    def read_artifact(self, run_id: str, artifact_path: str, dst: str | Path) -> Path | None:
        """Nothing to resume from: always an error."""
        self.resume(run_id)
        return None

    def register_prompts(self, pipeline: str, instructions: Mapping[str, str], *,
                         commit_message: str | Mapping[str, str], round_index: int) -> dict[str, int]:
        """No registry: every prompt stays at version 0."""
        return {prompt_name(pipeline, op): 0 for op in instructions}

    def log_metrics(self, metrics: Mapping[str, Any], step: int | None = None) -> None:
        """Nothing."""

    def log_text(self, text: str, artifact_file: str) -> None:
        """Nothing."""

    def log_dict(self, data: Any, artifact_file: str) -> None:
        """Nothing."""

    def log_table(self, data: Mapping[str, list[Any]], artifact_file: str) -> None:
        """Nothing."""

    def log_artifact(self, local_path: str | Path, artifact_path: str | None = None) -> None:
        """Nothing."""

    def set_tags(self, tags: Mapping[str, Any]) -> None:
        """Nothing."""

    def describe(self, markdown: str) -> None:
        """Nothing."""

    def claim_best(self, versions: Mapping[str, int], *, val_f1: float | None, basis: str) -> None:
        """No registry: nothing to claim."""

    def log_datasets(self, name: str, splits: Mapping[str, Any]) -> None:
        """Nothing."""

    def finish(self, status: str = "FINISHED") -> None:
        """Nothing."""

    def ui_hint(self) -> str:
        """Where to look: nowhere."""
        return "not tracked"

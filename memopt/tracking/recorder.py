"""How a tracker turns the events of an `optimize` run (`memopt.optimize.events`) into MLflow runs.

`RunRecorder` holds the store (a `Tracker`, or a `NullTracker` that records nothing) and, per event:

| event | what the store gets |
|---|---|
| `RunStarted` | the parent run (params), ``experiment.json``, a "running" description, the data splits |
| `RunResumed` | the parent run reattached (RUNNING again; rounds a killed process left RUNNING → KILLED) |
| `RoundStarted` | a nested run ``round-<i>`` (round 0: ``round-0 (starting prompts)``) |
| `RoundScored` | the round's traces (rounds ≥ 1), prompt versions, metrics, artifacts; round 1: ``report/round-0/`` |
| `RoundFinished` | the parent run's per-round metrics, the checkpoint ``state/state.json``; the round's run ends |
| `RoundDropped` | the tag ``memopt.stopped`` on the round's run |
| `RoundEnded` | the round's run ended with the status, unless it ended already |
| `RunEnding` | the final checkpoint, ``best_prompts/``, ``best_knobs.json``, ``report/final/`` |
| `RunSummarized` | ``summary.json``, summary metrics, ``best`` aliases, the stop tag, the description |
| `RunFinished` | the parent run ended with the status |

Every store failure is a `TrackingError` and is raised: the run stops as it always did.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memopt.optimize.resume import EXPERIMENT_ARTIFACT, STATE_ARTIFACT
from memopt.optimize.story import parent_metrics
from memopt.tracking.artifacts import log_round, log_summary, save_best, split_frames
from memopt.tracking.reports import RunReports
from memopt.tracking.traces import CaseTraces

if TYPE_CHECKING:  # events are told apart by their ``kind``: memopt.optimize.events is not imported when recording
    from memopt.optimize.events import (
        RoundDropped,
        RoundEnded,
        RoundFinished,
        RoundScored,
        RoundStarted,
        RunEnding,
        RunEvent,
        RunFinished,
        RunResumed,
        RunStarted,
        RunSummarized,
    )

__all__ = ["RunRecorder"]


class RunRecorder:
    """The events of one run, recorded in ``store`` (see the module docstring)."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.experiment: Any = None
        self.data = ""
        self.sizes = (0, 0, 0)
        self.traces = CaseTraces()
        self.reports = RunReports()
        self._round: Any = None

    def on_event(self, event: RunEvent) -> None:
        """Record one event (events without a row in the table are not recorded)."""
        handler = getattr(self, f"_{event.kind}", None)
        if handler is not None:
            handler(event)

    def _attach(self, event: RunStarted | RunResumed) -> None:
        self.experiment, self.data = event.experiment, event.data
        self.sizes = tuple(len(event.splits.get(name, ())) for name in ("train", "val", "test"))  # type: ignore[assignment]
        self.traces = CaseTraces.of(event.experiment)

    def _run_started(self, event: RunStarted) -> None:
        self._attach(event)
        experiment = event.experiment
        self.store.start(event.run_name, event.params)
        self.store.log_text(experiment.model_dump_json(indent=1), EXPERIMENT_ARTIFACT)
        self.store.describe(f"**memopt optimize** · experiment `{experiment.name}` · pipeline "
                            f"`{experiment.pipeline}` · running ({experiment.rounds} rounds).")
        self.store.log_datasets(event.data, split_frames(event.splits))

    def _run_resumed(self, event: RunResumed) -> None:
        self._attach(event)
        self.store.resume(event.run_id)

    def _round_started(self, event: RoundStarted) -> None:
        self._round = self.store.open_round(event.index, event.name)

    def _round_scored(self, event: RoundScored) -> None:
        record, outcome = event.record, event.outcome
        traces_md = ""
        if outcome is not None:
            traced = self.traces.log(self._round, outcome, round_index=record.round,
                                     versions=dict(event.versions_used))
            traces_md = traced.markdown(getattr(self.store, "tracking_uri", ""))
        log_round(self._round, event.system, record, outcome, event.before, traces_md)
        self.reports.round_scored(self.store, record, outcome, event.system.name)

    def _round_finished(self, event: RoundFinished) -> None:
        self.store.log_metrics(parent_metrics(event.record, event.state.best_val), step=event.record.round)
        self.store.log_dict(event.state.to_dict(), STATE_ARTIFACT)
        self._round.end()

    def _round_dropped(self, event: RoundDropped) -> None:
        self._round.set_tags({"memopt.stopped": event.reason})

    def _round_ended(self, event: RoundEnded) -> None:
        log, self._round = self._round, None
        if log is not None:
            log.close(event.status)

    def _run_ending(self, event: RunEnding) -> None:
        self.store.log_dict(event.state.to_dict(), STATE_ARTIFACT)
        save_best(self.store, event.state)
        self.reports.run_ending(self.store)

    def _run_summarized(self, event: RunSummarized) -> None:
        log_summary(self.store, event.summary, event.state, self.experiment, self.sizes, self.data,
                    extra=self.reports.markdown())

    def _run_finished(self, event: RunFinished) -> None:
        self.store.finish(event.status)

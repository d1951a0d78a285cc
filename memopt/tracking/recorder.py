"""How a tracker turns the events of an `optimize` run (`memopt.optimize.events`) into MLflow runs.

`RunRecorder` holds the store (a `Tracker`, or a `NullTracker` that records nothing) and, per event:

- `RunStarted`: the parent run (params; the code's version, `provenance.code_tags`), ``experiment.json``, a
  "running" description, the data splits;
- `RunResumed`: the parent run reattached (RUNNING again; rounds a killed process left RUNNING → KILLED), the
  resuming code's version (``memopt.resumed.*``);
- `RoundStarted`: a nested run ``round-<i>`` (round 0: ``round-0 (starting prompts)``);
- `RoundScored`: the round's prompt versions, then its case traces and reflection traces (rounds ≥ 1),
  metrics and artifacts (`artifacts.log_round`), tables (`tables.log_tables`), the trace metrics, its
  description; round 1: the diagnostic report of the starting prompts, ``report/round-0/``;
- `RoundFinished`: the parent run's per-round metrics, the checkpoint ``state/state.json``, the "running"
  description brought up to date; the round's run ends;
- `RoundDropped`: the tag ``memopt.stopped`` on the round's run;
- `RoundEnded`: the round's run ended with the status, unless it ended already;
- `RunEnding`: the final checkpoint, ``best_prompts/``, ``best_knobs.json``, the report ``report/final/``;
- `RunSummarized`: result metrics, ``summary.json``, ``@best`` (when the run beats its holder), the stop tag,
  the description;
- `RunFinished`: the parent run ended with the status.

Every store failure is a `TrackingError` and is raised: the run stops as it always did.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memopt.optimize.resume import EXPERIMENT_ARTIFACT, STATE_ARTIFACT
from memopt.optimize.story import parent_metrics, round_description
from memopt.systems.prompts import prompt_hash
from memopt.tracking.artifacts import log_round, log_summary, register_round, save_best, split_frames
from memopt.tracking.provenance import code_tags
from memopt.tracking.reflections import log_reflections
from memopt.tracking.reports import RunReports
from memopt.tracking.tables import log_tables
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
        self.store.start(event.run_name, event.params, tags=code_tags())
        self.store.log_text(experiment.model_dump_json(indent=1), EXPERIMENT_ARTIFACT)
        self.store.describe(f"running · **memopt optimize** · experiment `{experiment.name}` · pipeline "
                            f"`{experiment.pipeline}` · {experiment.rounds} rounds")
        self.store.log_datasets(event.data, split_frames(event.splits))

    def _run_resumed(self, event: RunResumed) -> None:
        self._attach(event)
        self.store.resume(event.run_id)
        code = code_tags()  # the code that resumes it, beside the code that started it
        named = {"version": "memopt.version", "git_commit": "mlflow.source.git.commit", "git_dirty": "memopt.git.dirty"}
        self.store.set_tags({f"memopt.resumed.{name}": code[key] for name, key in named.items() if key in code})

    def _round_started(self, event: RoundStarted) -> None:
        self._round = self.store.open_round(event.index, event.name)

    def _round_scored(self, event: RoundScored) -> None:
        """Prompts first (so a failure's trace can name the version its round produced), traces and reflections,
        metrics and artifacts (scores before bookkeeping), tables, the round's description."""
        record, outcome, log = event.record, event.outcome, self._round
        versions = register_round(log, event.system, record, outcome)
        names = {name.rpartition(".")[2]: name for name in versions}  # op → registry name
        uri = getattr(self.store, "tracking_uri", "")
        traced = self.traces.log(log, outcome, round_index=record.round, versions=dict(event.versions_used),
                                 produced=_produced(event.system, versions)) if outcome is not None else None
        reflected = log_reflections(log, outcome, round_index=record.round, names=names)
        log_round(log, event.system, record, outcome, event.before,
                  (traced.markdown(uri) if traced is not None else "") + reflected.markdown(uri),
                  _hashes(event.before, event.versions_used))
        log_tables(log, record, outcome, event.reported, names=names,
                   traces={op: reflected.trace_of(op) for op in names})
        if traced is not None:
            log.log_metrics({**traced.metrics(), "reflections": len(reflected.traces)}, step=record.round)
        log.set_tags({"mlflow.note.content": round_description(
            record, versions, traces=len(traced.traces) if traced is not None else 0,
            reflections=len(reflected.traces))})
        self.reports.round_scored(self.store, record, outcome, event.system.name)

    def _round_finished(self, event: RoundFinished) -> None:
        self.store.log_metrics(parent_metrics(event.record, event.state.best_val), step=event.record.round)
        self.store.log_dict(event.state.to_dict(), STATE_ARTIFACT)
        self._round.end()
        if event.record.round and self.experiment is not None:
            base = event.state.baseline.val.get("f1") if event.state.baseline is not None else None
            self.store.describe(f"running · round {event.record.round} of {self.experiment.rounds} done · best val F1 "
                                f"{event.state.best_val:.3f} (round {event.state.best_round}; starting prompts "
                                f"{base if base is None else format(base, '.3f')})")

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


def _produced(system: Any, versions: dict[str, int]) -> dict[str, list[str]]:
    """Per operation, the ``prompts:/name/version`` a round ended with that steer it; ``""``: all of them."""
    by_op = {name.rpartition(".")[2]: f"prompts:/{name}/{v}" for name, v in sorted(versions.items())}
    out = {spec.name: [by_op[op] for op in system.prompt_ops(spec.name) if op in by_op] for spec in system.operations}
    return {**out, "": list(by_op.values())}


def _hashes(before: Any, versions_used: Any) -> dict[str, str]:
    """The prompt hash of each instruction a round started with → the registry version it ran as."""
    by_op = {name.rpartition(".")[2]: f"prompts:/{name}/{v}" for name, v in versions_used.items() if v}
    return {prompt_hash(text): by_op[op] for op, text in before.items() if op in by_op}

"""Typed events of an `optimize` run, and who listens to them: `RunObserver`, `Tracker`, `Observers`.

`memopt.optimize.loop` emits one small frozen event per step of the run (a `kind` literal tells them
apart) and never calls a tracking store itself; `memopt.tracking` subscribes. In the order a run
emits them:

- `RunStarted` (or `RunResumed`): the experiment, the run's name and params, the data splits;
- per round (round 0 scores the starting prompts, the baseline): `RoundStarted`; then `RoundScored`
  (the round's `RoundRecord`, its `RoundOutcome`, None for round 0; the system it ended with) and,
  once the state has moved on and may be checkpointed, `RoundFinished`; `BestChanged` when the round
  beat the best val F1; or `RoundDropped` when the budget ran out inside it (or it would repeat an
  earlier round); always `RoundEnded` with the round's status (FINISHED, FAILED, KILLED);
- at the end: `RunEnding` (the final state, usage included), `RunSummarized` (the summary),
  `RunFinished` (the run's status; also when the run failed before its first round ended).

Two kinds of listener, one hook each (``on_event(event)``):

- **Observers** (`RunObserver`: progress displays, notebooks, dashboards) watch: an exception an
  observer raises is logged and swallowed, like a `memopt.systems.events` listener's, so it never costs the
  run its work.
- **The tracker** (`Tracker`; memopt registers ``mlflow``, `memopt.tracking.Tracker`, and ``untracked``,
  `memopt.tracking.NullTracker`, by name: `trackers`, `make_tracker`) keeps
  the run's record: the checkpoint a resume starts from, the prompt versions. Its failures stop the
  run (a `TrackingError` names the store, the step and the cause); it hears each event before the
  observers do. Handling `RoundScored`, it writes the prompt versions it registered into
  ``event.record.prompt_versions`` (the one field a listener fills in).

Events carry the run's live objects (a round's record, the state, the system): read them when the
event arrives and copy what you keep, as the state moves on with the next round.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from memopt.registry import Registry, entry_adopter

if TYPE_CHECKING:
    from memopt.data.model import Conversation
    from memopt.optimize.experiment import Experiment
    from memopt.optimize.reflective import RoundOutcome
    from memopt.optimize.state import OptimizeState, RoundRecord
    from memopt.systems.base import MemorySystem

__all__ = ["RunStarted", "RunResumed", "RoundStarted", "RoundScored", "RoundFinished", "BestChanged", "RoundDropped",
           "RoundEnded", "RunEnding", "RunSummarized", "RunFinished", "RunEvent", "RunObserver", "Tracker",
           "Observers", "TrackerEntry", "tracker", "trackers", "make_tracker", "default_tracker"]

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunStarted:
    """A new run: its experiment, name and params, and the data splits (train, val, test)."""

    experiment: Experiment
    run_name: str
    params: Mapping[str, Any]
    data: str
    splits: Mapping[str, Sequence[Conversation]]
    kind: Literal["run_started"] = field(default="run_started", init=False)


@dataclass(frozen=True)
class RunResumed:
    """A run continued from its last checkpoint (``run_id``), with the experiment and data splits of now."""

    run_id: str
    experiment: Experiment
    data: str
    splits: Mapping[str, Sequence[Conversation]]
    kind: Literal["run_resumed"] = field(default="run_resumed", init=False)


@dataclass(frozen=True)
class RoundStarted:
    """Round ``index`` of ``rounds`` begins (round 0 scores the starting prompts); ``name`` its run's name if set."""

    index: int
    rounds: int
    name: str | None = None
    kind: Literal["round_started"] = field(default="round_started", init=False)


@dataclass(frozen=True)
class RoundScored:
    """A round measured and decided: its record, what the optimizer found (None for round 0), the system it ended
    with and the prompts it started from; ``versions_used`` the prompt versions the round ran with; ``reported``
    the case results of its val / test report (`memopt.evaluate.run.CaseResult` per split)."""

    record: RoundRecord
    outcome: RoundOutcome | None
    system: MemorySystem
    before: Mapping[str, str]
    versions_used: Mapping[str, int] = field(default_factory=dict)
    reported: Mapping[str, Sequence[Any]] = field(default_factory=dict)
    kind: Literal["round_scored"] = field(default="round_scored", init=False)


@dataclass(frozen=True)
class RoundFinished:
    """A round's state is final (``state`` holds its record last): the moment to checkpoint it."""

    record: RoundRecord
    state: OptimizeState
    kind: Literal["round_finished"] = field(default="round_finished", init=False)


@dataclass(frozen=True)
class BestChanged:
    """Round ``round`` beat the best val F1 so far: its prompts and knobs are the run's best now."""

    round: int
    val_f1: float
    instructions: Mapping[str, str]
    knobs: Mapping[str, Any]
    kind: Literal["best_changed"] = field(default="best_changed", init=False)


@dataclass(frozen=True)
class RoundDropped:
    """Round ``index`` was dropped half-way (``reason``: the budget ran out); the run ends with the round before."""

    index: int
    reason: str
    kind: Literal["round_dropped"] = field(default="round_dropped", init=False)


@dataclass(frozen=True)
class RoundEnded:
    """Round ``index`` is over: FINISHED, FAILED (an exception escaped it) or KILLED (interrupted)."""

    index: int
    status: str
    kind: Literal["round_ended"] = field(default="round_ended", init=False)


@dataclass(frozen=True)
class RunEnding:
    """The run's last state (usage included), before its summary: the final checkpoint and best prompts."""

    state: OptimizeState
    kind: Literal["run_ending"] = field(default="run_ending", init=False)


@dataclass(frozen=True)
class RunSummarized:
    """The run's summary (`memopt.optimize.summary.summary_of`, with the confirmation when one ran) and final state."""

    summary: Mapping[str, Any]
    state: OptimizeState
    kind: Literal["run_summarized"] = field(default="run_summarized", init=False)


@dataclass(frozen=True)
class RunFinished:
    """The run ends with ``status`` (FINISHED, FAILED, KILLED); ``summary`` None when no round completed."""

    status: str
    summary: Mapping[str, Any] | None = None
    kind: Literal["run_finished"] = field(default="run_finished", init=False)


RunEvent = (RunStarted | RunResumed | RoundStarted | RoundScored | RoundFinished | BestChanged | RoundDropped
            | RoundEnded | RunEnding | RunSummarized | RunFinished)


@runtime_checkable
class RunObserver(Protocol):
    """Anything that watches a run: one hook taking one event. What it raises is logged, never raised."""

    def on_event(self, event: RunEvent) -> None:
        """Hear one event of the run."""


class Tracker(RunObserver, Protocol):
    """The observer that keeps a run's record (see the module docstring): its failures stop the run.

    Besides the events, the loop asks it before the first LM call to check the prompts (`check_prompts`)
    and to open its store (`open`); once a run started or resumed, for the run's id (`run_id`, a
    RuntimeError before); and on ``--resume``, for the params and artifacts of the run to continue. (Not
    runtime-checkable: ``run_id`` raises before a run started.)"""

    @property
    def run_id(self) -> str:
        """The id of the run it records (RuntimeError when none started yet)."""

    def open(self) -> Any:
        """Open the store (a `ConfigError` when it cannot be used), before any LM call."""

    def check_prompts(self, pipeline: str, instructions: Mapping[str, str]) -> None:
        """Refuse prompts the store cannot keep (a `ConfigError` naming the prompt)."""

    def run_params(self, run_id: str) -> dict[str, str]:
        """The params of an earlier run (to resume it); a `ConfigError` when there is no such run."""

    def read_artifact(self, run_id: str, artifact_path: str, dst: str | Path) -> Path | None:
        """Download an artifact of an earlier run into ``dst``; None when it has none of that name."""


class Observers:
    """The tracker and the observers of one run, and how an event reaches them (see the module docstring)."""

    def __init__(self, tracker: Tracker, observers: Sequence[RunObserver] = ()) -> None:
        self.tracker = tracker
        self.observers = tuple(observers)

    def emit(self, event: RunEvent) -> None:
        """Deliver ``event`` to the tracker (its errors propagate), then to each observer (theirs are logged)."""
        self.tracker.on_event(event)
        for observer in self.observers:
            try:
                observer.on_event(event)
            except Exception:  # an observer must never break the run it watches
                _log.exception("run observer %s failed on %s", type(observer).__name__, type(event).__name__)


@dataclass(frozen=True)
class TrackerEntry:
    """A registered tracker: its name and its factory of (the experiment) → `Tracker`."""

    name: str
    build: Callable[[Experiment], Tracker]

    def __call__(self, experiment: Experiment) -> Tracker:
        """The tracker of one experiment."""
        return self.build(experiment)


_adopt = entry_adopter("tracker", TrackerEntry, "a function of (Experiment) returning a tracker")

# memopt's own trackers (``mlflow``, ``untracked``) are registered by `memopt.tracking.builtins`, found by name
# like a plug-in's: the loop never imports MLflow's tracker; a package can add its own (entry points
# ``memopt.trackers``).
trackers: Registry[TrackerEntry] = Registry("tracker", "memopt.trackers", "memopt.tracking.builtins", _adopt)


def tracker(name: str) -> Callable[[Callable[[Experiment], Tracker]], TrackerEntry]:
    """Decorator: register a factory of (Experiment) → `Tracker` as the tracker ``name``."""

    def register(fn: Callable[[Experiment], Tracker]) -> TrackerEntry:
        module = getattr(fn, "__module__", None) or "?"
        return trackers.register(name, TrackerEntry(name, fn), module=module)

    return register


def make_tracker(name: str, experiment: Experiment) -> Tracker:
    """The tracker registered as ``name`` for ``experiment`` (``mlflow``: the experiment's ``mlflow`` section;
    ``untracked``: records nothing)."""
    return trackers.get(name)(experiment)


def default_tracker(experiment: Experiment) -> Tracker:
    """The MLflow tracker of the experiment's ``mlflow`` section: what `run_experiment` records to when given no
    tracker (``make_tracker("mlflow", experiment)``)."""
    return make_tracker("mlflow", experiment)

"""An optimize run told as typed events: a plain-Python observer (no MLflow) hears a tiny SimLM run in order,
an observer that raises costs the run nothing, and the loop imports nothing from `memopt.tracking`."""

from __future__ import annotations

import ast
import dataclasses
import logging
from pathlib import Path

import pytest

from memopt.core.errors import ConfigError
from memopt.optimize.events import (
    BestChanged,
    RoundEnded,
    RoundFinished,
    RoundScored,
    RoundStarted,
    RunEvent,
    RunFinished,
    RunObserver,
    RunStarted,
    RunSummarized,
)
from memopt.optimize.experiment import load_experiment
from memopt.tracking import NullTracker
from tests.conftest import ROOT

MEMOPT = ROOT / "memopt"
TINY = "synthetic:conversations=4,sessions=2,seed=0,questions_per_conversation=6"


class Heard:
    """A plain observer: keeps every event it hears."""

    def __init__(self) -> None:
        self.events: list[RunEvent] = []
        self.next_rounds: list[int] = []

    def on_event(self, event: RunEvent) -> None:
        """Keep the event (and where the state stood when a round finished: the state is the run's live one)."""
        self.events.append(event)
        if isinstance(event, RoundFinished):
            self.next_rounds.append(event.state.next_round)


class Broken:
    """An observer that fails on every event."""

    def __init__(self) -> None:
        self.calls = 0

    def on_event(self, event: RunEvent) -> None:
        """Fail."""
        self.calls += 1
        raise ValueError(f"observer bug on {event.kind}")


def _tiny_run(observers):
    from memopt.optimize.loop import run_experiment
    from memopt.systems.base import clear_ingest_cache

    clear_ingest_cache()
    experiment = load_experiment(ROOT / "experiments" / "quickstart.yaml", {
        "data.source": TINY, "rounds": 2, "optimizer.candidates": 2, "optimizer.trials": 2,
        "optimizer.trial_batch": 2, "lm.cache": False})
    return run_experiment(experiment, tracker=NullTracker(), observers=observers)


@pytest.fixture(scope="module")
def heard():
    """A two-round SimLM run with a recording observer: (summary, events, where each finished round left the state)."""
    heard = Heard()
    summary = _tiny_run([heard])
    return summary, heard.events, heard.next_rounds


def test_an_observer_hears_the_run_in_order(heard):
    summary, events, next_rounds = heard
    assert all(isinstance(e, RunObserver) for e in (Heard(), Broken(), NullTracker()))
    kinds = [e.kind for e in events]
    assert kinds[0] == "run_started" and kinds[-3:] == ["run_ending", "run_summarized", "run_finished"]
    rounds = [e.index for e in events if isinstance(e, RoundStarted)]
    assert rounds == [0, 1, 2]
    for index in rounds:  # each round: started, scored, finished (checkpointed), ended FINISHED, in that order
        mine = [e for e in events if getattr(e, "index", None) == index or
                getattr(getattr(e, "record", None), "round", None) == index]
        assert [e.kind for e in mine] == ["round_started", "round_scored", "round_finished", "round_ended"], index
        assert isinstance(mine[-1], RoundEnded) and mine[-1].status == "FINISHED"
    starts = [i for i, k in enumerate(kinds) if k == "round_started"]
    assert starts == sorted(starts) and kinds.index("run_ending") > max(starts)
    first = events[0]
    assert isinstance(first, RunStarted) and first.params["pipeline"] == "mem0"
    assert sum(len(part) for part in first.splits.values()) == 4 and first.splits["train"] and first.splits["val"]
    scored = [e for e in events if isinstance(e, RoundScored)]
    assert scored[0].outcome is None and all(e.outcome is not None for e in scored[1:])
    # the tracker hears each event first: the prompt versions it registered are on the record observers see
    assert all(e.record.prompt_versions and set(e.record.prompt_versions.values()) == {0} for e in scored)
    finished = [e for e in events if isinstance(e, RoundFinished)]
    assert next_rounds == [1, 2, 3] and finished[-1].state.records[-1] is scored[-1].record
    best = [e for e in events if isinstance(e, BestChanged)]
    assert best[0].round == 0 and best[-1].round == summary["final"]["round"]
    assert best[-1].val_f1 == pytest.approx(summary["final"]["val_f1"])
    assert [e.round for e in best] == sorted(e.round for e in best)
    assert next(e for e in events if isinstance(e, RunSummarized)).summary is summary
    last = events[-1]
    assert isinstance(last, RunFinished) and last.status == "FINISHED" and last.summary is summary
    with pytest.raises(dataclasses.FrozenInstanceError):
        last.status = "KILLED"  # type: ignore[misc]


def test_an_observer_that_raises_costs_the_run_nothing(heard, caplog):
    summary, events, _ = heard
    broken = Broken()
    with caplog.at_level(logging.ERROR, logger="memopt.optimize.events"):
        again = _tiny_run([broken])
    assert again["status"] == "FINISHED" and again["final"] == summary["final"]
    assert [r["val_f1"] for r in again["rounds"]] == [r["val_f1"] for r in summary["rounds"]]
    assert broken.calls == len(events)  # called on every event; each failure logged, none raised
    assert "run observer Broken failed on RunStarted" in caplog.text and "observer bug on run_finished" in caplog.text


def _imports(path: Path) -> set[str]:
    """Every module a file imports, anywhere in it (function-level and TYPE_CHECKING imports included)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found |= {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
    return found


def test_the_loop_imports_nothing_from_tracking_and_tracking_not_the_loop():
    # no module of memopt/optimize names memopt.tracking, not even at a function's start: the MLflow tracker is
    # found by name in the registry of trackers, as SimLM is as an LM provider
    for path in sorted((MEMOPT / "optimize").glob("*.py")):
        reached = {m for m in _imports(path) if m == "memopt.tracking" or m.startswith("memopt.tracking.")}
        assert not reached, f"{path.name} imports {sorted(reached)}: the loop emits events, it does not call tracking"
    for path in sorted((MEMOPT / "tracking").glob("*.py")):
        assert "memopt.optimize.loop" not in _imports(path), f"tracking/{path.name} imports the loop"


def test_trackers_are_found_by_name(tmp_path):
    from memopt.optimize.events import make_tracker, trackers
    from memopt.tracking import Tracker

    experiment = load_experiment(ROOT / "experiments" / "quickstart.yaml")
    assert isinstance(make_tracker("mlflow", experiment), Tracker)
    assert isinstance(make_tracker("untracked", experiment), NullTracker)
    assert trackers.shipped()[:2] == ["mlflow", "untracked"]
    with pytest.raises(ConfigError, match="tracker"):
        make_tracker("wandb", experiment)

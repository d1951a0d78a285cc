"""The worker side of `memopt.optimize.workers`: find the open run, claim its queued trials, score them, report.

`run_worker` is what `memopt worker` runs. It builds the experiment's scorer and seed system the way the
coordinator does (`memopt.optimize.loop`), so it lives apart from the coordinator's side, which the run loop
imports.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from memopt.core.errors import ConfigError
from memopt.lm.redaction import redact
from memopt.optimize.storage import (
    HEARTBEAT_S,
    PREFIX,
    identity_of,
    mismatch,
    open_storage,
    run_study_name,
    storage_step,
)
from memopt.optimize.workers import (
    ERROR,
    ERRORED_ATTR,
    INSTRUCTIONS,
    KNOBS,
    POLL_S,
    REPORT_ATTEMPTS,
    USAGE,
    WORKER,
    _usage_delta,
)

__all__ = ["run_worker", "find_run", "WorkerReport"]


class WorkerReport:
    """What a worker did: trials scored per run, LM calls made."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.trials = 0
        self.calls = 0
        self.lost = 0  # trials the coordinator took back (this worker was taken for dead)


def find_run(storage: Any, experiment_name: str, join: str | None, *, wait: float,
             experiment_file: str | None = None) -> Any:
    """The run study to work for: ``join``'s, else the newest open run of this experiment, waiting ``wait`` s for it
    to be open (a resumed run is open again once its coordinator has read its checkpoint)."""
    import optuna

    deadline = time.monotonic() + wait
    ended = False
    while True:
        if join is not None:
            if run_study_name(join) in optuna.get_all_study_names(storage):
                study = optuna.load_study(study_name=run_study_name(join), storage=storage)
                if study.user_attrs.get("state") == "open":
                    return study
                ended = True
        else:
            runs = [s for s in optuna.get_all_study_summaries(storage, include_best_trial=False)
                    if s.study_name.startswith(PREFIX) and ":round" not in s.study_name
                    and s.user_attrs.get("experiment") == experiment_name and s.user_attrs.get("state") == "open"]
            if runs:
                newest = max(runs, key=lambda s: s._study_id)  # the most recently created
                return optuna.load_study(study_name=newest.study_name, storage=storage)
        if time.monotonic() >= deadline:
            if ended:
                raise ConfigError(f"--join {join}: run {join} has ended (waited {wait:g} s for it to be resumed); "
                                  f"continue it with `memopt optimize EXPERIMENT --resume {join}`, then start the "
                                  "workers.")
            if join is not None:
                raise ConfigError(f"--join {join}: no run {join} in this storage (waited {wait:g} s); give the run "
                                  "id `memopt optimize` printed, and the same --storage.")
            raise ConfigError(f"no open run of experiment {experiment_name!r} in this storage (waited {wait:g} s); "
                              f"start `memopt optimize {experiment_file or 'EXPERIMENT.yaml'} --storage URL` first "
                              "(the same storage URL), or pass --join RUN_ID.")
        time.sleep(POLL_S)


def _claim(storage: Any, study: Any) -> Any | None:
    """A WAITING trial of ``study`` moved to RUNNING by this process (None when none is left)."""
    from optuna.trial import TrialState

    for t in storage.get_all_trials(study._study_id, deepcopy=False, states=(TrialState.WAITING,)):
        try:
            if storage.set_trial_state_values(t._trial_id, state=TrialState.RUNNING):
                storage.record_heartbeat(t._trial_id) if hasattr(storage, "record_heartbeat") else None
                return storage.get_trial(t._trial_id)
        except Exception:  # noqa: BLE001 - another worker finished or claimed it first: try the next
            continue
    return None


def run_worker(experiment: Any, url: str, *, join: str | None = None, wait: float = 60.0, name: str = "",
               on_trial: Callable[[str], None] | None = None, experiment_file: str | None = None) -> WorkerReport:
    """Score the queued trials of one run until the coordinator ends it; returns what this worker did
    (``experiment_file``: the YAML the experiment was read from, for the message when no run is found)."""
    import optuna

    from memopt.optimize.loop import data_fingerprint, make_scorer, splits_of
    from memopt.systems import make_system

    storage = open_storage(url, key="--storage", create=False)
    _, trainset, valset, testset = splits_of(experiment)
    mine = identity_of(experiment, data_fingerprint(trainset, valset, testset))
    with storage_step(url, "finding the run to work for", "Start the database again, then this worker."):
        run = find_run(storage, experiment.name, join, wait=wait, experiment_file=experiment_file)
    run_id = run.study_name[len(PREFIX):]
    then = (f"Start the database again; the run's coordinator stops too: continue it with `memopt optimize EXPERIMENT "
            f"--resume {run_id}`, then start this worker again (`memopt worker EXPERIMENT --join {run_id}`).")
    differ = mismatch(mine, run.user_attrs.get("identity", {}))
    if differ:
        raise ConfigError(f"this experiment does not match run {run_id}'s, so its scores would not be comparable: "
                          f"{'; '.join(differ)}. Start the worker with the coordinator's experiment file.")
    scorer = make_scorer(experiment)
    seed_system = make_system(experiment.pipeline, prompts=experiment.prompts, **experiment.knobs)
    report = WorkerReport(run_id)
    worker = name or f"pid{__import__('os').getpid()}"
    while True:
        with storage_step(url, "looking for a queued trial", then):
            if optuna.load_study(study_name=run.study_name, storage=storage).user_attrs.get("state") != "open":
                return report
            trial, study = None, None
            for study_name in sorted(n for n in optuna.get_all_study_names(storage)
                                     if n.startswith(f"{run.study_name}:round")):
                try:
                    study = optuna.load_study(study_name=study_name, storage=storage)
                    trial = _claim(storage, study)
                except KeyError:  # the coordinator dropped the study meanwhile
                    continue
                if trial is not None:
                    break
        if trial is None:
            time.sleep(POLL_S)
            continue
        with storage_step(url, f"scoring trial {trial.number} of {study.study_name}", then):
            _score_trial(storage, trial, seed_system, scorer, valset, worker, report)
        if on_trial is not None:
            on_trial(f"{study.study_name} trial {trial.number}")


def _score_trial(storage: Any, trial: Any, seed_system: Any, scorer: Any, valset: list, worker: str,
                 report: WorkerReport) -> None:
    """Score one claimed trial, beating and writing usage meanwhile; complete it (or fail it with the error)."""
    from optuna.trial import TrialState

    tid = trial._trial_id
    before = scorer.usage_by_meter()
    stop, lost = threading.Event(), threading.Event()
    storage.set_trial_user_attr(tid, WORKER, worker)

    def beat() -> None:
        from optuna.exceptions import UpdateFinishedTrialError

        while not stop.wait(HEARTBEAT_S / 2):
            try:
                storage.set_trial_user_attr(tid, USAGE, _usage_delta(scorer.usage_by_meter(), before))
                if hasattr(storage, "record_heartbeat"):
                    storage.record_heartbeat(tid)
            except (UpdateFinishedTrialError, KeyError):  # failed as stale, or its study dropped: give it up
                lost.set()
                return
            except Exception:  # noqa: BLE001,S112 - a busy database (SQLite's lock): beat again next time
                continue

    beater = threading.Thread(target=beat, name=f"memopt-beat-{tid}", daemon=True)
    beater.start()
    value, errored, error = 0.0, False, None
    try:
        system = seed_system.with_instructions(trial.user_attrs[INSTRUCTIONS]).with_knobs(**trial.user_attrs[KNOBS])
        metrics = scorer.score(system, valset, judged=False).metrics
        errored = scorer.errored(metrics)
        value = -1.0 if errored else float(metrics["f1"])
    except Exception as e:  # noqa: BLE001 - reported to the coordinator, which raises it there
        error = redact(f"{type(e).__name__}: {' '.join(str(e).split())}")[:500]  # stored in the storage: masked
    finally:
        stop.set()
        beater.join()
    spent = _usage_delta(scorer.usage_by_meter(), before)
    report.calls += sum(u["calls"] for u in spent.values())
    if lost.is_set():
        report.lost += 1
        return
    def report_back() -> None:
        storage.set_trial_user_attr(tid, USAGE, spent)
        if error is not None:
            storage.set_trial_user_attr(tid, ERROR, error)
            storage.set_trial_state_values(tid, state=TrialState.FAIL)
            return
        storage.set_trial_user_attr(tid, ERRORED_ATTR, errored)
        storage.set_trial_state_values(tid, state=TrialState.COMPLETE, values=[value])
        report.trials += 1

    from optuna.exceptions import UpdateFinishedTrialError

    for attempt in range(REPORT_ATTEMPTS):
        try:
            report_back()
            return
        except (UpdateFinishedTrialError, KeyError):  # taken back meanwhile: the coordinator counted what it saw
            break
        except Exception:  # noqa: BLE001 - a busy or briefly unreachable database: try again, then give up
            time.sleep(0.5 * (attempt + 1))
    report.lost += 1

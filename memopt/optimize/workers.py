"""A round's candidate trials scored by `memopt worker` processes through a shared Optuna storage.

The coordinator (`memopt optimize` with ``optimizer.storage``) keeps choosing configurations exactly as
one process does: TPE lives in its memory and sees each batch only once the batch is scored (see
`memopt.optimize.select`), so which configurations are tried, in which order, depends on the seed and
the batch size, never on how many workers there are or which finishes first. What moves out is the
*scoring*: each batch's new configurations are queued as WAITING trials of the round's study
(``memopt:<run_id>:round<N>``), every one carrying its full instructions and knobs as user attrs.

A worker claims a trial by moving it to RUNNING (Optuna's storage does this atomically: two workers never
hold one trial), beats Optuna's heartbeat while it scores the configuration on the val split with its
own LMs, writes its LM usage (per meter: calls, tokens, cost) to the trial every beat and once more at
the end, then completes the trial with the val F1. The coordinator waits for every queued trial, fails
the trials of workers that stopped beating (Optuna queues a copy again, `STALE_RETRIES` at most), and adds
the usage of every finished trial — completed or failed — to its own count once, by trial number, so
budgets and costs stay exact: calls of a worker that died count up to its last beat.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from memopt.errors import ConfigError, EvaluationFailed
from memopt.lm.usage import ModelUsage
from memopt.optimize.storage import (
    HEARTBEAT_S,
    PREFIX,
    display_url,
    identity_of,
    mismatch,
    open_storage,
    round_study_name,
    run_study_name,
)

__all__ = ["TrialPool", "attach_pool", "run_worker", "WorkerReport", "POLL_S"]

REPORT_ATTEMPTS = 5  # tries to write a trial's result while the database is busy
POLL_S = 0.25  # how often the coordinator and idle workers look at the storage
KEY, INSTRUCTIONS, KNOBS, USAGE, ERRORED_ATTR, ERROR, WORKER = (
    "memopt.key", "memopt.instructions", "memopt.knobs", "memopt.usage", "memopt.errored", "memopt.error",
    "memopt.worker")


def _usage_delta(after: dict[str, ModelUsage], before: dict[str, ModelUsage]) -> dict[str, dict[str, Any]]:
    """Per meter, what was spent between two snapshots (meters with no calls left out)."""
    out = {}
    for meter, total in after.items():
        prev = before.get(meter, ModelUsage())
        diff = {k: v - getattr(prev, k) for k, v in asdict(total).items()}
        if diff["calls"]:
            out[meter] = diff
    return out


class TrialPool:
    """The coordinator's side: queue a batch of configurations in the round's study, wait for workers, count."""

    def __init__(self, url: str, identity: dict[str, Any], experiment_name: str, *,
                 wait_note: Callable[[str], None] | None = None) -> None:
        self.url = url
        self.storage = open_storage(url)
        self.identity = identity
        self.experiment_name = experiment_name
        self.run_id: str | None = None
        self.wait_note = wait_note
        self._batches = 0
        self.trials_by_worker: dict[str, int] = {}

    def open(self, run_id: str) -> None:
        """Announce run ``run_id`` (a resumed run is announced again)."""
        import optuna

        self.run_id = run_id
        study = optuna.create_study(study_name=run_study_name(run_id), storage=self.storage, load_if_exists=True)
        study.set_user_attr("experiment", self.experiment_name)
        study.set_user_attr("identity", self.identity)
        study.set_user_attr("state", "open")

    def close(self) -> None:
        """Tell the run's workers that it ended (they exit)."""
        import optuna

        if self.run_id is None:
            return
        optuna.load_study(study_name=run_study_name(self.run_id), storage=self.storage).set_user_attr(
            "state", "finished")

    def round_study(self, round_index: int) -> Any:
        """Round ``round_index``'s study, new (a half-done one of a killed coordinator is dropped)."""
        import optuna

        assert self.run_id is not None, "TrialPool.open(run_id) first"
        name = round_study_name(self.run_id, round_index)
        if name in optuna.get_all_study_names(self.storage):
            optuna.delete_study(study_name=name, storage=self.storage)
        return optuna.create_study(study_name=name, storage=self.storage, direction="maximize")

    def scorer_for(self, system: Any, round_index: int, scorer: Any,
                   cases: int) -> Callable[[list[tuple[dict[str, str], dict[str, int]]]], list[float | None]]:
        """The ``score_many`` of `memopt.optimize.select.select` for round ``round_index`` of ``system``."""
        study = self.round_study(round_index)

        def score_many(configs: list[tuple[dict[str, str], dict[str, int]]]) -> list[float | None]:
            full = [(system.with_instructions(instructions).instructions(), {**system.knobs, **knobs})
                    for instructions, knobs in configs]
            return self.score_many(study, full, scorer, cases)

        return score_many

    def score_many(self, study: Any, configs: list[tuple[dict[str, str], dict[str, int]]], scorer: Any,
                   cases: int = 0) -> list[float | None]:
        """Val F1 of each configuration (None: errored), scored by workers; their usage is added to ``scorer``."""
        from optuna.storages import RetryHeartbeatStaleTrialCallback, fail_stale_trials
        from optuna.trial import TrialState

        self._batches += 1
        keys = [f"b{self._batches}:{i}" for i in range(len(configs))]
        for key, (instructions, knobs) in zip(keys, configs, strict=True):
            study.enqueue_trial({}, user_attrs={KEY: key, INSTRUCTIONS: instructions, KNOBS: knobs})
        results: dict[str, float | None] = {}
        counted: set[int] = set()
        noted = False
        while len(results) < len(keys):
            fail_stale_trials(study)
            trials = [t for t in study.get_trials(deepcopy=False) if t.user_attrs.get(KEY) in keys]
            for t in trials:
                if not t.state.is_finished() or t.number in counted:
                    continue
                counted.add(t.number)
                scorer.add_usage({m: ModelUsage(**u) for m, u in t.user_attrs.get(USAGE, {}).items()})
                if t.state == TrialState.COMPLETE:
                    results[t.user_attrs[KEY]] = None if t.user_attrs.get(ERRORED_ATTR) else float(t.value)
                    worker = str(t.user_attrs.get(WORKER, "?"))
                    self.trials_by_worker[worker] = self.trials_by_worker.get(worker, 0) + 1
                    scorer.progress.advance(cases)
                elif t.user_attrs.get(ERROR):
                    raise EvaluationFailed(f"worker {t.user_attrs.get(WORKER, '?')}: trial {t.number} of "
                                           f"{study.study_name}: {t.user_attrs[ERROR]}")
            for key in set(keys) - set(results):  # a dead worker's trial whose retries are spent: errored
                mine = [t for t in trials if t.user_attrs[KEY] == key]
                if mine and all(t.state == TrialState.FAIL for t in mine) and any(
                        len(RetryHeartbeatStaleTrialCallback.retry_history(t)) >= _retries() for t in mine):
                    results[key] = None
            if len(results) < len(keys):
                if not noted and self.wait_note is not None and not any(t.state == TrialState.RUNNING
                                                                        for t in trials):
                    self.wait_note(f"waiting for workers: memopt worker EXPERIMENT --storage "
                                   f"{display_url(self.url)} --join {self.run_id}")
                    noted = True
                time.sleep(POLL_S)
        return [results[key] for key in keys]


def attach_pool(experiment: Any, optimizer: Any, data_fingerprint: str) -> TrialPool | None:
    """The `TrialPool` of ``optimizer.storage`` (connected now), set on the optimizer; None without a storage."""
    import sys

    url = experiment.optimizer.storage
    if url is None:
        return None
    if not hasattr(optimizer, "trial_pool"):
        raise ConfigError(f"optimizer.storage: workers score the trials of memtrace and score_only, not of "
                          f"{experiment.optimizer.name}; remove optimizer.storage (--storage).")
    pool = TrialPool(url, identity_of(experiment, data_fingerprint), experiment.name,
                     wait_note=lambda note: print(note, file=sys.stderr, flush=True))
    optimizer.trial_pool = pool
    return pool


def _retries() -> int:
    from memopt.optimize.storage import STALE_RETRIES

    return STALE_RETRIES


class WorkerReport:
    """What a worker did: trials scored per run, LM calls made."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.trials = 0
        self.calls = 0
        self.lost = 0  # trials the coordinator took back (this worker was taken for dead)


def find_run(storage: Any, experiment_name: str, join: str | None, *, wait: float) -> Any:
    """The run study to work for: ``join``'s, else the newest open run of this experiment (waiting ``wait`` s)."""
    import optuna

    deadline = time.monotonic() + wait
    while True:
        if join is not None:
            if run_study_name(join) in optuna.get_all_study_names(storage):
                return optuna.load_study(study_name=run_study_name(join), storage=storage)
        else:
            runs = [s for s in optuna.get_all_study_summaries(storage, include_best_trial=False)
                    if s.study_name.startswith(PREFIX) and ":round" not in s.study_name
                    and s.user_attrs.get("experiment") == experiment_name and s.user_attrs.get("state") == "open"]
            if runs:
                newest = max(runs, key=lambda s: s._study_id)  # the most recently created
                return optuna.load_study(study_name=newest.study_name, storage=storage)
        if time.monotonic() >= deadline:
            if join is not None:
                raise ConfigError(f"--join {join}: no run {join} in this storage (waited {wait:g} s); give the run "
                                  "id `memopt optimize` printed, and the same --storage.")
            raise ConfigError(f"no open run of experiment {experiment_name!r} in this storage (waited {wait:g} s); "
                              "start `memopt optimize EXPERIMENT --storage URL` first, or pass --join RUN_ID.")
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
               on_trial: Callable[[str], None] | None = None) -> WorkerReport:
    """Score the queued trials of one run until the coordinator ends it; returns what this worker did."""
    import optuna

    from memopt.optimize.run import data_fingerprint, make_scorer, splits_of
    from memopt.systems import make_system

    storage = open_storage(url, key="--storage", create=False)
    _, trainset, valset, testset = splits_of(experiment)
    mine = identity_of(experiment, data_fingerprint(trainset, valset, testset))
    run = find_run(storage, experiment.name, join, wait=wait)
    run_id = run.study_name[len(PREFIX):]
    differ = mismatch(mine, run.user_attrs.get("identity", {}))
    if differ:
        raise ConfigError(f"this experiment does not match run {run_id}'s, so its scores would not be comparable: "
                          f"{'; '.join(differ)}. Start the worker with the coordinator's experiment file.")
    scorer = make_scorer(experiment)
    seed_system = make_system(experiment.pipeline, prompts=experiment.prompts, **experiment.knobs)
    report = WorkerReport(run_id)
    worker = name or f"pid{__import__('os').getpid()}"
    while True:
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
        error = f"{type(e).__name__}: {' '.join(str(e).split())[:500]}"
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

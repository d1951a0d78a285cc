"""A round's candidate trials scored by `memopt worker` processes through a shared Optuna storage.

This module is the coordinator's side (the run loop imports it); the worker's side is `memopt.optimize.worker`.

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

import time
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from memopt.core.errors import ConfigError, EvaluationFailed
from memopt.lm.usage import ModelUsage
from memopt.optimize.storage import (
    display_url,
    identity_of,
    open_storage,
    round_study_name,
    run_study_name,
    storage_step,
)

__all__ = ["TrialPool", "attach_pool", "POLL_S"]

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
                 wait_note: Callable[[str], None] | None = None, experiment_file: str | None = None) -> None:
        self.url = url
        self.storage = open_storage(url)
        self.identity = identity
        self.experiment_name = experiment_name
        self.experiment_file = experiment_file  # what the workers' command line names (the coordinator's file)
        self.run_id: str | None = None
        self.wait_note = wait_note
        self._batches = 0
        self.trials_by_worker: dict[str, int] = {}

    def _step(self, step: str) -> Any:
        """A storage step of the coordinator: its failure is one `StorageError` saying how to resume the run."""
        run = self.run_id or "RUN_ID"
        return storage_step(self.url, step, f"Start the database again, then continue the run with `memopt optimize "
                                            f"EXPERIMENT --resume {run}` (the same --storage and --tracking-uri) and "
                                            f"start its workers again (`memopt worker EXPERIMENT --join {run}`).")

    def open(self, run_id: str) -> None:
        """Announce run ``run_id`` (a resumed run is announced again, once the round its killed coordinator left
        half-done is dropped: a worker must not score its trials while this coordinator queues the round anew)."""
        import optuna

        self.run_id = run_id
        with self._step("announcing the run to workers"):
            study = optuna.create_study(study_name=run_study_name(run_id), storage=self.storage, load_if_exists=True)
            for name in optuna.get_all_study_names(self.storage):
                if name.startswith(f"{run_study_name(run_id)}:round") and any(
                        not t.state.is_finished() for t in optuna.load_study(study_name=name, storage=self.storage)
                        .get_trials(deepcopy=False)):
                    optuna.delete_study(study_name=name, storage=self.storage)
            study.set_user_attr("experiment", self.experiment_name)
            study.set_user_attr("identity", self.identity)
            study.set_user_attr("state", "open")

    def close(self) -> None:
        """Tell the run's workers that it ended (they exit)."""
        import optuna

        if self.run_id is None:
            return
        with self._step("telling the workers the run ended"):
            optuna.load_study(study_name=run_study_name(self.run_id), storage=self.storage).set_user_attr(
                "state", "finished")

    def worker_command(self) -> str:
        """The command that starts a worker for this run (the storage's password, if any, masked)."""
        import shlex

        where = shlex.quote(self.experiment_file) if self.experiment_file else "<the experiment file of this run>"
        return f"memopt worker {where} {worker_storage(self.url)} --join {self.run_id}"

    def round_study(self, round_index: int) -> Any:
        """Round ``round_index``'s study, new (a half-done one of a killed coordinator is dropped)."""
        import optuna

        assert self.run_id is not None, "TrialPool.open(run_id) first"
        name = round_study_name(self.run_id, round_index)
        with self._step(f"opening the trials of round {round_index}"):
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
        with self._step(f"queueing {len(keys)} trial(s) in {study.study_name}"):
            for key, (instructions, knobs) in zip(keys, configs, strict=True):
                study.enqueue_trial({}, user_attrs={KEY: key, INSTRUCTIONS: instructions, KNOBS: knobs})
        results: dict[str, float | None] = {}
        counted: set[int] = set()
        noted = False
        while len(results) < len(keys):
            with self._step(f"waiting for the workers' trials of {study.study_name}"):
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
                    self.wait_note(f"waiting for workers: {self.worker_command()}")
                    noted = True
                time.sleep(POLL_S)
        return [results[key] for key in keys]


def attach_pool(experiment: Any, optimizer: Any, data_fingerprint: str,
                experiment_file: str | None = None) -> TrialPool | None:
    """The `TrialPool` of ``optimizer.storage`` (connected now), set on the optimizer; None without a storage.
    ``experiment_file`` (the YAML the experiment was read from) is what the hint that starts workers names."""
    import sys

    url = experiment.optimizer.storage
    if url is None:
        return None
    if not hasattr(optimizer, "trial_pool"):
        raise ConfigError(f"optimizer.storage: workers score the trials of memtrace and score_only, not of "
                          f"{experiment.optimizer.name}; remove optimizer.storage (--storage).")
    pool = TrialPool(url, identity_of(experiment, data_fingerprint), experiment.name,
                     wait_note=lambda note: print(note, file=sys.stderr, flush=True),
                     experiment_file=experiment_file)
    optimizer.trial_pool = pool
    return pool


def worker_storage(url: str) -> str:
    """How a worker is told the storage: ``--storage URL``, or, when the URL holds a password, from the environment
    (the password is never printed)."""
    import shlex

    from memopt.lm.redaction import uri_password

    if uri_password(url) is None:
        return f"--storage {shlex.quote(url)}"
    return f'--storage "$MEMOPT_STORAGE" (with MEMOPT_STORAGE={display_url(url)}, its password in place of ***)'


def _retries() -> int:
    from memopt.optimize.storage import STALE_RETRIES

    return STALE_RETRIES

"""The runs of an `optimize` experiment in MLflow: the parent run, a nested run per round, a null tracker.

`Tracker.start` creates the experiment if needed and a parent run tagged ``memopt.kind=optimize``;
`Tracker.round` opens a nested run ``round-<i>`` (or the name given) tagged ``memopt.round`` and
``memopt.kind=round``, finished FINISHED, FAILED (an exception escaped) or KILLED (interrupted).
`Tracker.describe` sets the parent run's Markdown description (``mlflow.note.content``);
`Tracker.log_datasets` logs the data splits as MLflow dataset inputs. Every call goes through
`memopt.tracking.store.GuardedStore`; every value through `memopt.tracking.entries`. A tracker hears
the events of a run (`on_event`) through its `memopt.tracking.recorder.RunRecorder`.
"""

from __future__ import annotations

import json
import tempfile
import time
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, nullcontext, suppress
from pathlib import Path
from typing import Any

from memopt.core.errors import ConfigError, MemoptError, TrackingError
from memopt.lm.redaction import redact, uri_password
from memopt.tracking.entries import KEY_LIMIT, PARAM_LIMIT, TAG_LIMIT, cut, entries, flatten, redacted_copy, scrub
from memopt.tracking.prompts import SCOPE_TAG, BestClaim, check_prompts, claim_best, prompt_scope, register_prompts
from memopt.tracking.store import (
    URI_ORDER,
    GuardedStore,
    cause,
    download_artifacts,
    hold_run,
    load_mlflow,
    open_run,
    resolve_tracking_uri,
    run_info,
    shown_uri,
    store_lock,
)
from memopt.tracking.views import runs_page, share_result_view, ui_base

__all__ = ["Tracker", "RoundLog", "UI_COMMAND", "recorder_of"]

# `mlflow ui` (and a server with job execution) leaves a busy job runner behind after Ctrl-C; this one exits cleanly
UI_COMMAND = "MLFLOW_SERVER_ENABLE_JOB_EXECUTION=false mlflow server"
_STATUSES = ("FINISHED", "FAILED", "KILLED")


class _RunLog:
    """Logging into one MLflow run, with secrets redacted (see the module docstring)."""

    def __init__(self) -> None:
        self._run_id: str | None = None

    def _client(self) -> Any:
        raise NotImplementedError

    @property
    def run_id(self) -> str:
        """The id of the run this object logs to."""
        if self._run_id is None:
            raise RuntimeError("no MLflow run yet: call Tracker.start() or Tracker.resume() first.")
        return self._run_id

    def log_metrics(self, metrics: Mapping[str, Any], step: int | None = None) -> None:
        """Log numeric metrics (nested dicts flattened with '.'; None skipped) at ``step``."""
        from mlflow.entities import Metric

        now = int(time.time() * 1000)
        batch = [Metric(k, v, now, step or 0) for k, v in flatten(metrics).items()]
        for i in range(0, len(batch), 1000):
            self._client().log_batch(self.run_id, metrics=batch[i: i + 1000])

    def set_tags(self, tags: Mapping[str, Any]) -> None:
        """Set tags (values stringified and redacted; secret-named keys dropped)."""
        from mlflow.entities import RunTag

        batch = [RunTag(k, v) for k, v in entries(tags, TAG_LIMIT).items()]
        for i in range(0, len(batch), 100):
            self._client().log_batch(self.run_id, tags=batch[i: i + 100])

    def _log_params(self, params: Mapping[str, Any]) -> None:
        from mlflow.entities import Param

        batch = [Param(k, v) for k, v in entries(params, PARAM_LIMIT).items()]
        for i in range(0, len(batch), 100):
            self._client().log_batch(self.run_id, params=batch[i: i + 100])

    def log_text(self, text: str, artifact_file: str) -> None:
        """Log a text artifact (redacted) as ``artifact_file``, a relative path inside the run's artifacts."""
        parts = Path(artifact_file).parts
        if not parts or Path(artifact_file).is_absolute() or ".." in parts:
            raise ConfigError(f"artifact name {artifact_file!r} would leave the run's artifact folder; name files "
                              "from data with memopt.core.files.safe_name.")
        self._client().log_text(self.run_id, redact(text), artifact_file)

    def log_table(self, data: Mapping[str, list[Any]], artifact_file: str) -> None:
        """Log a table (column → values; texts redacted by the caller) as ``artifact_file`` (``.json``), which
        ``mlflow.load_table`` reads back."""
        parts = Path(artifact_file).parts
        if not parts or Path(artifact_file).is_absolute() or ".." in parts or Path(artifact_file).suffix != ".json":
            raise ConfigError(f"table name {artifact_file!r}: a .json file inside the run's artifact folder.")
        with warnings.catch_warnings():  # pandas' notice on how MLflow selects text columns
            warnings.simplefilter("ignore")
            self._client().log_table(self.run_id, data=dict(data), artifact_file=artifact_file)

    def log_dict(self, data: Any, artifact_file: str) -> None:
        """Log JSON-able data as ``artifact_file`` (YAML for .yaml/.yml, else JSON); secrets dropped or masked."""
        if Path(artifact_file).suffix in (".yaml", ".yml"):
            import yaml

            text = yaml.safe_dump(json.loads(json.dumps(scrub(data), default=str)), sort_keys=False)
        else:
            text = json.dumps(scrub(data), indent=2, default=str, ensure_ascii=False)
        self.log_text(text, artifact_file)

    def log_artifact(self, local_path: str | Path, artifact_path: str | None = None) -> None:
        """Log a local file or directory under ``artifact_path``; text holding a secret is uploaded redacted."""
        path = Path(local_path)
        if not path.exists():
            raise FileNotFoundError(f"cannot log artifact {path}: no such file or directory.")
        with tempfile.TemporaryDirectory(prefix="memopt-artifact-") as scratch:
            upload = redacted_copy(path, Path(scratch))
            if upload.is_dir():
                sub = f"{artifact_path}/{path.name}" if artifact_path else path.name
                self._client().log_artifacts(self.run_id, str(upload), sub)
            else:
                self._client().log_artifact(self.run_id, str(upload), artifact_path)


class RoundLog(_RunLog):
    """What one optimization round logs, bound to its nested run."""

    def __init__(self, client: Any, run_id: str, index: int, lock: Any = nullcontext,
                 experiment_id: str | None = None, prompt_prefix: str | None = None,
                 parent_run_id: str | None = None) -> None:
        super().__init__()
        self.prompt_prefix = prompt_prefix  # names become <prefix>.<pipeline>.<op> (the run's prompt scope)
        self.parent_run_id = parent_run_id
        self._mlflow_client = client
        self._run_id = run_id
        self.index = index
        self._lock = lock
        self.experiment_id = experiment_id
        self.ended = False

    def end(self, status: str = "FINISHED") -> None:
        """End the round's run now (the `Tracker.round` block then leaves it as it is)."""
        self._client().set_terminated(self.run_id, status)
        self.ended = True

    def close(self, status: str = "FINISHED") -> None:
        """End the round's run with ``status`` unless it ended already; ending a FAILED or KILLED round never
        raises a store error (the error in flight is the one to report)."""
        if self.ended:
            return
        if status == "FINISHED":
            self.end(status)
        else:
            with suppress(TrackingError):
                self.end(status)

    def _client(self) -> Any:
        return self._mlflow_client

    def register_prompts(self, pipeline: str, instructions: Mapping[str, str], *,
                         commit_message: str | Mapping[str, str], round_index: int) -> dict[str, int]:
        """The version of each prompt (a new one only for a text not registered yet), linked to this round and
        tagged with it (see `memopt.tracking.prompts.register_prompts`); name → version."""
        stream = f"{self.prompt_prefix}.{pipeline}" if self.prompt_prefix else pipeline
        return register_prompts(self._client(), self.run_id, stream, instructions, commit_message=commit_message,
                                round_index=round_index, lock=self._lock, experiment_id=self.experiment_id,
                                parent_run_id=self.parent_run_id)


class Tracker(_RunLog):
    """The parent run of one `optimize` experiment, and its rounds as nested runs."""

    def __init__(self, tracking_uri: str | None = None, experiment: str = "memopt",
                 prompt_prefix: str | None = None) -> None:
        super().__init__()
        self.tracking_uri = resolve_tracking_uri(tracking_uri)
        self.experiment = experiment
        self.prompt_prefix = prompt_prefix  # mlflow.prompt_prefix: set, it replaces the experiment's scope
        # prompts register as <scope>.<pipeline>.<op>: by default the experiment's, so experiments never collide
        self.prompt_scope = prompt_prefix if prompt_prefix is not None else prompt_scope(experiment)
        self._experiment_id: str | None = None
        self._mlflow_client: Any = None
        self._held: Any = None  # the parent run's lock (`hold_run`) while this process runs it

    def _client(self) -> Any:
        return self.open()._mlflow_client

    def open(self) -> Tracker:
        """Open (and on first use create) the store; a `ConfigError` names the URI when it cannot be used."""
        if self._mlflow_client is None:
            mlflow = load_mlflow()
            try:
                with self._lock():  # a fresh sqlite store is created (migrated) by one process at a time
                    client = mlflow.MlflowClient(self.tracking_uri)
                    client.search_experiments(max_results=1)
                    client.search_registered_models(max_results=1)
            except MemoptError:
                raise
            except Exception as e:
                raise ConfigError(f"MLflow tracking URI {shown_uri(self.tracking_uri)}: cannot open the store "
                                  f"({cause(e)}). The store is chosen by {URI_ORDER}.") from None
            mlflow.set_tracking_uri(self.tracking_uri)
            self._mlflow_client = GuardedStore(client, self.tracking_uri)
        return self

    def _lock(self) -> Any:
        store = self._mlflow_client
        if store is not None and store._vanished("taking the store's lock"):  # never make a vanished store's folder
            raise store.broken
        try:
            return store_lock(self.tracking_uri)
        except OSError as e:  # the store's folder cannot be made: a file is in the way, or no permission
            raise ConfigError(f"MLflow tracking URI {shown_uri(self.tracking_uri)}: cannot open the store "
                              f"({cause(e)}). The store is chosen by {URI_ORDER}.") from None

    def started_run_id(self) -> str | None:
        """The parent run's id once `start` or `resume` attached to one, else None."""
        return self._run_id

    def start(self, run_name: str, params: Mapping[str, Any], tags: Mapping[str, str] | None = None) -> str:
        """Create the experiment if needed, start the parent run, log params and tags; returns the run id."""
        if self._run_id is not None:
            raise RuntimeError(f"tracker already logs to run {self._run_id}.")
        client = self._client()
        with self._lock():  # parallel runs of one new experiment create it once
            experiment = client.get_experiment_by_name(self.experiment)
            if experiment is None:
                self._experiment_id = client.create_experiment(self.experiment)
        if experiment is not None and experiment.lifecycle_stage == "deleted":
            raise ConfigError(f"MLflow experiment {self.experiment!r} is deleted in {shown_uri(self.tracking_uri)}; "
                              "restore it "
                              f"(`mlflow experiments restore --experiment-id {experiment.experiment_id}`) or choose "
                              "another experiment name.")
        if experiment is not None:
            self._experiment_id = experiment.experiment_id
        run = client.create_run(self._experiment_id, run_name=cut(redact(run_name), KEY_LIMIT),
                                tags=entries({**(tags or {}), "memopt.kind": "optimize",
                                              SCOPE_TAG: self.prompt_scope}, TAG_LIMIT))
        self._held = hold_run(self.tracking_uri, run.info.run_id)
        self._run_id = run.info.run_id
        self._activate()
        self._log_params(params)
        share_result_view(client, self._experiment_id)
        return self._run_id

    def _activate(self) -> None:
        """Make the run's experiment MLflow's active one: MLflow links a registered prompt to the active experiment
        (in a thread of its own), which must be this one, not the Default experiment."""
        load_mlflow().set_experiment(experiment_id=self._experiment_id)

    @property
    def experiment_id(self) -> str | None:
        """The id of the run's experiment once `start` or `resume` attached to a run."""
        return self._experiment_id

    def describe(self, markdown: str) -> None:
        """Set the parent run's description (MLflow's ``mlflow.note.content`` tag, shown on the run page)."""
        self.set_tags({"mlflow.note.content": markdown})

    def claim_best(self, versions: Mapping[str, int], *, val_f1: float | None, basis: str) -> BestClaim:
        """Point ``@best`` of each prompt at the given version (``{"q.mem0.extract": 3}``) when the run's ``val_f1``
        beats the holders' on the same ``basis`` (`memopt.tracking.prompts.claim_best`); the versions are linked to
        the parent run (its Overview lists them under "Registered prompts")."""
        return claim_best(self._client(), self.run_id, versions, val_f1=val_f1, basis=basis, lock=self._lock)

    def log_datasets(self, name: str, splits: Mapping[str, Any]) -> None:
        """Log each split (a pandas DataFrame, one row per conversation) as an MLflow dataset input of the parent
        run, named ``<name>:<split>`` with the split as its context."""
        mlflow = load_mlflow()
        from mlflow.entities import DatasetInput, InputTag
        from mlflow.utils.mlflow_tags import MLFLOW_DATASET_CONTEXT

        inputs = []
        for split, frame in splits.items():
            with warnings.catch_warnings():  # MLflow's hints on inferred integer schemas and pandas deprecations
                warnings.simplefilter("ignore")
                dataset = mlflow.data.from_pandas(frame, name=cut(redact(f"{name}:{split}"), KEY_LIMIT))
                entity = dataset._to_mlflow_entity()
            inputs.append(DatasetInput(entity, tags=[InputTag(MLFLOW_DATASET_CONTEXT, split)]))
        self._client().log_inputs(self.run_id, datasets=inputs)

    def resume(self, run_id: str) -> None:
        """Reattach to an existing parent run (marked RUNNING again); round runs a killed process left
        RUNNING are marked KILLED."""
        _, run, _ = open_run(run_id, self.tracking_uri)
        self._held = hold_run(self.tracking_uri, run.info.run_id)  # not while another process runs it
        # the names the run registered: a run of memopt 0.2 has no scope tag, its names had the prefix or none
        self.prompt_scope = run.data.tags.get(SCOPE_TAG, self.prompt_prefix or "")
        self._experiment_id = run.info.experiment_id
        self._run_id = run.info.run_id
        client = self._client()
        self._activate()
        share_result_view(client, self._experiment_id)
        client.update_run(self._run_id, status="RUNNING")
        orphans = client.search_runs([self._experiment_id], filter_string=(
            f"tags.mlflow.parentRunId = '{self._run_id}' and attributes.status = 'RUNNING'"))
        for orphan in orphans:
            client.set_terminated(orphan.info.run_id, "KILLED")

    def open_round(self, index: int, name: str | None = None) -> RoundLog:
        """Start the nested run ``round-<index>`` (or ``name``) of one round; `RoundLog.close` ends it."""
        parent = self.run_id
        client = self._client()
        run = client.create_run(self._experiment_id, run_name=cut(redact(name or f"round-{index}"), KEY_LIMIT),
                                tags={"mlflow.parentRunId": parent, "memopt.round": str(index), "memopt.kind": "round"})
        return RoundLog(client, run.info.run_id, index, self._lock, self._experiment_id, self.prompt_scope, parent)

    @contextmanager
    def round(self, index: int, name: str | None = None) -> Iterator[RoundLog]:
        """A nested run ``round-<index>`` (or ``name``) for one round: FINISHED, FAILED if the body raises, KILLED
        if it is interrupted; unless the body ended it itself (`RoundLog.end`)."""
        log = self.open_round(index, name)
        try:
            yield log
        except BaseException as e:
            log.close("FAILED" if isinstance(e, Exception) else "KILLED")
            raise
        log.close("FINISHED")

    def on_event(self, event: Any) -> None:
        """Record one event of an optimize run (`memopt.tracking.recorder`); store failures raise `TrackingError`."""
        recorder_of(self).on_event(event)

    def check_prompts(self, pipeline: str, instructions: Mapping[str, str]) -> None:
        """Refuse a prompt MLflow cannot name or that holds a credential (`memopt.tracking.prompts`)."""
        check_prompts(pipeline, instructions)

    def run_params(self, run_id: str) -> dict[str, str]:
        """The params of an existing run of this store (`run_info`)."""
        return run_info(run_id, self.tracking_uri)["params"]

    def read_artifact(self, run_id: str, artifact_path: str, dst: str | Path) -> Path | None:
        """Download an artifact of an existing run of this store into ``dst``; None when it is missing."""
        return download_artifacts(run_id, artifact_path, dst, self.tracking_uri, missing_ok=True)

    def download(self, artifact_path: str, dst: str | Path) -> Path:
        """Download an artifact of the parent run into ``dst`` (see `download_artifacts`)."""
        return download_artifacts(self.run_id, artifact_path, dst, self.tracking_uri)

    def finish(self, status: str = "FINISHED") -> None:
        """End the parent run with ``status`` (FINISHED, FAILED or KILLED)."""
        if status not in _STATUSES:
            raise ValueError(f"run status {status!r}: expected one of {', '.join(_STATUSES)}.")
        try:
            self._client().set_terminated(self.run_id, status)
        finally:
            if self._held is not None:
                self._held.close()
                self._held = None

    def ui_hint(self) -> str:
        """How to look at this run in the MLflow UI: the experiment's runs with their results, and the run."""
        where = f"experiment {self.experiment!r}"
        uri = shown_uri(self.tracking_uri)
        base = ui_base(self.tracking_uri) or "http://127.0.0.1:5000/"
        pages = f"{base}#/experiments"
        if self._experiment_id is not None:
            pages = f"{runs_page(self._experiment_id, base)} (its runs with their results)"
            if self._run_id:
                pages += f" or {base}#/experiments/{self._experiment_id}/runs/{self._run_id} (this run)"
        if uri.startswith(("http://", "https://")):
            return f"open {pages}; {where}"
        note = ""
        if uri_password(self.tracking_uri):  # never printed: read from the environment, as the resume command does
            command = f'{UI_COMMAND} --backend-store-uri "$MLFLOW_TRACKING_URI" --port 5000 --workers 1'
            note = (f"; it reads MLFLOW_TRACKING_URI from the environment: set MLFLOW_TRACKING_URI={uri} with the real "
                    "password (masked here as ***, it is never printed)")
        else:
            command = f"{UI_COMMAND} --backend-store-uri {uri} --port 5000 --workers 1"
        if uri.startswith("sqlite:///") and not uri.removeprefix("sqlite:///").startswith("/"):
            command += f" (run in {Path.cwd()})"
        return f"{command}, then open {pages}; {where}{note}"


def recorder_of(tracker: Any) -> Any:
    """The `RunRecorder` of a tracker, made on its first event (imported then: `import memopt.tracking` stays light)."""
    recorder = tracker.__dict__.get("_recorder")
    if recorder is None:
        from memopt.tracking.recorder import RunRecorder

        recorder = tracker.__dict__["_recorder"] = RunRecorder(tracker)
    return recorder

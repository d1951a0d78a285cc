"""MLflow tracking of `optimize` experiments: one parent run per experiment, one nested run per round.

Contract:

- **Store.** The tracking URI is the argument, else ``$MLFLOW_TRACKING_URI``, else
  ``sqlite:///mlflow.db`` (MLflow's default; a new experiment keeps its artifacts in ``./mlruns``).
  `Tracker` sets MLflow's process-wide tracking URI to it, because MLflow's prompt linking reads that
  one. Readers (`run_info`, `download_artifacts`) never create a store: a missing run, or a
  ``sqlite:`` file that does not exist, is a `ConfigError` naming the run id, the URI and how the URI
  was chosen.
- **Runs.** `Tracker.start` creates the experiment if needed and a parent run tagged
  ``memopt.kind=optimize``; `Tracker.round` opens a nested run ``round-<i>`` (or the name given)
  tagged ``memopt.round`` and ``memopt.kind=round``, finished FINISHED, FAILED (an exception
  escaped) or KILLED (interrupted). Param values are stringified (dicts and lists as JSON) and cut
  to MLflow's 6000 characters, tag values to 8000. Metrics are flattened (``{"val": {"f1": 0.5}}``
  → ``val.f1``); None is skipped, another non-number is skipped with a warning.
  Run ids given by a user (``--resume``, ``export RUN_ID``) must look like run ids (`check_run_id`).
- **Parallel runs.** A fresh ``sqlite:`` store is created (MLflow's schema migration) under a file
  lock next to the database (``mlflow.db.lock``, `store_lock`), so optimize runs started together
  on a new store all succeed; experiment creation and prompt registration take the same lock.
- **Prompts.** `RoundLog.register_prompts` registers ``<pipeline>.<op>`` in the MLflow prompt
  registry only when the text differs from the latest version (tags ``round``, ``parent_version``;
  the commit message one string, or one per op), links every version the round used to the round's
  run and the prompt to the run's experiment (MLflow's ``_mlflow_experiment_ids`` prompt tag, so the
  experiment's Prompts tab lists it) and points the alias ``round-<i>`` at it; `Tracker.set_prompt_aliases`
  points others (``best``). The check and the registration hold the store lock, so identical prompts
  of parallel runs share one version. Prompt text is stored verbatim, never masked: a prompt that
  holds an LM credential is refused (`check_prompt_secret`).
- **Story of the run.** `Tracker.describe` sets the parent run's Markdown description
  (``mlflow.note.content``); `Tracker.log_datasets` logs the data splits as MLflow dataset inputs.
- **Secrets.** Every param, tag, metric name, text, dict and commit message passes through
  `memopt.lm.redaction.redact`, which masks the values of LM credential variables only (``*_API_KEY``,
  ``*_TOKEN``, ``*_SECRET``, ... of at least 8 characters); param and tag keys that name a secret
  (``api_key``, ``secret``, ``password``, ``credential``, ``token`` as a word, so ``max_tokens``
  stays; also inside nested dicts) are dropped; a file logged with ``log_artifact`` is uploaded as a
  redacted copy when its text holds a secret.
- **Faults.** Every call a `Tracker` or `RoundLog` makes to the store goes through
  `memopt.tracking_store.GuardedStore`: a failure is one `TrackingError` naming the store (password
  masked, `shown_uri`), the step and the cause (disk full, read-only, gone, unreachable); a
  ``sqlite:`` database moved or deleted mid-run is noticed before the next call (never silently
  recreated empty), and once the store is gone or unreachable later calls fail at once, so cleanup
  after an error or a Ctrl-C is quick. MLflow's HTTP retries are bounded (`HTTP_DEFAULTS`) so a dead
  tracking server costs seconds, not minutes, and SIGINT / SIGTERM stay honoured.
- MLflow is imported inside methods only, and its INFO logs and progress bars are silenced.
"""

from __future__ import annotations

import json
import logging
import numbers
import os
import re
import shutil
import tempfile
import threading
import time
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, nullcontext, suppress
from pathlib import Path
from typing import Any

from memopt.errors import ConfigError, MemoptError, TrackingError
from memopt.files import file_lock
from memopt.lm.redaction import credential_values, redact
from memopt.tracking_store import URI_ORDER, GuardedStore, cause, shown_uri, sqlite_path, store_failure

__all__ = ["DEFAULT_TRACKING_URI", "URI_ORDER", "Tracker", "NullTracker", "RoundLog", "resolve_tracking_uri",
           "prompt_name", "run_info", "download_artifacts", "check_run_id", "check_prompt_secret", "store_lock",
           "shown_uri"]

DEFAULT_TRACKING_URI = "sqlite:///mlflow.db"
# `mlflow ui` (and a server with job execution) leaves a busy job runner behind after Ctrl-C; this one exits cleanly
UI_COMMAND = "MLFLOW_SERVER_ENABLE_JOB_EXECUTION=false mlflow server"
_STATUSES = ("FINISHED", "FAILED", "KILLED")
_PARAM_LIMIT, _TAG_LIMIT, _KEY_LIMIT, _COMMIT_LIMIT = 6000, 8000, 250, 1000
_SECRET_KEY = re.compile(r"api[_-]?key|secret|password|credential|(?:^|[^a-z])token(?:$|[^a-z])", re.IGNORECASE)
_PROMPT_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")
_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
_log = logging.getLogger(__name__)
def resolve_tracking_uri(uri: str | None = None) -> str:
    """The tracking URI to use: ``uri``, else ``$MLFLOW_TRACKING_URI``, else ``sqlite:///mlflow.db``."""
    return uri or os.environ.get("MLFLOW_TRACKING_URI") or DEFAULT_TRACKING_URI


def prompt_name(pipeline: str, op: str) -> str:
    """The registry name of an operation's prompt, ``<pipeline>.<op>`` (letters, digits, '.', '-', '_')."""
    name = f"{pipeline}.{op}"
    if not _PROMPT_NAME.match(name):
        raise ConfigError(f"prompt name {name!r}: MLflow allows only letters, digits, '.', '-' and '_'.")
    return name


def _mlflow() -> Any:
    import mlflow

    logging.getLogger("mlflow").setLevel(logging.WARNING)
    logging.getLogger("mlflow.store.db.utils").setLevel(logging.CRITICAL)  # logs each error it raises: raised as ours
    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
    from memopt.tracking_store import HTTP_DEFAULTS

    for variable, value in HTTP_DEFAULTS.items():
        os.environ.setdefault(variable, value)
    return mlflow


def _secret_key(key: str) -> bool:
    return bool(_SECRET_KEY.search(key))


def _scrub(value: Any) -> Any:
    """``value`` with secret-named dict keys dropped and strings redacted, recursively."""
    if isinstance(value, Mapping):
        return {redact(str(k)): _scrub(v) for k, v in value.items() if not _secret_key(str(k))}
    if isinstance(value, list | tuple | set):
        return [_scrub(v) for v in value]
    if isinstance(value, str):
        return redact(value)
    return value


def _text(value: Any, limit: int) -> str:
    if isinstance(value, str):
        text = value
    elif isinstance(value, Mapping | list | tuple):
        text = json.dumps(_scrub(value), sort_keys=True, default=str, ensure_ascii=False)
    else:
        text = str(value)
    return _cut(redact(text), limit)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _key(key: Any) -> str:
    return _cut(re.sub(r"[^\w.\-/ ]", "_", redact(str(key))), _KEY_LIMIT)


def _entries(values: Mapping[str, Any], limit: int) -> dict[str, str]:
    return {_key(k): _text(v, limit) for k, v in values.items() if not _secret_key(str(k))}


def _flatten(metrics: Mapping[str, Any], prefix: str = "") -> dict[str, float]:
    flat: dict[str, float] = {}
    for key, value in metrics.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(_flatten(value, f"{name}."))
        elif isinstance(value, numbers.Real):
            flat[_key(name)] = float(value)
        elif value is not None:
            _log.warning("metric %s: %r is not a number; not logged", _key(name), type(value).__name__)
    return flat


def _commit_message(text: str) -> str | None:
    text = redact(text).strip()
    if len(text) <= _COMMIT_LIMIT:
        return text or None
    cut = text[: _COMMIT_LIMIT - 2]
    return cut[: cut.rfind(" ")] + " …" if " " in cut else cut + " …"


def _redacted_copy(path: Path, scratch: Path) -> Path:
    """``path``, or a copy of it under ``scratch`` with secrets masked when any of its text files holds one."""
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    dirty = {}
    for file in files:
        try:
            text = file.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        if redact(text) != text:
            dirty[file] = redact(text)
    if not dirty:
        return path
    copy = scratch / path.name
    if path.is_file():
        copy.write_text(dirty[path], encoding="utf-8")
        return copy
    shutil.copytree(path, copy)
    for file, text in dirty.items():
        (copy / file.relative_to(path)).write_text(text, encoding="utf-8")
    return copy


def check_prompt_secret(name: str, text: str) -> None:
    """Refuse a prompt that holds the value of an LM credential variable: prompts are stored verbatim, never masked."""
    for variable, value in credential_values().items():
        if value in text:
            raise ConfigError(f"prompt {name}: its text holds the value of ${variable}; remove the key from the "
                              "prompt (prompts are logged to MLflow and exported verbatim).")


def _missing_run(run_id: str, uri: str) -> ConfigError:
    return ConfigError(f"MLflow run {run_id!r} not found in the tracking store {shown_uri(uri)}. The store is chosen "
                       f"by {URI_ORDER}; pass the URI the run was logged to.")


def check_run_id(run_id: str) -> str:
    """``run_id`` if it has the form of an MLflow run id (letters, digits, '-', '_'); else a `ConfigError`."""
    if not isinstance(run_id, str) or not _RUN_ID.match(run_id):
        raise ConfigError(f"MLflow run {str(run_id)[:80]!r}: not a run id (an optimize run prints its id, 32 hex "
                          "digits, e.g. `memopt optimize ... --resume 3f2a...`).")
    return run_id


def store_lock(uri: str) -> Any:
    """A lock held while a store is created or upgraded and while prompts are registered: a file lock next to a
    sqlite database (``mlflow.db.lock``), nothing for other stores (their server serialises writes)."""
    db = sqlite_path(uri)
    if db is None:
        return nullcontext()
    db.parent.mkdir(parents=True, exist_ok=True)
    return file_lock(db.with_name(db.name + ".lock"))


def _reader(run_id: str, tracking_uri: str | None) -> tuple[Any, Any, str]:
    """A client for an existing store, the run and the URI; `ConfigError` when either is missing."""
    check_run_id(run_id)
    uri = resolve_tracking_uri(tracking_uri)
    if uri.startswith("sqlite:///"):
        db = Path(uri.removeprefix("sqlite:///").split("?", 1)[0])
        if not db.is_file():
            raise ConfigError(f"MLflow run {run_id!r}: no tracking store at {db.resolve()} (tracking URI {uri}). "
                              f"The store is chosen by {URI_ORDER}; pass the URI the run was logged to.")
    mlflow = _mlflow()
    try:
        client = mlflow.MlflowClient(uri)
        return client, client.get_run(run_id), uri
    except mlflow.exceptions.MlflowException as e:
        if e.error_code == "RESOURCE_DOES_NOT_EXIST":
            raise _missing_run(run_id, uri) from None
        raise store_failure(uri, f"reading run {run_id}", e) from None
    except Exception as e:
        raise store_failure(uri, f"reading run {run_id}", e) from None


def run_info(run_id: str, tracking_uri: str | None = None) -> dict[str, Any]:
    """Name, status, experiment, params, tags and latest metrics of an existing run."""
    _, run, _ = _reader(run_id, tracking_uri)
    return {"run_id": run.info.run_id, "run_name": run.info.run_name, "status": run.info.status,
            "experiment_id": run.info.experiment_id, "params": dict(run.data.params),
            "tags": dict(run.data.tags), "metrics": dict(run.data.metrics)}


def download_artifacts(run_id: str, artifact_path: str, dst: str | Path, tracking_uri: str | None = None, *,
                       missing_ok: bool = False) -> Path | None:
    """Download an artifact file or directory of a run into ``dst``; returns its local path (None when it is
    missing and ``missing_ok``)."""
    client, _, uri = _reader(run_id, tracking_uri)
    Path(dst).mkdir(parents=True, exist_ok=True)
    from mlflow.exceptions import MlflowException

    try:
        return Path(client.download_artifacts(run_id, artifact_path, str(dst)))
    except MlflowException as e:
        if e.error_code != "RESOURCE_DOES_NOT_EXIST":
            raise
        if missing_ok:
            return None
        raise ConfigError(f"MLflow run {run_id} (store {shown_uri(uri)}) has no artifact {artifact_path!r}.") from None


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
        entries = [Metric(k, v, now, step or 0) for k, v in _flatten(metrics).items()]
        for i in range(0, len(entries), 1000):
            self._client().log_batch(self.run_id, metrics=entries[i: i + 1000])

    def set_tags(self, tags: Mapping[str, Any]) -> None:
        """Set tags (values stringified and redacted; secret-named keys dropped)."""
        from mlflow.entities import RunTag

        entries = [RunTag(k, v) for k, v in _entries(tags, _TAG_LIMIT).items()]
        for i in range(0, len(entries), 100):
            self._client().log_batch(self.run_id, tags=entries[i: i + 100])

    def _log_params(self, params: Mapping[str, Any]) -> None:
        from mlflow.entities import Param

        entries = [Param(k, v) for k, v in _entries(params, _PARAM_LIMIT).items()]
        for i in range(0, len(entries), 100):
            self._client().log_batch(self.run_id, params=entries[i: i + 100])

    def log_text(self, text: str, artifact_file: str) -> None:
        """Log a text artifact (redacted) as ``artifact_file``, a relative path inside the run's artifacts."""
        parts = Path(artifact_file).parts
        if not parts or Path(artifact_file).is_absolute() or ".." in parts:
            raise ConfigError(f"artifact name {artifact_file!r} would leave the run's artifact folder; name files "
                              "from data with memopt.files.safe_name.")
        self._client().log_text(self.run_id, redact(text), artifact_file)

    def log_dict(self, data: Any, artifact_file: str) -> None:
        """Log JSON-able data as ``artifact_file`` (YAML for .yaml/.yml, else JSON); secrets dropped or masked."""
        if Path(artifact_file).suffix in (".yaml", ".yml"):
            import yaml

            text = yaml.safe_dump(json.loads(json.dumps(_scrub(data), default=str)), sort_keys=False)
        else:
            text = json.dumps(_scrub(data), indent=2, default=str, ensure_ascii=False)
        self.log_text(text, artifact_file)

    def log_artifact(self, local_path: str | Path, artifact_path: str | None = None) -> None:
        """Log a local file or directory under ``artifact_path``; text holding a secret is uploaded redacted."""
        path = Path(local_path)
        if not path.exists():
            raise FileNotFoundError(f"cannot log artifact {path}: no such file or directory.")
        with tempfile.TemporaryDirectory(prefix="memopt-artifact-") as scratch:
            upload = _redacted_copy(path, Path(scratch))
            if upload.is_dir():
                sub = f"{artifact_path}/{path.name}" if artifact_path else path.name
                self._client().log_artifacts(self.run_id, str(upload), sub)
            else:
                self._client().log_artifact(self.run_id, str(upload), artifact_path)


class RoundLog(_RunLog):
    """What one optimization round logs, bound to its nested run."""

    def __init__(self, client: Any, run_id: str, index: int, lock: Any = nullcontext,
                 experiment_id: str | None = None) -> None:
        super().__init__()
        self._mlflow_client = client
        self._run_id = run_id
        self.index = index
        self._lock = lock
        self.experiment_id = experiment_id
        self.ended = False
        self.prompt_prefix: str | None = None  # hook: names become <prefix>.<pipeline>.<op> (mlflow.prompt_prefix)

    def end(self, status: str = "FINISHED") -> None:
        """End the round's run now (the `Tracker.round` block then leaves it as it is)."""
        self._client().set_terminated(self.run_id, status)
        self.ended = True

    def _client(self) -> Any:
        return self._mlflow_client

    def register_prompts(self, pipeline: str, instructions: Mapping[str, str], *,
                         commit_message: str | Mapping[str, str], round_index: int) -> dict[str, int]:
        """Register changed prompts as new versions (``commit_message`` one text, or one per op), link every
        version used to this round and every prompt to the experiment, alias them ``round-<i>``; name → version."""
        client = self._client()
        versions: dict[str, int] = {}
        for op, text in sorted(instructions.items()):
            name = prompt_name(f"{self.prompt_prefix}.{pipeline}" if self.prompt_prefix else pipeline, op)
            template = text.strip()
            check_prompt_secret(name, template)
            message = _commit_message(commit_message if isinstance(commit_message, str) else
                                      commit_message.get(op, f"round {round_index}"))
            with self._lock():  # check-then-register: parallel runs reuse an identical latest version
                latest = client.load_prompt(f"prompts:/{name}@latest", allow_missing=True, cache_ttl_seconds=0)
                if latest is None or latest.template != template:
                    parent = str(latest.version) if latest is not None else "none"
                    latest = client.register_prompt(name, template, commit_message=message,
                                                    tags={"round": str(round_index), "parent_version": parent})
                _link_experiment(client, name, self.experiment_id)
            client.link_prompt_version_to_run(self.run_id, latest)
            client.set_prompt_alias(name, f"round-{round_index}", int(latest.version))
            versions[name] = int(latest.version)
        return versions


def _link_experiment(client: Any, name: str, experiment_id: str | None) -> None:
    """Add ``experiment_id`` to a prompt's ``_mlflow_experiment_ids`` tag (the experiment's Prompts tab reads it)."""
    if not experiment_id:
        return
    from mlflow.prompt.constants import PROMPT_EXPERIMENT_IDS_TAG_KEY as KEY

    for thread in threading.enumerate():  # MLflow links a loaded or registered prompt in a thread: let it finish
        if thread.name.startswith("link_prompt_to_experiment_thread"):
            thread.join(timeout=60)

    ids = [i for i in client.get_prompt(name).tags.get(KEY, "").split(",") if i.strip()]
    if experiment_id not in ids:
        client.set_prompt_tag(name, KEY, f",{','.join([*ids, experiment_id])},")


class Tracker(_RunLog):
    """The parent run of one `optimize` experiment, and its rounds as nested runs."""

    def __init__(self, tracking_uri: str | None = None, experiment: str = "memopt",
                 prompt_prefix: str | None = None) -> None:
        super().__init__()
        self.tracking_uri = resolve_tracking_uri(tracking_uri)
        self.experiment = experiment
        self.prompt_prefix = prompt_prefix  # hook: mlflow.prompt_prefix keeps a team's prompt streams apart
        self._experiment_id: str | None = None
        self._mlflow_client: Any = None

    def _client(self) -> Any:
        return self.open()._mlflow_client

    def open(self) -> Tracker:
        """Open (and on first use create) the store; a `ConfigError` names the URI when it cannot be used."""
        if self._mlflow_client is None:
            mlflow = _mlflow()
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
        run = client.create_run(self._experiment_id, run_name=_cut(redact(run_name), _KEY_LIMIT),
                                tags=_entries({**(tags or {}), "memopt.kind": "optimize"}, _TAG_LIMIT))
        self._run_id = run.info.run_id
        self._activate()
        self._log_params(params)
        return self._run_id

    def _activate(self) -> None:
        """Make the run's experiment MLflow's active one: MLflow links a registered prompt to the active experiment
        (in a thread of its own), which must be this one, not the Default experiment."""
        _mlflow().set_experiment(experiment_id=self._experiment_id)

    @property
    def experiment_id(self) -> str | None:
        """The id of the run's experiment once `start` or `resume` attached to a run."""
        return self._experiment_id

    def describe(self, markdown: str) -> None:
        """Set the parent run's description (MLflow's ``mlflow.note.content`` tag, shown on the run page)."""
        self.set_tags({"mlflow.note.content": markdown})

    def set_prompt_aliases(self, versions: Mapping[str, int], alias: str) -> None:
        """Point ``alias`` (``best``) of each prompt at the given version (``{"mem0.extract": 3}``) and link that
        version to the parent run (its Overview lists it under "Registered prompts")."""
        client = self._client()
        for name, version in sorted(versions.items()):
            if version:
                client.set_prompt_alias(name, alias, int(version))
                client.link_prompt_version_to_run(self.run_id, client.get_prompt_version(name, int(version)))

    def log_datasets(self, name: str, splits: Mapping[str, Any]) -> None:
        """Log each split (a pandas DataFrame, one row per conversation) as an MLflow dataset input of the parent
        run, named ``<name>:<split>`` with the split as its context."""
        mlflow = _mlflow()
        from mlflow.entities import DatasetInput, InputTag
        from mlflow.utils.mlflow_tags import MLFLOW_DATASET_CONTEXT

        inputs = []
        for split, frame in splits.items():
            with warnings.catch_warnings():  # MLflow's hints on inferred integer schemas and pandas deprecations
                warnings.simplefilter("ignore")
                dataset = mlflow.data.from_pandas(frame, name=_cut(redact(f"{name}:{split}"), _KEY_LIMIT))
                entity = dataset._to_mlflow_entity()
            inputs.append(DatasetInput(entity, tags=[InputTag(MLFLOW_DATASET_CONTEXT, split)]))
        self._client().log_inputs(self.run_id, datasets=inputs)

    def resume(self, run_id: str) -> None:
        """Reattach to an existing parent run (marked RUNNING again); round runs a killed process left
        RUNNING are marked KILLED."""
        _, run, _ = _reader(run_id, self.tracking_uri)
        self._experiment_id = run.info.experiment_id
        self._run_id = run.info.run_id
        client = self._client()
        self._activate()
        client.update_run(self._run_id, status="RUNNING")
        orphans = client.search_runs([self._experiment_id], filter_string=(
            f"tags.mlflow.parentRunId = '{self._run_id}' and attributes.status = 'RUNNING'"))
        for orphan in orphans:
            client.set_terminated(orphan.info.run_id, "KILLED")

    @contextmanager
    def round(self, index: int, name: str | None = None) -> Iterator[RoundLog]:
        """A nested run ``round-<index>`` (or ``name``) for one round: FINISHED, FAILED if the body raises, KILLED
        if it is interrupted; unless the body ended it itself (`RoundLog.end`)."""
        parent = self.run_id
        client = self._client()
        run = client.create_run(self._experiment_id, run_name=_cut(redact(name or f"round-{index}"), _KEY_LIMIT),
                                tags={"mlflow.parentRunId": parent, "memopt.round": str(index), "memopt.kind": "round"})
        log = RoundLog(client, run.info.run_id, index, self._lock, self._experiment_id)
        log.prompt_prefix = self.prompt_prefix  # hook: mlflow.prompt_prefix
        try:
            yield log
        except BaseException as e:
            if not log.ended:
                with suppress(TrackingError):  # the error in flight is the one to report
                    log.end("FAILED" if isinstance(e, Exception) else "KILLED")
            raise
        if not log.ended:
            log.end("FINISHED")

    def download(self, artifact_path: str, dst: str | Path) -> Path:
        """Download an artifact of the parent run into ``dst`` (see `download_artifacts`)."""
        return download_artifacts(self.run_id, artifact_path, dst, self.tracking_uri)

    def finish(self, status: str = "FINISHED") -> None:
        """End the parent run with ``status`` (FINISHED, FAILED or KILLED)."""
        if status not in _STATUSES:
            raise ValueError(f"run status {status!r}: expected one of {', '.join(_STATUSES)}.")
        self._client().set_terminated(self.run_id, status)

    def ui_hint(self) -> str:
        """How to look at this run in the MLflow UI."""
        where = f"experiment {self.experiment!r}"
        page = ""
        if self._experiment_id is not None:
            page = f"#/experiments/{self._experiment_id}" + (f"/runs/{self._run_id}" if self._run_id else "")
            where += f", run {self._run_id}" if self._run_id else ""
        uri = shown_uri(self.tracking_uri)
        if uri.startswith(("http://", "https://")):
            return f"open {uri.rstrip('/')}/{page} ({where})"
        command = f"{UI_COMMAND} --backend-store-uri {uri} --workers 1"
        if uri.startswith("sqlite:///") and not uri.removeprefix("sqlite:///").startswith("/"):
            command += f" (run in {Path.cwd()})"
        return f"{command}, then open http://127.0.0.1:5000/{page} ({where})"


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

    def log_artifact(self, local_path: str | Path, artifact_path: str | None = None) -> None:
        """Nothing."""

    def set_tags(self, tags: Mapping[str, Any]) -> None:
        """Nothing."""

    def describe(self, markdown: str) -> None:
        """Nothing."""

    def set_prompt_aliases(self, versions: Mapping[str, int], alias: str) -> None:
        """Nothing."""

    def log_datasets(self, name: str, splits: Mapping[str, Any]) -> None:
        """Nothing."""

    def finish(self, status: str = "FINISHED") -> None:
        """Nothing."""

    def ui_hint(self) -> str:
        """Where to look: nowhere."""
        return "not tracked"

"""The MLflow store behind a `memopt.tracking.Tracker`: where it is, reading runs, every call guarded.

- The tracking URI is the argument, else ``$MLFLOW_TRACKING_URI``, else ``sqlite:///mlflow.db``
  (`resolve_tracking_uri`). Readers (`run_info`, `download_artifacts`) never create a store: a missing
  run, or a ``sqlite:`` file that does not exist, is a `ConfigError` naming the run id and the URI.
- A fresh ``sqlite:`` store is created under a file lock next to the database (`store_lock`).

- `GuardedStore` wraps an ``MlflowClient``: a failure of any call is one `TrackingError` naming the
  store (password masked by `shown_uri`), the step (``log text``, ``create run``, ...) and the cause,
  in the database driver's own words when there are some (disk full, read-only, I/O error).
- A ``sqlite:`` database that vanished (moved or deleted during the run) is noticed before the next
  call, which SQLite would otherwise answer by creating a new, empty store at the old path; a call that
  fails because the file moved while it ran says so too (SQLite itself would say "readonly" or "I/O error").
- Once the store is gone or unreachable (or a call outlasted a held signal's grace period,
  `memopt.core.interrupts.deferred`), later calls fail at once with the same error, so the cleanup after an
  error or a Ctrl-C (ending runs, the last checkpoint) costs no more retries.
- `HTTP_DEFAULTS` bound MLflow's HTTP retries (each overridable by its environment variable), and
  `DB_ENGINE_ATTEMPTS` its attempts to open a database store (``mlflow.store.db.utils.MAX_RETRY_COUNT``, ten
  by default: about 100 s of backoff before a PostgreSQL that is down is reported; overridable by
  ``$MEMOPT_MLFLOW_DB_ATTEMPTS``); ``$PGCONNECT_TIMEOUT`` (libpq) bounds each connection attempt.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from memopt.core.errors import ConfigError, MemoptError, TrackingError
from memopt.core.files import file_lock
from memopt.lm.redaction import mask_log_handlers, quoted_uri, redact, remember_uri

__all__ = ["DEFAULT_TRACKING_URI", "URI_ORDER", "HTTP_DEFAULTS", "DB_ENGINE_ATTEMPTS", "shown_uri", "sqlite_path",
           "store_failure", "cause",
           "GuardedStore", "resolve_tracking_uri", "load_mlflow", "check_run_id", "store_lock", "run_info",
           "download_artifacts", "open_run"]

DEFAULT_TRACKING_URI = "sqlite:///mlflow.db"
_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")

URI_ORDER = "--tracking-uri (the tracking_uri argument), else $MLFLOW_TRACKING_URI, else sqlite:///mlflow.db"
# MLflow's defaults retry an unreachable server for minutes (7 retries, backoff factor 2, 120 s timeouts).
HTTP_DEFAULTS = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "2", "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1",
                 "MLFLOW_HTTP_REQUEST_TIMEOUT": "20"}
# MLflow opens a database store with up to 10 attempts, sleeping 0.1 * (2**n - 1) s after the n-th (~100 s in all;
# mlflow/store/db/utils.py, create_sqlalchemy_engine_with_retry); 3 attempts sleep 0.4 s, as HTTP's 2 retries.
DB_ENGINE_ATTEMPTS = 3


def shown_uri(text: str) -> str:
    """``text`` with the password of every URI in it masked (``http://user:***@host``, up to the URI's last ``@``)
    and every secret: `memopt.lm.redaction.redact`, the one rule for messages, logs and what is stored."""
    return redact(text)


def sqlite_path(uri: str) -> Path | None:
    """The database file of a ``sqlite:///`` URI (None for other stores and in-memory databases)."""
    if not uri.startswith("sqlite:///"):
        return None
    path = uri.removeprefix("sqlite:///").split("?", 1)[0]
    return Path(path) if path and path != ":memory:" else None


def cause(error: BaseException) -> str:
    """The first line of an error, passwords and secrets masked, at most 300 characters."""
    text = str(error)
    for sign, said in (("Connection refused", "connection refused"), ("timed out", "timed out"),
                       ("Name or service not known", "unknown host"), ("Max retries exceeded", "no answer")):
        if sign in text:
            return f"the tracking server cannot be reached: {said}, after MLflow's retries"
    database = re.search(r"\((sqlite3\.\w+|psycopg2?\.\w+|pymysql\.\w+)\) ([^\n]+)", text)
    if database:  # SQLAlchemy's first line is often about its session; the driver's says what happened
        return redact(f"{database[1]}: {database[2]}")[:300]
    if isinstance(error, OSError) and error.strerror:
        text = error.strerror + (f": {error.filename}" if error.filename else "")
    else:
        lines = str(error).strip().splitlines()
        text = lines[0] if lines else ""
    return redact(f"{type(error).__name__}: {text}")[:300]


def _gone(error: BaseException) -> bool:
    """Whether an error says the store cannot be reached at all (then later calls fail at once)."""
    text = str(error)
    return any(s in text for s in ("Max retries exceeded", "Failed to establish a new connection",
                                   "unable to open database file", "disk I/O error", "Connection refused", "timed out"))


def store_failure(uri: str, step: str, error: BaseException) -> TrackingError:
    return TrackingError(f"MLflow tracking store {shown_uri(uri)}: {step} failed ({cause(error)}). Fix the store "
                         "(free space, permissions, the server) and run the command again (an optimize run continues "
                         f"with --resume and its run id); the store is chosen by {URI_ORDER}.")


class GuardedStore:
    """An MLflow client whose every call fails as one `TrackingError` (see Faults in the module docstring)."""

    def __init__(self, client: Any, uri: str) -> None:
        self._mlflow_client, self._uri = client, uri
        self._db = sqlite_path(uri)
        self.broken: TrackingError | None = None

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._mlflow_client, name)
        if not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            if self.broken is not None:
                raise self.broken
            step = name.replace("_", " ")
            if self._vanished(step):
                raise self.broken
            try:
                return attr(*args, **kwargs)
            except KeyboardInterrupt:
                from memopt.core.interrupts import cut_short

                # a held signal outlasted the call of a server: it stopped answering, do not wait on it again. A
                # local SQLite file only was slow (a loaded machine): the run's end must still be written to it.
                if cut_short() and self._db is None:
                    self.broken = TrackingError(f"MLflow tracking store {shown_uri(self._uri)}: {step} did not "
                                                "answer before the run was interrupted.")
                raise
            except MemoptError:
                raise
            except Exception as e:
                if self._vanished(step):  # moved during the call: SQLite says "readonly" or "I/O error", not why
                    raise self.broken from None
                error = store_failure(self._uri, step, e)
                if _gone(e):
                    self.broken = error
                raise error from None

        return call

    def _vanished(self, step: str) -> bool:
        """Whether the ``sqlite:`` database file is gone; if so, ``broken`` says so (naming ``step``)."""
        if self._db is None or self._db.is_file():
            return False
        self.broken = TrackingError(
            f"MLflow tracking store {self._db}: the database is gone (moved or deleted during the run); "
            f"{step} was not logged. Put the file back and continue with --resume and the run id.")
        return True


def resolve_tracking_uri(uri: str | None = None) -> str:
    """The tracking URI to use: ``uri``, else ``$MLFLOW_TRACKING_URI``, else ``sqlite:///mlflow.db``; its password
    remembered for masking and percent-encoded where a parser would misread it (`memopt.lm.redaction.quoted_uri`)."""
    chosen = uri or os.environ.get("MLFLOW_TRACKING_URI") or DEFAULT_TRACKING_URI
    remember_uri(chosen)
    return quoted_uri(chosen)


def load_mlflow() -> Any:
    """MLflow, imported on first use, its INFO logs and progress bars silenced and its HTTP retries bounded."""
    import mlflow

    logging.getLogger("mlflow").setLevel(logging.WARNING)
    mask_log_handlers("mlflow")  # MLflow logs through a handler of its own
    logging.getLogger("mlflow.store.db.utils").setLevel(logging.CRITICAL)  # logs each error it raises: raised as ours
    # urllib3 warns "Retrying (...)" at each retry MLflow's HTTP client makes: the failure is raised as ours, once
    logging.getLogger("urllib3.connectionpool").setLevel(logging.ERROR)
    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
    for variable, value in HTTP_DEFAULTS.items():
        os.environ.setdefault(variable, value)
    os.environ.setdefault("PGCONNECT_TIMEOUT", "20")  # libpq: seconds per connection attempt to PostgreSQL
    import mlflow.store.db.utils as db_utils

    attempts = os.environ.get("MEMOPT_MLFLOW_DB_ATTEMPTS", "")
    db_utils.MAX_RETRY_COUNT = int(attempts) if attempts.isdigit() and int(attempts) > 0 else DB_ENGINE_ATTEMPTS
    return mlflow


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


def hold_run(uri: str, run_id: str) -> Any:
    """Hold the lock of an optimize run of a sqlite store for as long as this process runs it (``.close()`` of what
    it returns ends it, and so does the process's end, a SIGKILL included); a `ConfigError` when another process
    holds it: a run is run or resumed by one process at a time. A byte of ``mlflow.db.runs.lock`` per run, so no
    file per run is left behind. Other stores are not locked (their server does not say who runs a run), nor
    systems without fcntl: None."""
    db = sqlite_path(uri)
    try:
        import fcntl
    except ImportError:  # not POSIX
        return None
    if db is None:
        return None
    db.parent.mkdir(parents=True, exist_ok=True)
    handle = open(db.with_name(db.name + ".runs.lock"), "a+b")  # noqa: SIM115 (held until the run ends)
    offset = int(hashlib.sha256(run_id.encode()).hexdigest()[:10], 16)
    try:
        fcntl.lockf(handle, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, offset)
    except OSError:
        handle.close()
        raise ConfigError(f"MLflow run {run_id} of {shown_uri(uri)} is being run by another memopt process on this "
                          "machine; wait for it to end (or stop it: Ctrl-C, SIGTERM), then resume it.") from None
    return handle


def open_run(run_id: str, tracking_uri: str | None) -> tuple[Any, Any, str]:
    """A client for an existing store, the run and the URI; `ConfigError` when either is missing."""
    check_run_id(run_id)
    uri = resolve_tracking_uri(tracking_uri)
    if uri.startswith("sqlite:///"):
        db = Path(uri.removeprefix("sqlite:///").split("?", 1)[0])
        if not db.is_file():
            raise ConfigError(f"MLflow run {run_id!r}: no tracking store at {db.resolve()} (tracking URI {uri}). "
                              f"The store is chosen by {URI_ORDER}; pass the URI the run was logged to.")
    mlflow = load_mlflow()
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
    _, run, _ = open_run(run_id, tracking_uri)
    return {"run_id": run.info.run_id, "run_name": run.info.run_name, "status": run.info.status,
            "experiment_id": run.info.experiment_id, "params": dict(run.data.params),
            "tags": dict(run.data.tags), "metrics": dict(run.data.metrics)}


def download_artifacts(run_id: str, artifact_path: str, dst: str | Path, tracking_uri: str | None = None, *,
                       missing_ok: bool = False) -> Path | None:
    """Download an artifact file or directory of a run into ``dst``; returns its local path (None when it is
    missing and ``missing_ok``)."""
    client, _, uri = open_run(run_id, tracking_uri)
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
